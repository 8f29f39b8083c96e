// End-to-end: `flowctl test` (SPEC §15) through the real binary, against copies of fixtures/testing
// (call/each sub-flows, an http node with an error branch) and fixtures/example.
import { readFile, writeFile } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import { join } from 'node:path'
import { parse as parseJunit } from 'junit2json'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cleanupTempDirs, copyFixture, EXAMPLE_FLOW_SLUGS, eventually, flowctl, spawnFlowctl } from '../helpers.js'

afterAll(cleanupTempDirs)

const FAILING_TESTS = `flow: order-total
cases:
  - name: wrong total
    input: { body: { items: [{ sku: A, qty: 2, price: 10 }] } }
    mocks:
      shipping: { status: 200, body: { cost: 4.5 } }
    expect:
      body: { total: 21, shipping: 4.5 }
  - name: forgot the mock
    input: { body: { items: [{ sku: A, qty: 1, price: 1 }] } }
    expect:
      status: 200
`

interface JsonReport {
  ok: boolean
  passed: number
  failed: number
  cases: { file: string; name: string; ok: boolean; failures: { field: string; message: string; diff: string[] }[]; notes: string[] }[]
  coverage?: { flow: string; percent: number; nodes: { missed: string[] }; ports: { missed: string[] } }[]
}

async function testingCopy(extraFiles: Record<string, string> = {}): Promise<string> {
  const dir = await copyFixture('testing')
  for (const [name, text] of Object.entries(extraFiles)) await writeFile(join(dir, 'tests', name), text)
  return dir
}

describe('flowctl test', () => {
  it('runs the example project: every case passes and coverage is 100% for every flow', async () => {
    const dir = await copyFixture('example')
    const result = await flowctl(['test', '--coverage'], { cwd: dir })
    expect(result.stderr).toBe('')
    expect(result.exitCode).toBe(0)
    expect(result.stdout).toMatch(/^✓ tests\/create-order\.test\.yaml › a big order is flagged for review and stored \(\d+ ms\)$/m)
    expect(result.stdout).not.toContain('✗')
    const flows = EXAMPLE_FLOW_SLUGS
    for (const flow of flows) {
      expect(result.stdout).toMatch(new RegExp(`^  100% +${flow} `, 'm'))
    }
    expect(result.stdout.match(/^  \d+% /gm)).toHaveLength(flows.length)
    expect(result.stdout).toMatch(/^30 passed, 0 failed \(\d+ ms\)$/m)
  })

  it("seeds each case's fresh store with its documents (any text as _id); expect.documents sees them after the run", async () => {
    const dir = await copyFixture('example')
    await writeFile(
      join(dir, 'tests', 'seeded.test.yaml'),
      `flow: update-ticket
cases:
  - name: closes a seeded ticket
    documents:
      tickets: [{ _id: t-1, title: A, status: open }, { title: B, status: open }]
    input: { path: { id: t-1 }, body: { status: closed } }
    expect:
      body: { matched: 1, modified: 1 }
      documents: { tickets: [{ _id: t-1, title: A, status: closed }, { title: B, status: open }] }
  - name: the next case starts empty again
    input: { path: { id: t-1 }, body: { status: closed } }
    expect:
      status: 404
      documents: { tickets: [] }
  - name: a wrong expectation shows the seeded document as the run left it
    documents: { tickets: [{ _id: t-2, title: C, status: open }] }
    input: { path: { id: t-2 }, body: { status: closed } }
    expect:
      documents: { tickets: [{ status: open }] }
`,
    )
    const result = await flowctl(['test', '--project', dir, '--flow', 'update-ticket', '--json'])
    const report = JSON.parse(result.stdout) as JsonReport
    const seeded = report.cases.filter((c) => c.file === 'tests/seeded.test.yaml')
    expect(seeded.map((c) => [c.name, c.ok])).toEqual([
      ['closes a seeded ticket', true],
      ['the next case starts empty again', true],
      ['a wrong expectation shows the seeded document as the run left it', false],
    ])
    expect(seeded[2]!.failures.map((f) => f.field)).toEqual(['documents'])
    expect(seeded[2]!.failures[0]!.diff).toEqual(['  tickets:', '-   - status: open', '+   - status: closed'])
    expect(result.exitCode).toBe(1)
  })

  it('never sleeps: wait nodes and retry delays return at once, as with fake timers', async () => {
    const dir = await copyFixture('example')
    // With real timers this wait alone would pass the run timeout (30 s) and fail the case as "timeout".
    await writeFile(
      join(dir, 'flows', 'nap.yaml'),
      `name: Nap
nodes:
  - { id: start, type: start, name: Start, method: post, next: nap }
  - { id: nap, type: wait, name: Nap, ms: 600000, next: done }
  - { id: done, type: end, name: Done, body: { ok: true } }
`,
    )
    await writeFile(
      join(dir, 'tests', 'nap.test.yaml'),
      'flow: nap\ncases:\n  - name: a ten-minute wait\n    expect: { status: 200, body: { ok: true }, failedNodeId: null }\n',
    )
    const result = await flowctl(['test', '--project', dir, '--flow', 'nap', '--json'])
    const report = JSON.parse(result.stdout) as JsonReport
    expect(report.cases.map((c) => [c.name, c.ok])).toEqual([['a ten-minute wait', true]])
    expect(result.exitCode).toBe(0)
  })

  it('prints a line per case and a readable diff for a failing one; exit 1', async () => {
    const dir = await testingCopy({ 'failing.test.yaml': FAILING_TESTS })
    const result = await flowctl(['test', '--project', dir])
    expect(result.exitCode).toBe(1)
    expect(result.stdout).toMatch(/^✓ tests\/order-total\.test\.yaml › sums the lines and adds the shipping cost/m)
    expect(result.stdout).toMatch(/^✗ tests\/failing\.test\.yaml › wrong total/m)
    expect(result.stdout).toContain('body.total: expected 21, got 20')
    // The diff: expected (-) against received (+), equal lines as context.
    expect(result.stdout).toContain('      - total: 21\n      + total: 20\n        shipping: 4.5\n')
    expect(result.stdout).toMatch(/^3 passed, 2 failed/m)
    expect(result.stderr).toBe('')
  })

  it('--json gives every case with its failures; --flow narrows to one flow', async () => {
    const dir = await testingCopy({ 'failing.test.yaml': FAILING_TESTS })
    const result = await flowctl(['test', '--project', dir, '--json', '--flow', 'order-total'])
    expect(result.exitCode).toBe(1)
    const report = JSON.parse(result.stdout) as JsonReport
    expect(report).toMatchObject({ ok: false, passed: 2, failed: 2 })
    expect(report.cases.map((c) => c.name)).toEqual([
      'wrong total',
      'forgot the mock',
      'sums the lines and adds the shipping cost',
      'a shipping timeout takes the error branch',
    ])
    const wrong = report.cases[0]!
    expect(wrong.failures).toEqual([
      {
        field: 'body',
        message: 'does not match',
        mismatches: [{ path: 'body.total', message: 'expected 21, got 20' }],
        diff: ['- total: 21', '+ total: 20', '  shipping: 4.5'],
      },
    ])
  })

  describe('an http node without a mock', () => {
    let server: Server
    let requests = 0
    let url = ''
    beforeAll(async () => {
      server = createServer((_req, res) => {
        requests++
        res.setHeader('content-type', 'application/json')
        res.end(JSON.stringify({ cost: 7 }))
      })
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
      const address = server.address()
      url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`
    })
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

    it('fails its case naming the node, and no request reaches the network', async () => {
      const dir = await testingCopy({ 'failing.test.yaml': FAILING_TESTS })
      const env = { FLOWCTL_SECRET_SHIPPING_URL: url }
      // Control: a real run of the same flow with the same settings does reach the local server.
      const run = await flowctl(['run', 'order-total', '--project', dir, '--body', '{"items":[{"sku":"A","qty":1,"price":1}]}', '--json'], { env })
      expect(JSON.parse(run.stdout).body).toEqual({ total: 1, shipping: 7 })
      expect(requests).toBe(1)

      const result = await flowctl(['test', '--project', dir], { env })
      expect(result.exitCode).toBe(1)
      expect(result.stdout).toMatch(/^✗ tests\/failing\.test\.yaml › forgot the mock/m)
      expect(result.stdout).toContain('http node "shipping" has no mock in this case (tests never reach the network)')
      expect(requests).toBe(1)
    })
  })

  it('mocks with { error: timeout } and { error: network } drive the onError branch', async () => {
    const dir = await testingCopy({
      'errors.test.yaml': `flow: order-total
cases:
  - name: network error
    input: { body: { items: [{ sku: A, qty: 1, price: 2 }] } }
    mocks: { shipping: { error: network } }
    expect:
      status: 200
      body: { total: 2, shipping: null, note: "shipping unavailable: HTTP POST request network error (ECONNREFUSED)" }
      ports: [{ nodeId: shipping, port: error }]
`,
    })
    const result = await flowctl(['test', '--project', dir, '--json', '--flow', 'order-total'])
    const report = JSON.parse(result.stdout) as JsonReport
    expect(report.cases.map((c) => [c.name, c.ok])).toEqual([
      ['network error', true],
      ['sums the lines and adds the shipping cost', true],
      ['a shipping timeout takes the error branch', true],
    ])
    expect(result.exitCode).toBe(0)
  })

  it('runs sub-flows for real: the total comes from line-total through each and call', async () => {
    const dir = await testingCopy({
      'sub.test.yaml': `flow: checkout
cases:
  - name: a wrong expected total shows what the sub-flows computed
    input: { body: { items: [{ sku: A, qty: 3, price: 2 }, { sku: B, qty: 2, price: 0.25 }] } }
    mocks: { shipping: { status: 200, body: { cost: 0 } } }
    expect:
      body: { total: 1 }
      documents: { checkouts: [{ total: 1, shipping: 0 }] }
`,
    })
    const result = await flowctl(['test', '--project', dir, '--flow', 'checkout', '--json'])
    const report = JSON.parse(result.stdout) as JsonReport
    const sub = report.cases.find((c) => c.name.startsWith('a wrong expected total'))!
    expect(sub.failures.map((f) => f.diff)).toEqual([
      ['- total: 1', '+ total: 6.5'],
      ['  checkouts:', '-   - total: 1', '+   - total: 6.5', '      shipping: 0'],
    ])
    expect(report.cases.find((c) => c.name.startsWith('stores the checkout'))?.ok).toBe(true)
  })

  it('never prints a secret value: diffs and notes are masked like traces', async () => {
    const dir = await testingCopy({
      'secret.test.yaml': `flow: order-total
cases:
  - name: the service echoes the token
    input: { body: { items: [{ sku: A, qty: 1, price: 1 }] } }
    mocks: { shipping: { body: { cost: dev-ship-token } } }
    expect: { body: { shipping: 1 } }
`,
    })
    const result = await flowctl(['test', '--project', dir, '--flow', 'order-total'])
    expect(result.exitCode).toBe(1)
    expect(result.stdout).toContain('body.shipping: expected 1, got "***"')
    expect(result.stdout + result.stderr).not.toContain('dev-ship-token')
  })

  it('--reporter junit --out writes JUnit XML that a JUnit parser reads', async () => {
    const dir = await testingCopy({ 'failing.test.yaml': FAILING_TESTS })
    const result = await flowctl(['test', '--project', dir, '--reporter', 'junit', '--out', 'reports/junit.xml'], { cwd: dir })
    expect(result.exitCode).toBe(1)
    expect(result.stdout).toContain('JUnit report written to reports/junit.xml')
    const xml = await readFile(join(dir, 'reports', 'junit.xml'), 'utf8')
    const report = (await parseJunit(xml)) as {
      name: string
      tests: number
      failures: number
      testsuite: {
        name: string
        tests: number
        failures: number
        testcase: { name: string; classname: string; time: number; failure?: { message: string; inner?: string }[] }[]
      }[]
    }
    expect(report).toMatchObject({ name: 'Testing', tests: 5, failures: 2 })
    expect(report.testsuite.map((suite) => [suite.name, suite.tests, suite.failures])).toEqual([
      ['tests/checkout.test.yaml', 1, 0],
      ['tests/failing.test.yaml', 2, 2],
      ['tests/order-total.test.yaml', 2, 0],
    ])
    const wrong = report.testsuite[1]!.testcase[0]!
    expect(wrong).toMatchObject({ name: 'wrong total', classname: 'order-total' })
    expect(wrong.time).toBeGreaterThan(0)
    expect(wrong.failure?.[0]?.message).toBe('body: does not match')
    expect(wrong.failure?.[0]?.inner).toContain('- total: 21\n  + total: 20')
    expect(report.testsuite[0]!.testcase[0]!.failure).toBeUndefined()
  })

  it('--coverage names the node and the port no case reached', async () => {
    const dir = await testingCopy()
    const result = await flowctl(['test', '--project', dir, '--coverage'])
    expect(result.exitCode).toBe(0)
    expect(result.stdout).toContain(
      '  86.6%  order-total  nodes 7/8, ports 6/7\n           nodes never reached: free\n           ports never taken: check.true\n',
    )
    expect(result.stdout).toMatch(/^ {2}100% +line-total +nodes 3\/3, ports 2\/2$/m)
    const json = JSON.parse((await flowctl(['test', '--project', dir, '--coverage', '--json'])).stdout) as JsonReport
    expect(json.coverage?.find((c) => c.flow === 'order-total')).toMatchObject({
      percent: 86.6,
      nodes: { missed: ['free'] },
      ports: { missed: ['check.true'] },
    })

    // A case that takes the free-shipping port makes it 100%.
    await writeFile(
      join(dir, 'tests', 'free.test.yaml'),
      'flow: order-total\ncases:\n  - name: free shipping\n    input: { body: { items: [{ sku: A, qty: 1, price: 1 }] } }\n    mocks: { shipping: { body: { cost: 0 } } }\n    expect: { body: { free: true } }\n',
    )
    const full = await flowctl(['test', '--project', dir, '--coverage'])
    expect(full.stdout).toMatch(/^ {2}100% +order-total +nodes 8\/8, ports 7\/7$/m)
  })

  it('a broken test file is reported with file:line:column and exit 2; nothing runs', async () => {
    const dir = await testingCopy({
      'broken.test.yaml': `flow: order-total
cases:
  - name: one
    mocks:
      shiping: { status: 200 }
    expect:
      ports: [{ nodeId: check, port: maybe }]
`,
    })
    const result = await flowctl(['test', '--project', dir])
    expect(result.exitCode).toBe(2)
    expect(result.stdout).toBe('')
    expect(result.stderr).toContain(
      'tests/broken.test.yaml:5:7: there is no http node "shiping" in flow "order-total" or the flows it calls (http nodes: shipping)',
    )
    expect(result.stderr).toContain('tests/broken.test.yaml:7:38: node "check" has no port "maybe" (ports: true, false)')
    expect(result.stderr).toContain('error: 1 test file has errors; no case ran')
    expect(result.stderr).not.toMatch(/\n\s+at /)
  })

  it('a broken flowctl.yaml or flow file also stops the tests with exit 2', async () => {
    const dir = await testingCopy()
    await writeFile(join(dir, 'flows', 'line-total.yaml'), (await readFile(join(dir, 'flows', 'line-total.yaml'), 'utf8')).replace('next: done', 'next: gone'))
    const flowBroken = await flowctl(['test', '--project', dir])
    expect(flowBroken.exitCode).toBe(2)
    expect(flowBroken.stderr).toMatch(/^flows\/line-total\.yaml:\d+:\d+: .*"gone"/m)
    expect(flowBroken.stderr).toContain('error: the flow files have errors; fix them first (see flowctl validate)')
    await writeFile(join(dir, 'flowctl.yaml'), 'projectId: Not Valid\nname: Testing\n')
    const projectBroken = await flowctl(['test', '--project', dir])
    expect(projectBroken.exitCode).toBe(2)
    expect(projectBroken.stderr).toMatch(/^flowctl\.yaml:1:\d+: /m)
  })

  it('--watch runs again after a test file changes', async () => {
    const dir = await testingCopy()
    const child = spawnFlowctl(['test', '--watch', '--flow', 'checkout'], { cwd: dir })
    let stdout = ''
    child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
    try {
      await eventually(async () => stdout.includes('watching'), 20_000)
      expect(stdout).toContain('1 passed, 0 failed')
      const file = join(dir, 'tests', 'checkout.test.yaml')
      await writeFile(file, (await readFile(file, 'utf8')).replace('body: { total: 6 }', 'body: { total: 7 }'))
      await eventually(async () => stdout.includes('0 passed, 1 failed'), 20_000)
      expect(stdout).toContain('change in tests/checkout.test.yaml; running the tests again')
      expect(stdout).toContain('body.total: expected 7, got 6')
    } finally {
      child.kill('SIGINT')
    }
    const ended = await child
    expect(ended.exitCode).toBe(1)
  })
})
