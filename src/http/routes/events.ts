// `GET /api/events` (SPEC §14): Server-Sent Events. `run` (the record, without input and trace) as
// each run ends, `reload` when a project reloads, `tick` after a scheduler tick. A loopback caller
// gets every project's events; a signed-in user those of the projects they may read; anyone else
// 401. A comment line every 25 s keeps proxies from closing an idle stream.
import type { H3Event } from 'h3'
import { callerMay, callerOf } from '../access.js'
import type { AppContext } from '../context.js'
import type { ServerEvent } from '../../serve/events.js'
import { errorResponse, INVALID_TOKEN } from '../respond.js'
import { CHALLENGES } from '../authorization.js'

const KEEPALIVE_MS = 25_000

export function eventsHandler(context: AppContext) {
  return async (event: H3Event): Promise<Response> => {
    const caller = await callerOf(context, event)
    if (caller.kind === 'anonymous') {
      context.rejections.count(null, 401)
      return errorResponse(401, [INVALID_TOKEN], { 'www-authenticate': CHALLENGES.bearer })
    }
    const encoder = new TextEncoder()
    let stop = () => {}
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        const send = (text: string) => {
          try {
            controller.enqueue(encoder.encode(text))
          } catch {
            stop()
          }
        }
        const unsubscribe = context.workspace.events.subscribe((serverEvent: ServerEvent) => {
          // Ticks name no project; everyone who may read something sees them.
          if (serverEvent.projectId !== null && !callerMay(caller, serverEvent.projectId, 'read')) return
          send(`event: ${serverEvent.type}\ndata: ${JSON.stringify(serverEvent.data)}\n\n`)
        })
        const keepalive = setInterval(() => send(': keepalive\n\n'), KEEPALIVE_MS)
        keepalive.unref()
        const onShutdown = () => {
          stop()
          try {
            controller.close()
          } catch {
            // already closed
          }
        }
        context.options.signal?.addEventListener('abort', onShutdown, { once: true })
        const forget = context.workspace.events.addStream(onShutdown)
        stop = () => {
          unsubscribe()
          forget()
          clearInterval(keepalive)
          context.options.signal?.removeEventListener('abort', onShutdown)
        }
        // The browser retries after 3 s when the stream drops.
        send('retry: 3000\n: connected\n\n')
      },
      cancel() {
        stop()
      },
    })
    return new Response(stream, {
      status: 200,
      headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', 'x-accel-buffering': 'no', connection: 'keep-alive' },
    })
  }
}
