// The hostile corpus of SPEC §18 (bench/hostile-corpus.js runs it; test/e2e/hostile-*.test.ts hold
// the same cases as tests). Each case: a name, and an attack that returns whether the hostile run
// ended as SPEC §18 says (`expected`) and what happened (`text`).

/** flowctl.yaml settings per project (beside projectId and name). */
export const PROJECT_SETTINGS = {
  hostile: 'limits: { runsPerMinutePerIp: 0, bodyLimitBytes: 4000000 }',
  fanout: 'limits: { runsPerMinutePerIp: 0, runTimeoutMs: 1000, bodyLimitBytes: 16777216, httpCallsPerRun: 50 }',
  fair: 'limits: { runsPerMinutePerIp: 0, asyncConcurrency: 4 }',
  // The events buffer of every stream is the smallest among the projects served.
  ev: 'limits: { runsPerMinutePerIp: 0, eventBufferBytes: 16384 }\nhistory: { keep: none }',
}

// Forty leaf calls per item: a 10,000-item each must still be running when its 1 s timeout fires.
const FORTY = Array.from({ length: 40 }, (_, n) => `{ n: ${n} }`).join(', ')
const body = (properties) => `inputs: { body: { type: object, properties: ${properties} } }`

/** A flow whose `calc` node evaluates `expression` over the caller's body. */
const computeFlow = (name, expression) => `name: ${name}
nodes:
  - { id: start, type: start, name: Start, method: post, ${body('{ items: { type: array }, text: { type: string } }')}, next: calc }
  - { id: calc, type: set, name: Calc, values: { value: "{{= ${expression} }}" }, next: done }
  - { id: done, type: end, name: Done, body: { value: "{{ calc.value }}" } }
`

export const FLOWS = {
  hostile: {
    ping: `name: Ping
nodes:
  - { id: start, type: start, name: Start, method: post, ${body('{ items: { type: array } }')}, next: done }
  - { id: done, type: end, name: Done, body: { ok: true, total: "{{= $sum(start.items) }}" } }
`,
    sort: computeFlow('Sort', '$count($sort(start.items))'),
    distinct: computeFlow('Distinct', '$count($distinct(start.items))'),
    replace: computeFlow('Replace', '$length($replace(start.text, \\"a\\", $pad(\\"\\", 5000, \\"b\\")))'),
    ordered: computeFlow('Ordered', 'start.items^($)[0]'),
    doubled: computeFlow('Doubled', '$count($map(start.items, function($v){ [$v, $v] }))'),
    split: computeFlow('Split', '$count($split(start.text, \\"\\"))'),
    numbers: `name: Numbers
nodes:
  - { id: start, type: start, name: Start, method: post, ${body('{ items: { type: array, items: { type: integer } } }')}, next: done }
  - { id: done, type: end, name: Done, body: { ok: true } }
`,
    strict: `name: Strict
nodes:
  - { id: start, type: start, name: Start, method: post, inputs: { body: { type: object, additionalProperties: false, properties: { a: { type: string } } } }, next: done }
  - { id: done, type: end, name: Done, body: { ok: true } }
`,
    collect: `name: Collect
nodes:
  - { id: start, type: start, name: Start, method: post, ${body('{ notes: { type: array, items: { type: string } } }')}, next: done }
  - { id: done, type: end, name: Done, body: { count: "{{= $count(start.notes) }}" } }
`,
  },
  fanout: {
    fan: `name: Fan
nodes:
  - { id: start, type: start, name: Start, method: post, inputs: { body: { type: object } }, next: all }
  - { id: all, type: each, name: All, items: "{{ start.items }}", flow: item, next: done }
  - { id: done, type: end, name: Done, body: { failed: "{{ all.failed }}" } }
`,
    item: `name: Item
nodes:
  - { id: start, type: start, name: Start, method: post, inputs: { body: { type: object } }, next: inner }
  - { id: inner, type: call, name: Inner, flow: leaf, input: { n: "{{ start.n }}" }, next: forty }
  - { id: forty, type: set, name: Forty, values: { list: [${FORTY}] }, next: parts }
  - { id: parts, type: each, name: Parts, items: "{{ forty.list }}", flow: leaf, next: done }
  - { id: done, type: end, name: Done, body: { n: "{{ inner.body.n }}" } }
`,
    leaf: `name: Leaf
nodes:
  - { id: start, type: start, name: Start, method: post, inputs: { body: { type: object } }, next: a }
  - { id: a, type: set, name: A, values: { n: "{{ start.n }}", t: "item {{ start.n }}" }, next: b }
  - { id: b, type: set, name: B, values: { n: "{{ a.n }}", t: "{{ a.t }} b" }, next: done }
  - { id: done, type: end, name: Done, body: { n: "{{ b.n }}", t: "{{ b.t }}" } }
`,
    hammer: `name: Hammer
nodes:
  - { id: start, type: start, name: Start, method: post, inputs: { body: { type: object } }, next: all }
  - { id: all, type: each, name: All, items: "{{ start.items }}", flow: ask, concurrency: 4, next: done }
  - { id: done, type: end, name: Done, body: { failed: "{{ all.failed }}" } }
`,
    ask: `name: Ask
nodes:
  - { id: start, type: start, name: Start, method: post, inputs: { body: { type: object } }, next: call }
  - { id: call, type: http, name: Call, url: "\${secrets.UPSTREAM}/busy", failOnStatus: true, retry: { attempts: 10, delayMs: 0 }, next: done }
  - { id: done, type: end, name: Done, body: { status: "{{ call.status }}" } }
`,
  },
  fair: {
    slow: `name: Slow
nodes:
  - { id: start, type: start, name: Start, method: post, respond: async, next: pause }
  - { id: pause, type: wait, name: Pause, ms: 1500, next: done }
  - { id: done, type: end, name: Done, body: { ok: true } }
`,
    quick: `name: Quick
nodes:
  - { id: start, type: start, name: Start, method: post, respond: async, next: done }
  - { id: done, type: end, name: Done, body: { ok: true } }
`,
  },
  ev: {
    loud: `name: Loud
nodes:
  - { id: start, type: start, name: Start, method: post, ${body('{ msg: { type: string } }')}, next: boom }
  - { id: boom, type: set, name: Boom, values: { x: "{{= $error(start.msg) }}" } }
`,
  },
}

const numbers = (count) => Array.from({ length: count }, (_, i) => (i * 7919) % count)

const post = (url, projectId, slug, payload) =>
  fetch(`${url}/api/run/${projectId}/${slug}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof payload === 'string' ? payload : JSON.stringify(payload),
  })

/** The newest history record of a flow (loopback reads without a token). */
async function latestRecord(url, projectId, slug) {
  const runs = await (await fetch(`${url}/api/runs/${projectId}?flow=${slug}&limit=1`)).json()
  return runs[0] ?? {}
}

/** Posts `payload` to a flow, then reads the run's history record: the outcome SPEC §18 asks for. */
export async function postAndRecord(url, projectId, slug, payload, reason) {
  const response = await post(url, projectId, slug, payload)
  await response.arrayBuffer()
  const record = await latestRecord(url, projectId, slug)
  return {
    expected: response.status === 500 && record.status === 'error' && record.error === reason,
    text: `${response.status}, history ${record.status}: ${record.error}`,
  }
}

const expressionCase = (name, slug, payload, reason) => ({ name, attack: ({ url }) => postAndRecord(url, 'hostile', slug, payload, reason) })

export const CASES = [
  expressionCase('$sort of a 0.9 MB list (130,000 numbers)', 'sort', { items: numbers(130_000) }, 'expression result too large'),
  expressionCase('$sort of 90,000 numbers', 'sort', { items: numbers(90_000) }, 'expression timed out'),
  expressionCase('$distinct over 150,000 numbers', 'distinct', { items: numbers(150_000) }, 'expression result too large'),
  expressionCase('$distinct over 90,000 numbers', 'distinct', { items: numbers(90_000) }, 'expression timed out'),
  expressionCase(
    '$distinct over 20,000 small objects',
    'distinct',
    { items: Array.from({ length: 20_000 }, (_, i) => ({ id: i % 5000, tag: 'x' })) },
    'expression timed out',
  ),
  expressionCase('$replace of a 20 KB text into 100,000,000 characters', 'replace', { text: 'a'.repeat(20_000) }, 'expression result too large'),
  expressionCase('a sort step over 90,000 numbers', 'ordered', { items: numbers(90_000) }, 'expression timed out'),
  expressionCase('$map over 90,000 numbers', 'doubled', { items: numbers(90_000) }, 'expression timed out'),
  expressionCase('$split of 120,000 characters into a list', 'split', { text: 'ab'.repeat(60_000) }, 'expression result too large'),
]

/** A 1 MiB body that breaks its schema: a 400 listing 20 errors, then a "more" line. */
const invalidBodyCase = (name, slug, payload) => ({
  name,
  attack: async ({ url }) => {
    const response = await post(url, 'hostile', slug, payload)
    const answer = await response.json()
    const errors = answer.errors ?? []
    return {
      expected: response.status === 400 && errors.length === 21 && /^… and (\d+ |possibly )?more$/.test(errors[20]),
      text: `${response.status}, ${errors.length} lines, last "${errors.at(-1)}"`,
    }
  },
})

const eachCase = (name, slug, payload, reason) => ({ name, attack: ({ url }) => postAndRecord(url, 'fanout', slug, payload, reason) })

CASES.push(
  invalidBodyCase('1 MiB body of 262,000 items that break their schema', 'numbers', { items: Array.from({ length: 262_000 }, () => 'x') }),
  invalidBodyCase(
    '1 MiB body of 96,000 keys against additionalProperties: false',
    'strict',
    Object.fromEntries(Array.from({ length: 96_000 }, (_, i) => [`k${i}`, 1])),
  ),
  {
    name: '1 MB valid body: stored input cut, replay refused',
    attack: async ({ url }) => {
      const notes = Array.from({ length: 40_000 }, (_, i) => `note ${i} "with quotes"`)
      const response = await post(url, 'hostile', 'collect', { notes })
      const runId = response.headers.get('x-run-id')
      await response.arrayBuffer()
      const record = await (await fetch(`${url}/api/runs/hostile/${runId}`)).json()
      const replay = await fetch(`${url}/api/replay/hostile/${runId}`, { method: 'POST' })
      await replay.arrayBuffer()
      const stored = JSON.stringify(record.input ?? '').length
      return {
        expected: record.input?.cut === true && stored <= 65_536 + 1024 && replay.status === 409,
        text: `stored input ${stored} bytes, replay ${replay.status}`,
      }
    },
  },
  eachCase('each over 200,000 items', 'fan', { items: Array.from({ length: 200_000 }, (_, i) => i) }, 'each: 200000 items exceed limits.eachItems (10000)'),
  eachCase('each over 10,000 items with runTimeoutMs 1000', 'fan', { items: Array.from({ length: 10_000 }, (_, n) => ({ n })) }, 'timeout'),
  {
    name: 'a retrying each of http calls (httpCallsPerRun 50)',
    attack: async ({ url, upstream }) => {
      const before = upstream.seen()
      const outcome = await postAndRecord(
        url,
        'fanout',
        'hammer',
        { items: Array.from({ length: 2000 }, () => ({})) },
        'http calls exceed limits.httpCallsPerRun',
      )
      const seen = upstream.seen() - before
      return { expected: outcome.expected && seen <= 50, text: `${outcome.text}; upstream saw ${seen}` }
    },
  },
  {
    name: '8 queued runs of a slow async flow, then another flow',
    attack: async ({ url }) => {
      for (let i = 0; i < 8; i++) await (await post(url, 'fair', 'slow', {})).arrayBuffer()
      const quick = await (await post(url, 'fair', 'quick', {})).json()
      const result = async (runId) => (await fetch(`${url}/api/result/fair/${runId}`)).json()
      const started = performance.now()
      while ((await result(quick.runId)).status !== 'success' && performance.now() - started < 20_000) await new Promise((r) => setTimeout(r, 50))
      const waited = performance.now() - started
      const slow = await (await fetch(`${url}/api/runs/fair?flow=slow&status=success`)).json()
      // Drain the backlog before the next case.
      while ((await (await fetch(`${url}/api/runs/fair?flow=slow&status=success`)).json()).length < 8 && performance.now() - started < 30_000)
        await new Promise((r) => setTimeout(r, 100))
      return { expected: slow.length < 5, text: `the other flow's run finished after ${waited.toFixed(0)} ms, with ${slow.length} of 8 slow runs done` }
    },
  },
  {
    name: '50 /api/events clients that never read, 3,000 runs',
    attack: async ({ url }) => {
      const { connect } = await import('node:net')
      const { port } = new URL(url)
      const stalled = await Promise.all(
        Array.from(
          { length: 50 },
          () =>
            new Promise((resolve) => {
              const socket = connect({ host: '127.0.0.1', port: Number(port) }, () => {
                socket.write('GET /api/events HTTP/1.1\r\nHost: localhost\r\n\r\n')
                socket.pause()
                resolve(socket)
              })
              socket.whenClosed = new Promise((done) => socket.once('close', done))
              socket.on('error', () => {})
            }),
        ),
      )
      const msg = 'x'.repeat(2500)
      for (let batch = 0; batch < 150; batch++)
        await Promise.all(Array.from({ length: 20 }, () => post(url, 'ev', 'loud', { msg }).then((r) => r.arrayBuffer())))
      for (const socket of stalled) socket.resume()
      const closed = await Promise.race([
        Promise.all(stalled.map((socket) => socket.whenClosed)).then(() => true),
        new Promise((r) => setTimeout(() => r(false), 20_000)),
      ])
      for (const socket of stalled) socket.destroy()
      return { expected: closed, text: closed ? 'all 50 stalled clients disconnected' : 'a stalled client was never disconnected' }
    },
  },
)
