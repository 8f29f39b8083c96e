// SPEC §20 "Live events resume", against the real `flowctl serve`: every /api/events event has an
// `id:`; a client reconnecting with `Last-Event-ID` first gets the runs recorded while it was away
// (at least the last 1,000), then live events; an unknown or too old id gets one `reset` event.
// The `eventsource` package is not installed here, so a small raw SSE client over fetch is used
// (it sends Last-Event-ID as a browser's EventSource does when it reconnects).
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cleanupTempDirs, makeTempDir, startServe, type StartedServe } from '../helpers.js'

interface SseEvent {
  id: string | null
  event: string
  data: string
}

/** A raw SSE client: events in arrival order, `next` waits for one that matches. */
class SseClient {
  readonly events: SseEvent[] = []
  private readonly controller = new AbortController()
  private waiters: (() => void)[] = []
  private done: Promise<void> = Promise.resolve()

  static async open(base: string, lastEventId?: string): Promise<SseClient> {
    const client = new SseClient()
    const headers: Record<string, string> = { accept: 'text/event-stream' }
    if (lastEventId !== undefined) headers['last-event-id'] = lastEventId
    const response = await fetch(`${base}/api/events`, { headers, signal: client.controller.signal })
    expect(response.status).toBe(200)
    client.done = client.read(response.body!)
    return client
  }

  private async read(body: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder()
    let text = ''
    try {
      for await (const chunk of body) {
        text += decoder.decode(chunk, { stream: true })
        let end: number
        while ((end = text.indexOf('\n\n')) !== -1) {
          const block = text.slice(0, end)
          text = text.slice(end + 2)
          const event: SseEvent = { id: null, event: 'message', data: '' }
          let hasData = false
          for (const line of block.split('\n')) {
            if (line.startsWith('id: ')) event.id = line.slice(4)
            else if (line.startsWith('event: ')) event.event = line.slice(7)
            else if (line.startsWith('data: ')) {
              event.data = line.slice(6)
              hasData = true
            }
          }
          if (hasData) this.events.push(event)
          for (const wake of this.waiters.splice(0)) wake()
        }
      }
    } catch {
      // aborted by close()
    }
  }

  /** Waits (up to 10 s) until `count` events of `type` arrived; returns them. */
  async next(type: string, count = 1): Promise<SseEvent[]> {
    const deadline = Date.now() + 10_000
    for (;;) {
      const found = this.events.filter((event) => event.event === type)
      if (found.length >= count) return found
      if (Date.now() > deadline) throw new Error(`waited for ${count} ${type} events; got ${JSON.stringify(this.events.map((e) => e.event))}`)
      await new Promise<void>((wake) => {
        this.waiters.push(wake)
        setTimeout(wake, 200)
      })
    }
  }

  async close(): Promise<void> {
    this.controller.abort()
    await this.done
  }
}

let serve: StartedServe

beforeAll(async () => {
  const dir = await makeTempDir('flowctl-resume-')
  await mkdir(join(dir, 'flows'))
  await writeFile(join(dir, 'flowctl.yaml'), 'projectId: live\nname: Live\nlimits: { runsPerMinutePerIp: 0 }\n')
  await writeFile(
    join(dir, 'flows', 'ping.yaml'),
    'name: Ping\nnodes:\n  - { id: start, type: start, name: Start, method: post, next: done }\n  - { id: done, type: end, name: Done, body: { ok: true } }\n',
  )
  serve = await startServe([dir, '--quiet', '--no-watch'])
}, 60_000)

afterAll(async () => {
  serve?.child.kill('SIGTERM')
  await serve?.child.catch(() => undefined)
  await cleanupTempDirs()
})

async function ping(): Promise<string> {
  const response = await fetch(`${serve.base}/api/run/live/ping`, { method: 'POST' })
  expect(response.status).toBe(200)
  await response.arrayBuffer()
  return response.headers.get('x-run-id')!
}

const runIdOf = (event: SseEvent) => (JSON.parse(event.data) as { id: string }).id

describe('/api/events resumes with Last-Event-ID', () => {
  it('sends the runs made while the client was away, then live events, each with an id', async () => {
    const first = await SseClient.open(serve.base)
    const seen = await ping()
    const [event] = await first.next('run')
    expect(runIdOf(event!)).toBe(seen)
    expect(event!.id).toMatch(/^[0-9a-z]+\.\d+$/)
    await first.close()

    // Two runs while the browser is reconnecting: the old stream never showed them.
    const missed = [await ping(), await ping()]
    const again = await SseClient.open(serve.base, event!.id!)
    const replayed = await again.next('run', 2)
    expect(replayed.map(runIdOf)).toEqual(missed)
    expect(new Set(replayed.map((e) => e.id)).size).toBe(2)
    const live = await ping()
    expect((await again.next('run', 3)).map(runIdOf)).toEqual([...missed, live])
    expect(again.events.filter((e) => e.event === 'reset')).toEqual([])
    await again.close()
  })

  it('an unknown id (another process, or made up) gets one reset, carrying an id to resume from', async () => {
    for (const id of ['zzzz.3', 'nonsense']) {
      const client = await SseClient.open(serve.base, id)
      const [reset] = await client.next('reset')
      expect(reset!.id).toMatch(/^[0-9a-z]+\.\d+$/)
      const live = await ping()
      expect((await client.next('run')).map(runIdOf)).toEqual([live])
      expect(client.events.filter((e) => e.event === 'reset')).toHaveLength(1)
      await client.close()
    }
  })

  it('keeps the last 1,000 runs to resume from; an id older than that gets a reset', async () => {
    const client = await SseClient.open(serve.base)
    await ping()
    const [mark] = await client.next('run')
    await client.close()
    const made: string[] = []
    for (let i = 0; i < 1000; i++) made.push(await ping())
    const full = await SseClient.open(serve.base, mark!.id!)
    expect((await full.next('run', 1000)).map(runIdOf)).toEqual(made)
    await full.close()
    await ping() // now the run after `mark` has left the ring
    const late = await SseClient.open(serve.base, mark!.id!)
    await late.next('reset')
    expect(late.events.filter((e) => e.event === 'run')).toEqual([])
    await late.close()
  }, 120_000)
})
