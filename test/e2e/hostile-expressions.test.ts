// SPEC §18 against a real `flowctl serve`: ordinary-looking flows whose expressions a caller can make
// expensive (the red team's reproductions). While each hostile request runs, a second client calls a
// small flow over and over: it never waits more than 100 ms, serve's RSS (its expression workers
// included) stays under +512 MB, the hostile run fails with SPEC §18's reason, and history records
// it as an error.
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cleanupTempDirs, makeTempDir, startServe, type StartedServe } from '../helpers.js'
import { latestRun, MAX_PROBE_MS, MAX_RSS_GROWTH, underAttack } from './hostile-harness.js'

/** A flow whose one `set` node evaluates `expression` over the caller's body. */
const computeFlow = (name: string, expression: string) => `name: ${name}
nodes:
  - { id: start, type: start, name: Start, method: post, inputs: { body: { type: object, properties: { items: { type: array }, text: { type: string } } } }, next: calc }
  - { id: calc, type: set, name: Calc, values: { value: "{{= ${expression} }}" }, next: done }
  - { id: done, type: end, name: Done, body: { value: "{{ calc.value }}" } }
`

const FLOWS: Record<string, string> = {
  ping: `name: Ping
nodes:
  - { id: start, type: start, name: Start, method: post, inputs: { body: { type: object, properties: { items: { type: array } } } }, next: done }
  - { id: done, type: end, name: Done, body: { ok: true, total: "{{= $sum(start.items) }}" } }
`,
  sort: computeFlow('Sort', '$count($sort(start.items))'),
  distinct: computeFlow('Distinct', '$count($distinct(start.items))'),
  replace: computeFlow('Replace', '$length($replace(start.text, \\"a\\", $pad(\\"\\", 5000, \\"b\\")))'),
  ordered: computeFlow('Ordered', 'start.items^($)[0]'),
  doubled: computeFlow('Doubled', '$count($map(start.items, function($v){ [$v, $v] }))'),
  split: computeFlow('Split', '$count($split(start.text, \\"\\"))'),
}

/** `count` numbers in a shuffled order (a sort has work to do), as a JSON list of about 7 bytes each. */
const numbers = (count: number) => Array.from({ length: count }, (_, i) => (i * 7919) % count)

// Each case: the flow, the body a hostile caller sends, and the reason its run must fail with.
const CASES: [string, string, unknown, string][] = [
  ['$sort of a 0.9 MB list (130,000 numbers, past limits.arrayItems)', 'sort', { items: numbers(130_000) }, 'expression result too large'],
  ['$sort of 90,000 numbers', 'sort', { items: numbers(90_000) }, 'expression timed out'],
  ['$distinct over 150,000 numbers', 'distinct', { items: numbers(150_000) }, 'expression result too large'],
  ['$distinct over 90,000 numbers', 'distinct', { items: numbers(90_000) }, 'expression timed out'],
  [
    '$distinct over 20,000 small objects',
    'distinct',
    { items: Array.from({ length: 20_000 }, (_, i) => ({ id: i % 5000, tag: 'x' })) },
    'expression timed out',
  ],
  ['$replace that would make 100,000,000 characters of a 20 KB text', 'replace', { text: 'a'.repeat(20_000) }, 'expression result too large'],
  ['a sort step over 90,000 numbers', 'ordered', { items: numbers(90_000) }, 'expression timed out'],
  ['$map over 90,000 numbers', 'doubled', { items: numbers(90_000) }, 'expression timed out'],
  ['$split of a text into more than limits.arrayItems characters', 'split', { text: 'ab'.repeat(60_000) }, 'expression result too large'],
]

let serve: StartedServe

beforeAll(async () => {
  const dir = await makeTempDir('flowctl-hostile-expr-')
  await mkdir(join(dir, 'flows'))
  await writeFile(join(dir, 'flowctl.yaml'), 'projectId: hostile\nname: Hostile\nlimits: { runsPerMinutePerIp: 0, bodyLimitBytes: 4000000 }\n')
  for (const [slug, text] of Object.entries(FLOWS)) await writeFile(join(dir, 'flows', `${slug}.yaml`), text)
  serve = await startServe(['--quiet'], { cwd: dir })
}, 60_000)

afterAll(async () => {
  serve?.child.kill('SIGKILL')
  await serve?.child.catch(() => undefined)
  await cleanupTempDirs()
})

const post = (slug: string, body: unknown) =>
  fetch(`${serve.base}/api/run/hostile/${slug}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })

describe('hostile expressions (SPEC §18)', () => {
  it('the well-behaved flow answers (its expression runs in the server itself)', async () => {
    const response = await post('ping', { items: [1, 2, 3] })
    expect(await response.json()).toEqual({ ok: true, total: 6 })
  })

  for (const [name, slug, body, reason] of CASES) {
    it(`${name}: fails with "${reason}" while another client is served`, async () => {
      const measured = await underAttack(
        serve,
        async () => {
          const response = await post(slug, body)
          return { status: response.status, body: (await response.json()) as Record<string, unknown> }
        },
        () => post('ping', { items: [1, 2, 3] }),
      )
      expect(measured.result.status).toBe(500)
      expect(measured.result.body).toMatchObject({ ok: false, errors: ['node calc failed'], nodeId: 'calc' })
      const record = await latestRun(serve, 'hostile', slug)
      expect(record).toMatchObject({ status: 'error', failedNodeId: 'calc', error: reason })
      expect(measured.failedProbes).toBe(0)
      expect(measured.probes).toBeGreaterThan(0)
      expect(measured.worstProbeMs, `the other client waited ${measured.worstProbeMs.toFixed(0)} ms`).toBeLessThan(MAX_PROBE_MS)
      expect(measured.peakRss - measured.idleRss).toBeLessThan(MAX_RSS_GROWTH)
    })
  }

  it('after every attack, the same flows still answer callers with small lists', async () => {
    const response = await post('sort', { items: [3, 1, 2] })
    expect(await response.json()).toEqual({ value: 3 })
    expect(await (await post('replace', { text: 'xax' })).json()).toEqual({ value: 5002 })
  })
})
