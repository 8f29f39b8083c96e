// Where the flows of the waits tests send their resume URLs (as a flow would send an email): a
// small HTTP server keeping the last URL per run number `n`. Started before the file's tests and
// closed after them.
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll } from 'vitest'
import type { StartedServe } from '../helpers.js'

export interface ResumeUrlReceiver {
  /** The address a flow posts `{ n, url }` to. */
  url(): string
  /** The resume URL run n sent out, moved to the instance `serve` (a restart listens on a new port). */
  resumeUrlOf(n: number, serve: StartedServe): string
}

export function resumeUrlReceiver(): ResumeUrlReceiver {
  const received = new Map<number, string>()
  let address = ''
  const server = createServer((request, response) => {
    let text = ''
    request.on('data', (chunk: Buffer) => (text += chunk.toString()))
    request.on('end', () => {
      const { n, url } = JSON.parse(text) as { n: number; url: string }
      received.set(n, url)
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}')
    })
  })
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    address = `http://127.0.0.1:${(server.address() as AddressInfo).port}/resume-urls`
  })
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))
  return {
    url: () => address,
    resumeUrlOf(n, serve) {
      const url = new URL(received.get(n)!)
      return `${serve.base}${url.pathname}${url.search}`
    },
  }
}
