// Hostile clients at the socket level, through a real listening server (listenApp, as `serve`
// uses it): a client holding many connections, and a client that hangs up in the middle of a body.
import { connect, type Socket } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApp } from '../../src/http/app.js'
import { listenApp, type RunningServer } from '../../src/serve/listen.js'
import { Workspace } from '../../src/serve/workspace.js'
import { loadProject } from '../../src/project/load.js'
import { openProjectStore } from '../../src/serve/project-store.js'
import { cleanupTempDirs, copyFixture, eventually, makeTempDir } from '../helpers.js'
import { join } from 'node:path'

const CAP = 20
let server: RunningServer
let workspace: Workspace
const logs: string[] = []
let port = 0

beforeAll(async () => {
  const dir = await copyFixture('example')
  workspace = new Workspace((p) => openProjectStore(p, { env: {} }))
  await workspace.add(await loadProject(dir, { env: {} }))
  const app = createApp(workspace, { trustProxy: false, quiet: false, usersFile: join(await makeTempDir(), 'users.yaml'), log: (line) => logs.push(line) })
  server = await listenApp(app, { host: '127.0.0.1', port: 0, connectionsPerIp: CAP })
  port = Number(new URL(server.url).port)
})

afterAll(async () => {
  await server.shutdown(100, () => {})
  await workspace.close()
  await cleanupTempDirs()
})

function open(localAddress = '127.0.0.1'): Promise<Socket & { closedByServer: boolean }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, localAddress }) as Socket & { closedByServer: boolean }
    socket.closedByServer = false
    socket.once('close', () => (socket.closedByServer = true))
    socket.once('error', () => {})
    socket.once('connect', () => resolve(socket))
    setTimeout(() => reject(new Error('connect timed out')), 5_000).unref()
  })
}

async function get(path: string, localAddress = '127.0.0.1'): Promise<string> {
  const socket = await open(localAddress)
  return new Promise((resolve) => {
    let text = ''
    socket.on('data', (chunk) => (text += chunk.toString()))
    socket.once('close', () => resolve(text))
    socket.write(`GET ${path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`)
  })
}

describe('connection exhaustion', () => {
  it(`one address holds at most ${CAP} sockets; other clients are still served`, async () => {
    const sockets = await Promise.all(Array.from({ length: CAP + 10 }, () => open()))
    await eventually(async () => sockets.filter((s) => s.closedByServer).length === 10)
    // Another address (127.0.0.2 is loopback too on Linux) gets its answer.
    expect(await get('/api/run/shop/order-status/open', '127.0.0.2')).toMatch(/^HTTP\/1.1 200/)
    for (const socket of sockets) socket.destroy()
    // Once the half-open sockets are gone, the first address is served again.
    await eventually(async () => /^HTTP\/1.1 200/.test(await get('/api/run/shop/order-status/open')))
  })
})

describe('a client that aborts mid-body', () => {
  it('is not logged as an error nor answered 500', async () => {
    const socket = await open()
    socket.write('POST /api/run/shop/quote HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"items": [')
    await new Promise((r) => setTimeout(r, 100))
    socket.destroy()
    await eventually(async () => logs.some((line) => line.startsWith('POST /api/run/shop/quote')))
    expect(logs.filter((line) => line.startsWith('error'))).toEqual([])
    expect(logs.find((line) => line.startsWith('POST /api/run/shop/quote'))).toMatch(/ 400 /)
  })
})
