// Child processes of the benchmarks: free ports, spawning servers, waiting until they answer,
// and killing every child we started when the script ends, even on failure.
import { spawn } from 'node:child_process'
import { createServer } from 'node:net'
import { request } from 'node:http'
import { readdirSync, readFileSync } from 'node:fs'

const children = new Set()

function killChild(child, signal) {
  if (child.exitCode === null && child.signalCode === null) {
    try {
      child.kill(signal)
    } catch {
      /* already gone */
    }
  }
}

// Last resort: a synchronous SIGKILL of whatever is still alive when the process exits.
process.on('exit', () => {
  for (const child of children) killChild(child, 'SIGKILL')
})
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    for (const child of children) killChild(child, 'SIGKILL')
    process.exit(130)
  })
}

export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.unref()
    server.on('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })
}

/** One HTTP request; resolves with { status, body } or rejects on a socket error. */
export function httpRequest(url, { method = 'GET', headers = {}, body, agent, timeoutMs = 5000 } = {}) {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers, agent, timeout: timeoutMs }, (res) => {
      const chunks = []
      res.on('data', (c) => chunks.push(c))
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }))
      res.on('error', reject)
    })
    req.on('timeout', () => req.destroy(new Error(`timeout after ${timeoutMs} ms`)))
    req.on('error', reject)
    if (body !== undefined) req.end(body)
    else req.end()
  })
}

/** Polls `url` until any HTTP answer arrives (or `accept(status)` holds). */
export async function waitForHttp(url, { timeoutMs = 60000, child, accept = () => true, method = 'GET', headers, body } = {}) {
  const deadline = Date.now() + timeoutMs
  let lastError
  while (Date.now() < deadline) {
    if (child && (child.exitCode !== null || child.signalCode !== null)) {
      throw new Error(`server exited (${child.exitCode ?? child.signalCode}) before answering ${url}\n${child.outputTail()}`)
    }
    try {
      const res = await httpRequest(url, { method, headers, body, timeoutMs: 2000 })
      if (accept(res.status)) return res
      lastError = new Error(`status ${res.status}`)
    } catch (error) {
      lastError = error
    }
    await sleep(50)
  }
  throw new Error(`${url} did not answer within ${timeoutMs} ms: ${lastError?.message}\n${child?.outputTail() ?? ''}`)
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** Spawns a long-running child (stdout/stderr kept in a small ring for error messages). */
export function startChild(command, args, { cwd, env, name = command } = {}) {
  const child = spawn(command, args, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  children.add(child)
  let tail = ''
  const keep = (chunk) => {
    tail = (tail + chunk.toString()).slice(-4000)
  }
  child.stdout.on('data', keep)
  child.stderr.on('data', keep)
  child.outputTail = () => `--- last output of ${name} ---\n${tail}`
  child.on('exit', () => children.delete(child))
  return child
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves when the child is gone. */
export function stopChild(child, graceMs = 3000) {
  if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve()
  return new Promise((resolve) => {
    const timer = setTimeout(() => killChild(child, 'SIGKILL'), graceMs)
    child.once('exit', () => {
      clearTimeout(timer)
      children.delete(child)
      resolve()
    })
    killChild(child, 'SIGTERM')
  })
}

export async function stopAll() {
  await Promise.all([...children].map((child) => stopChild(child)))
}

/** Resident set size of a process in MB, from /proc/<pid>/status (VmRSS). */
export function rssMb(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const match = /VmRSS:\s+(\d+)\s+kB/.exec(status)
  if (!match) throw new Error(`no VmRSS for pid ${pid}`)
  return Number(match[1]) / 1024
}

/** CPU time (user + system) a process has used so far, in ms, from /proc/<pid>/stat (100 Hz ticks). */
export function cpuMs(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) * 10
}

/** CPU time (ms) used so far by every process whose command name is `name` (say, the PostgreSQL server's backends). */
export function commandCpuMs(name) {
  let total = 0
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === name) total += cpuMs(entry)
    } catch {
      // the process ended while we looked
    }
  }
  return total
}
