// Generated bench projects (under bench/.tmp): flowctl.yaml, .env and flow files.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { stringify } from 'yaml'

export const BENCH_TOKEN = 'bench-token-0123456789abcdef'

/**
 * Writes a fresh project folder (the old one, its database included, is removed first).
 * flows: [{ file, flow }] where `flow` is the flow file's object form.
 */
export function writeProject(dir, { projectId = 'bench', name = 'Bench', limits = {}, env = `BENCH_TOKEN=${BENCH_TOKEN}\n`, flows, extra = {} }) {
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(join(dir, 'flows'), { recursive: true })
  const settings = {
    projectId,
    name,
    flows: 'flows',
    timezone: 'UTC',
    database: 'embedded',
    secrets: '.env',
    limits: { runsPerMinutePerIp: 0, runTimeoutMs: 30000, bodyLimitBytes: 1048576, ...limits },
    ...extra,
  }
  writeFileSync(join(dir, 'flowctl.yaml'), stringify(settings))
  writeFileSync(join(dir, '.env'), env)
  for (const { file, flow } of flows) writeFileSync(join(dir, 'flows', file), stringify(flow))
  return dir
}

/** The order flow of the Run API benchmark: Start (bearer, body schema) → If → insert → End 201. */
export function orderFlow(name = 'Create Order') {
  return {
    name,
    description: 'Benchmark: validates an order, branches on qty, stores it.',
    nodes: [
      {
        id: 'start',
        type: 'start',
        name: 'Start',
        method: 'post',
        auth: { type: 'bearer', token: '${secrets.BENCH_TOKEN}' },
        inputs: {
          body: {
            type: 'object',
            required: ['sku', 'qty'],
            properties: { sku: { type: 'string', minLength: 1 }, qty: { type: 'integer', minimum: 1, maximum: 100 } },
          },
        },
        next: 'check',
      },
      { id: 'check', type: 'if', name: 'Big Order', condition: { left: '{{start.qty}}', op: 'gt', right: 10 }, next: { true: 'save', false: 'save' } },
      { id: 'save', type: 'insert', name: 'Result', collection: 'orders', document: { sku: '{{start.sku}}', qty: '{{start.qty}}' }, next: 'done' },
      { id: 'done', type: 'end', name: 'Done', status: 201, body: { id: '{{result.insertedId}}', ok: true } },
    ],
  }
}

/**
 * The order flow with one `validate` warning of its own: its End answers a secret the dotenv file
 * does not define (supplied at run time as FLOWCTL_SECRET_BENCH_NOTE). Every position of the warning
 * must be worked out, as for any file with a problem.
 */
export function orderFlowWithWarning(name) {
  const flow = orderFlow(name)
  flow.nodes[3].body.note = '${secrets.BENCH_NOTE}'
  return flow
}

/** A flow file's text with the insert's sku anchored and the End answering it through an alias. */
export function withAnchors(text) {
  const anchored = text.replace('sku: "{{start.sku}}"', 'sku: &sku "{{start.sku}}"')
  return anchored.replace('      ok: true', '      ok: true\n      sku: *sku')
}

/** The smallest callable flow: Start → End 200, optionally scheduled, with a message in its body. */
export function trivialFlow(name, { cron, method = 'post', message = 'ok' } = {}) {
  const flow = {
    name,
    nodes: [
      { id: 'start', type: 'start', name: 'Start', method, next: 'done' },
      { id: 'done', type: 'end', name: 'Done', status: 200, body: { ok: true, message } },
    ],
  }
  if (cron) flow.schedule = { cron }
  return flow
}

/** A cron expression `m h * * *` that is not due at the current UTC hour (12 hours away). */
export function notDueCron(i, now = new Date()) {
  return `${i % 60} ${(now.getUTCHours() + 12) % 24} * * *`
}

export const flowFile = (i) => `flow-${String(i).padStart(5, '0')}.yaml`
export const flowName = (i) => `Flow ${String(i).padStart(5, '0')}`
export const flowSlug = (i) => `flow-${String(i).padStart(5, '0')}`
