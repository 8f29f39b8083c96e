// Issue 20: chat markup in flow-controlled alert text (`<!channel>`, `<@U123>`, disguised links)
// reaches a webhook escaped, Slack-style; the file channel keeps the text as it is.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { deliver } from '../../src/schedule/channels.js'
import type { OutboxMessage } from '../../src/model/store.js'
import { projectFromText } from '../flow/project-from-text.js'

const HOSTILE = 'upstream said <!channel> hi <@U123> see <http://evil.example|click here> & more'

let server: Server
let url: string
const received: Record<string, unknown>[] = []
beforeAll(async () => {
  server = createServer((request, response) => {
    let text = ''
    request.on('data', (chunk: Buffer) => (text += chunk))
    request.on('end', () => {
      received.push(JSON.parse(text) as Record<string, unknown>)
      response.end('ok')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`
})
afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()))
})

const message = (channel: string): OutboxMessage => ({
  id: '1',
  projectId: 'text',
  channel,
  payload: { kind: 'alert', text: `⚠️ Text (text): 1 failed run\n• f — run r1 failed at node n: ${HOSTILE}`, failures: [{ error: HOSTILE }] },
  attempts: 0,
  lastError: null,
  createdAt: '2026-11-21T09:00:00.000Z',
})

describe('alert text through channels', () => {
  it('escapes &, < and > in the text a webhook receives', async () => {
    const project = await projectFromText({}, { settings: `notify:\n  channels:\n    chat: { type: webhook, url: "${url}" }\n` })
    await deliver(project, message('chat'))
    const text = String(received.at(-1)?.text)
    expect(text).not.toMatch(/<!channel>|<@U123>|<http/)
    expect(text).toContain('&lt;!channel&gt; hi &lt;@U123&gt; see &lt;http://evil.example|click here&gt; &amp; more')
  })

  it('keeps the text as it is in a file channel', async () => {
    const project = await projectFromText({}, { settings: 'notify:\n  channels:\n    box: { type: file, path: outbox }\n' })
    await deliver(project, message('box'))
    const [file] = await readdir(join(project.dir, 'outbox'))
    expect(JSON.parse(await readFile(join(project.dir, 'outbox', file!), 'utf8')).text).toContain(HOSTILE)
  })
})
