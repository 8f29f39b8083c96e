// SPEC §21 piece by piece (the end-to-end side is test/e2e/first-day-pages.test.ts): the body prefix
// of a failed http step, reading the failed call back from a trace, enum messages, the amber badge,
// retry and call marks on pictures, nested sub-flow steps, and the reload log of refusing flows.
import { afterAll, describe, expect, it } from 'vitest'
import type { ErrorObject } from 'ajv'
import { bodyPrefix } from '../../src/nodes/http-answer.js'
import { failedHttpOf } from '../../src/flow/failed-http.js'
import { formatErrors } from '../../src/flow/input-errors.js'
import { statusBadge } from '../../src/http/pages/layout.js'
import { renderFlowGraph } from '../../src/http/pages/graph-svg.js'
import { renderSteps } from '../../src/http/pages/run-page.js'
import { refusalChanges, refusingFlows } from '../../src/serve/refusing-flows.js'
import type { Project } from '../../src/model/project.js'
import type { StoredTrace, StoredTraceStep } from '../../src/model/store.js'
import { projectFromText } from '../flow/project-from-text.js'
import { cleanupTempDirs } from '../helpers.js'

afterAll(cleanupTempDirs)

describe('bodyPrefix (the first 2 KiB of a failed answer)', () => {
  it('keeps a short body whole', () => {
    expect(bodyPrefix('{"error":"busy"}')).toBe('{"error":"busy"}')
  })
  it('cuts at 2048 bytes, never inside a character, and says how much was left out', () => {
    const text = `${'a'.repeat(2047)}é${'b'.repeat(100)}` // é is two bytes and would straddle byte 2048
    const cut = bodyPrefix(text)
    expect(cut).toBe(`${'a'.repeat(2047)}… [102 more bytes]`)
    const exact = 'z'.repeat(2048)
    expect(bodyPrefix(exact)).toBe(exact)
    expect(bodyPrefix(`${exact}!`)).toBe(`${exact}… [1 more bytes]`)
  })
})

const step = (nodeId: string, port: string | null, output: unknown, extra: Partial<StoredTraceStep> = {}): StoredTraceStep => ({
  nodeId,
  type: 'http',
  name: nodeId,
  port,
  durationMs: 1,
  output,
  ...extra,
})
const trace = (steps: StoredTraceStep[]): StoredTrace => ({ runId: 'r', durationMs: 2, steps, cut: false })
const http = { method: 'POST', url: 'https://api.test/x?key=***', status: 503, body: 'down' }

describe('failedHttpOf', () => {
  it('reads the failed call of the failed step', () => {
    const found = failedHttpOf(trace([step('start', 'out', {}), step('price', null, { error: 'HTTP POST request answered 503', http })]), 'price')
    expect(found).toEqual({ nodeId: 'price', flow: null, http })
  })
  it('follows a failed call step into its sub-flow', () => {
    const calls = [
      { flow: 'ok-flow', steps: [step('done', null, { status: 200 })] },
      { flow: 'pricing', steps: [step('start', 'out', {}), step('price', null, { error: 'x', http: { ...http, status: null, body: null } })] },
    ]
    const found = failedHttpOf(trace([step('each', null, { error: 'flow "pricing" failed' }, { type: 'each', calls })]), 'each')
    expect(found).toEqual({ nodeId: 'price', flow: 'pricing', http: { ...http, status: null, body: null } })
  })
  it('is null for a run that failed elsewhere, a step cut to a marker, or no trace', () => {
    expect(failedHttpOf(trace([step('set', null, { error: 'boom' })]), 'set')).toBeNull()
    expect(failedHttpOf(trace([step('price', null, '[cut: …]')]), 'price')).toBeNull()
    expect(failedHttpOf(null, 'price')).toBeNull()
    // The failed node must be the last step's.
    expect(failedHttpOf(trace([step('price', null, { error: 'x', http }), step('done', null, {})]), 'price')).toBeNull()
  })
})

describe('input error messages', () => {
  const error = (keyword: string, params: Record<string, unknown>, message: string): ErrorObject =>
    ({ keyword, params, message, instancePath: '/size', schemaPath: '#' }) as ErrorObject
  it('an enum lists its allowed values, as JSON', () => {
    expect(formatErrors('body', [error('enum', { allowedValues: ['s', 'm', 'l'] }, 'must be equal to one of the allowed values')])).toEqual([
      'body/size: must be one of "s", "m", "l"',
    ])
    expect(formatErrors('query', [error('enum', { allowedValues: [1, null, true] }, 'x')])).toEqual(['query/size: must be one of 1, null, true'])
  })
  it('a long enum lists the first 20', () => {
    const values = Array.from({ length: 25 }, (_, i) => `v${i}`)
    const [message] = formatErrors('body', [error('enum', { allowedValues: values }, 'x')])
    expect(message).toMatch(/"v19", …$/)
    expect(message).not.toContain('"v20"')
  })
  it('a const names its value; other keywords keep ajv wording', () => {
    expect(formatErrors('body', [error('const', { allowedValue: 'yes' }, 'must be equal to constant')])).toEqual(['body/size: must be "yes"'])
    expect(formatErrors('body', [error('minimum', { limit: 1 }, 'must be >= 1')])).toEqual(['body/size: must be >= 1'])
  })
})

describe('statusBadge', () => {
  it('an End that answered 4xx or 5xx is amber, not a green success', () => {
    expect(statusBadge('success', 503).value).toBe('<span class="badge warn">answered 503</span>')
    expect(statusBadge('success', 404).value).toBe('<span class="badge warn">answered 404</span>')
    expect(statusBadge('success', 201).value).toBe('<span class="badge ok">success 201</span>')
    expect(statusBadge('error', 500).value).toBe('<span class="badge bad">error 500</span>')
  })
})

describe('pictures and steps', () => {
  let project: Project
  it('a node with retry shows ×N; call and each name and link the flow they run', async () => {
    project = await projectFromText({
      pricing: `name: Pricing
nodes:
  - { id: start, type: start, name: Start, method: post, next: get }
  - { id: get, type: http, name: Get, url: "https://api.test/p", retry: { attempts: 4 }, next: done }
  - { id: done, type: end, name: Done }
`,
      batch: `name: Batch
nodes:
  - { id: start, type: start, name: Start, method: post, next: all }
  - { id: all, type: each, name: All, items: "{{ start.items }}", flow: pricing, next: done }
  - { id: done, type: end, name: Done }
`,
    })
    const pricing = renderFlowGraph(project.flows.get('pricing')!, { title: 't', projectId: 'text' }).value
    expect(pricing).toContain('>×4</text>')
    expect(pricing).toContain('retry: 4 attempts in all')
    const batch = renderFlowGraph(project.flows.get('batch')!, { title: 't', projectId: 'text' }).value
    expect(batch).toContain('<a class="calls" href="/flows/text/pricing">')
    expect(batch).toContain('EACH → pricing')
    // Thumbnails (the dashboard cards) name the flow but do not link it.
    const thumb = renderFlowGraph(project.flows.get('batch')!, { title: 't', thumbnail: true, projectId: 'text' }).value
    expect(thumb).toContain('EACH → pricing')
    expect(thumb).not.toContain('<a class="calls"')
  })

  it('numbers attempts and nests sub-flow steps under their call', () => {
    const steps = [
      step('start', 'out', {}, { type: 'start' }),
      step(
        'all',
        'out',
        { results: [] },
        {
          type: 'each',
          calls: [
            { flow: 'pricing', steps: [step('get', null, { status: 503 }, { attempt: 1 }), step('get', 'out', { status: 200 }, { attempt: 2 })] },
            { flow: 'pricing', steps: [step('get', null, { error: 'HTTP GET request answered 503', http }, { attempt: 1 })] },
          ],
        },
      ),
    ]
    const html = renderSteps(steps, null, 'text').value
    expect(html).toContain('call 1 of 2: flow <a href="/flows/text/pricing">pricing</a>')
    expect(html).toMatch(/data-attempt="1"><div class="step-head">get <span class="badge warn">attempt 1<\/span>[^]*tried again/)
    expect(html).toMatch(/data-attempt="2"><div class="step-head">get <span class="badge info">attempt 2<\/span>/)
    // The second call failed: its summary says so and its last step is marked.
    expect(html).toMatch(/call 2 of 2: [^]*\(1 step, failed\)[^]*<li class="failed" data-step="get" data-attempt="1">/)
  })
})

describe('flows that refuse every request after a reload', () => {
  const flows = {
    orders: `name: Orders
nodes:
  - { id: start, type: start, name: Start, method: post, auth: { type: bearer, token: "\${secrets.ORDERS_TOKEN}" }, next: done }
  - { id: done, type: end, name: Done }
`,
    hooks: `name: Hooks
nodes:
  - { id: start, type: start, name: Start, method: post, auth: { type: basic, username: "\${secrets.HOOK_USER}", password: "\${secrets.HOOK_PASS}" }, next: done }
  - { id: done, type: end, name: Done }
`,
    nightly: `name: Nightly
nodes:
  - { id: start, type: start, name: Start, http: false, auth: { type: bearer, token: "\${secrets.UNSET}" }, next: done }
  - { id: done, type: end, name: Done }
`,
  }

  it('names each HTTP flow whose credential needs an unset or blank secret', async () => {
    const project = await projectFromText(flows, { dotenv: 'ORDERS_TOKEN=t\nHOOK_USER=u\nHOOK_PASS= \n' })
    expect([...refusingFlows(project)]).toEqual([['hooks', ['HOOK_PASS']]])
  })

  it('logs a flow that starts refusing, once, and when it accepts again', async () => {
    const good = await projectFromText(flows, { dotenv: 'ORDERS_TOKEN=t\nHOOK_USER=u\nHOOK_PASS=p\n' })
    const dropped = await projectFromText(flows, { dotenv: 'HOOK_USER=u\nHOOK_PASS=p\n' })
    expect(refusalChanges(good, dropped)).toEqual([
      "text: flow orders refuses every request (401) until secret ORDERS_TOKEN is set: its Start's auth uses it (add it to .env or set FLOWCTL_SECRET_ORDERS_TOKEN)",
    ])
    // The http: false flow has no route to refuse; a second reload with the same gap says nothing new.
    expect(refusalChanges(dropped, dropped)).toEqual([])
    expect(refusalChanges(dropped, good)).toEqual(["text: flow orders accepts requests again: its Start's secrets are set"])
  })
})
