// The hostile corpus of SPEC §18 (bench/hostile-corpus.js runs it; test/e2e/hostile-*.test.ts hold
// the same cases as tests). Each case: a name, and an attack that returns whether the hostile run
// ended as SPEC §18 says (`expected`) and what happened (`text`).

/** flowctl.yaml settings per project (beside projectId and name). */
export const PROJECT_SETTINGS = {
  hostile: 'limits: { runsPerMinutePerIp: 0, bodyLimitBytes: 4000000 }',
}

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
  },
}

const numbers = (count) => Array.from({ length: count }, (_, i) => (i * 7919) % count)

/** Posts `payload` to a flow, then reads the run's history record: the outcome SPEC §18 asks for. */
export async function postAndRecord(url, projectId, slug, payload, reason, { headers = {} } = {}) {
  const response = await fetch(`${url}/api/run/${projectId}/${slug}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof payload === 'string' ? payload : JSON.stringify(payload),
  })
  await response.arrayBuffer()
  const runs = await (await fetch(`${url}/api/runs/${projectId}?flow=${slug}&limit=1`)).json()
  const record = runs[0] ?? {}
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
