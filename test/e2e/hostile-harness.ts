// SPEC §18's measure, shared by the hostile-caller tests: while one hostile request runs against a
// real `flowctl serve`, a second client sends its own small requests one after another and records
// how long each waited; the RSS of serve and the processes it started is sampled beside it.
import { readdir, readFile } from 'node:fs/promises'
import type { StartedServe } from '../helpers.js'

/** What a well-behaved client saw while the attack ran. */
export interface UnderAttack<T> {
  /** What the attack resolved to. */
  result: T
  /** The slowest answer the other client got, in ms (request sent → body read). */
  worstProbeMs: number
  /** How many answers the other client got while the attack ran. */
  probes: number
  /** Answers to the other client that were not 2xx. */
  failedProbes: number
  /** serve's RSS before the attack, in bytes. */
  idleRss: number
  /** The highest RSS sampled while the attack ran, in bytes. */
  peakRss: number
}

/** SPEC §18: nobody else waits more than this for the event loop. */
export const MAX_PROBE_MS = 100
/** SPEC §18: RSS stays under this much above its idle size. */
export const MAX_RSS_GROWTH = 512 * 1024 * 1024

/**
 * The resident set size of a process and every process it started (serve's expression workers are
 * processes), from /proc (Linux). A process that ended while it was read counts 0.
 */
export async function rssOf(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '')
  const kb = /^VmRSS:\s+(\d+) kB/m.exec(status)?.[1]
  let total = kb === undefined ? 0 : Number(kb) * 1024
  const tasks = await readdir(`/proc/${pid}/task`).catch(() => [] as string[])
  for (const task of tasks) {
    const children = await readFile(`/proc/${pid}/task/${task}/children`, 'utf8').catch(() => '')
    for (const child of children.split(' ').filter(Boolean)) total += await rssOf(Number(child))
  }
  return total
}

/**
 * Runs `attack` while a second client sends `probe` (by default GET /api/status) in a loop, and
 * samples serve's RSS every 20 ms. A few warm-up probes run before the attack starts, so the first
 * measured one is not a cold start.
 */
export async function underAttack<T>(serve: StartedServe, attack: () => Promise<T>, probe?: () => Promise<Response>): Promise<UnderAttack<T>> {
  const pid = serve.child.pid
  if (pid === undefined) throw new Error('serve has no pid')
  const send = probe ?? (() => fetch(`${serve.base}/api/status`))
  for (let i = 0; i < 5; i++) await (await send()).arrayBuffer()
  const idleRss = await rssOf(pid)
  let peakRss = idleRss
  let done = false
  const sampler = (async () => {
    while (!done) {
      peakRss = Math.max(peakRss, await rssOf(pid).catch(() => 0))
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  })()
  let worstProbeMs = 0
  let probes = 0
  let failedProbes = 0
  const prober = (async () => {
    while (!done) {
      const started = performance.now()
      const response = await send()
      await response.arrayBuffer()
      worstProbeMs = Math.max(worstProbeMs, performance.now() - started)
      probes++
      if (!response.ok) failedProbes++
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
  })()
  // Let the prober's first request go out before the attack, so the attack cannot slip in between.
  await new Promise((resolve) => setTimeout(resolve, 10))
  try {
    const result = await attack()
    return { result, worstProbeMs, probes, failedProbes, idleRss, peakRss }
  } finally {
    done = true
    await Promise.all([sampler, prober])
  }
}

/** The newest history record of a flow, through the loopback read API. */
export async function latestRun(serve: StartedServe, projectId: string, slug: string): Promise<Record<string, unknown> | undefined> {
  const response = await fetch(`${serve.base}/api/runs/${projectId}?flow=${slug}&limit=1`)
  const body = (await response.json()) as { runs?: Record<string, unknown>[] } | Record<string, unknown>[]
  const runs = Array.isArray(body) ? body : (body.runs ?? [])
  return runs[0]
}
