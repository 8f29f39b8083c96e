// `GET /api/events` (SPEC §14): Server-Sent Events. `run` (the record, without input and trace) as
// each run ends, `reload` when a project reloads, `tick` after a scheduler tick. A loopback caller
// gets every project's events; a signed-in user those of the projects they may read; anyone else
// 401. A comment line every 25 s keeps proxies from closing an idle stream.
// Each stream has a send buffer of at most `limits.eventBufferBytes` (SPEC §18): a client that does
// not read is disconnected once its buffer is full, instead of the server holding every event for it.
// Every event has an `id:` (SPEC §20). A client reconnecting with `Last-Event-ID` first gets the runs
// it may read that were recorded since that event (from the hub's last RESUMABLE_RUNS), then live
// events; when that id is unknown or too old, or the missed runs would not fit its send buffer, it
// gets one `reset` event instead (the pages reload their lists on it).
import type { ServerResponse } from 'node:http'
import type { H3Event } from 'h3'
import { httpError } from '../../errors.js'
import { callerMay, callerOf, type Caller } from '../access.js'
import type { AppContext } from '../context.js'
import type { SentEvent } from '../../serve/events.js'
import { DEFAULT_LIMITS } from '../../model/project.js'
import { CHALLENGES } from '../authorization.js'
import { countRejections } from '../rejections.js'

const KEEPALIVE_MS = 25_000
const encoder = new TextEncoder()
/** One encoding of each event, shared by every stream that sends it (50 streams: one JSON.stringify). */
const encoded = new WeakMap<SentEvent, Uint8Array>()

export function eventsHandler(context: AppContext) {
  return async (event: H3Event): Promise<Response> => {
    const caller = await callerOf(context, event)
    if (caller.kind === 'anonymous') {
      countRejections(event, null)
      throw httpError('AUTH_REQUIRED', undefined, { headers: { 'www-authenticate': CHALLENGES.bearer } })
    }
    const headers = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', 'x-accel-buffering': 'no', connection: 'keep-alive' }
    // HEAD: the same headers, and no stream is opened (it would stay subscribed with nobody reading).
    if (event.req.method === 'HEAD') return new Response(null, { status: 200, headers })
    const nodeResponse = event.runtime?.node?.res as ServerResponse | undefined
    const lastEventId = event.req.headers.get('last-event-id') ?? event.url.searchParams.get('lastEventId')
    return new Response(eventStream(context, caller, eventBufferLimit(context), nodeResponse, lastEventId), {
      status: 200,
      headers,
    })
  }
}

/**
 * The stream serves every project, so its buffer is the smallest `limits.eventBufferBytes` of the
 * projects served (the default when none sets one), read when the client connects.
 */
function eventBufferLimit(context: AppContext): number {
  let limit = Infinity
  for (const entry of context.workspace.list()) limit = Math.min(limit, entry.project.settings.limits.eventBufferBytes)
  return Number.isFinite(limit) ? limit : DEFAULT_LIMITS.eventBufferBytes
}

/**
 * The bytes waiting for this client are the stream's queue (chunks h3 has not taken yet, counted by
 * the byte-length strategy) plus what the Node response holds unflushed (`writableLength`); what
 * the kernel's socket buffer took is not ours. An event into an empty buffer always goes, so one
 * event larger than the limit does not cut off a client that reads.
 */
function eventStream(
  context: AppContext,
  caller: Caller,
  limit: number,
  nodeResponse: ServerResponse | undefined,
  lastEventId: string | null,
): ReadableStream<Uint8Array> {
  let stop = () => {}
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        const buffered = () => limit - (controller.desiredSize ?? 0) + (nodeResponse?.writableLength ?? 0)
        const disconnect = () => {
          stop()
          // Destroying the response closes the socket; h3 then cancels this stream.
          if (nodeResponse) nodeResponse.destroy()
          else controller.error(new Error('event buffer full'))
        }
        const send = (bytes: Uint8Array) => {
          const waiting = buffered()
          if (waiting > 0 && waiting + bytes.byteLength > limit) return disconnect()
          try {
            controller.enqueue(bytes)
          } catch {
            stop()
          }
        }
        // The browser retries after 3 s when the stream drops.
        send(encoder.encode('retry: 3000\n: connected\n\n'))
        // Missed runs are sent and live events subscribed in one synchronous step: none is lost or doubled.
        if (lastEventId !== null) for (const bytes of missedEvents(context, caller, lastEventId, limit)) send(bytes)
        const unsubscribe = context.workspace.events.subscribe((serverEvent: SentEvent) => {
          // Ticks name no project; everyone who may read something sees them.
          if (serverEvent.projectId !== null && !callerMay(caller, serverEvent.projectId, 'read')) return
          send(encodedEvent(serverEvent))
        })
        const keepalive = setInterval(() => send(encoder.encode(': keepalive\n\n')), KEEPALIVE_MS)
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
      },
      cancel() {
        stop()
      },
    },
    new ByteLengthQueuingStrategy({ highWaterMark: limit }),
  )
}

/** What a reconnecting client missed: its runs since `lastEventId`, or one `reset` when that cannot be told or sent. */
function missedEvents(context: AppContext, caller: Caller, lastEventId: string, limit: number): Uint8Array[] {
  const hub = context.workspace.events
  const runs = hub.runsSince(lastEventId)?.filter((run) => run.projectId !== null && callerMay(caller, run.projectId, 'read'))
  const missed = runs?.map(encodedEvent) ?? null
  // Runs that would overflow the send buffer would disconnect the client again, for ever: a reset
  // instead (the margin leaves room for the `retry:` line sent before them).
  if (missed && missed.reduce((total, bytes) => total + bytes.byteLength, 0) <= limit - 64) return missed
  return [encoder.encode(`id: ${hub.lastId}\nevent: reset\ndata: {}\n\n`)]
}

function encodedEvent(serverEvent: SentEvent): Uint8Array {
  let bytes = encoded.get(serverEvent)
  if (!bytes) {
    bytes = encoder.encode(`id: ${serverEvent.id}\nevent: ${serverEvent.type}\ndata: ${JSON.stringify(serverEvent.data)}\n\n`)
    encoded.set(serverEvent, bytes)
  }
  return bytes
}
