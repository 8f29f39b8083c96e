// defineNodeKind: a kind's settings are typed once, when the project loads, and every run hands that
// value to `execute`; the Start's settings come out with their defaults in one typed value.
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runFlow } from '../../src/flow/engine.js'
import { defineNodeKind } from '../../src/nodes/define.js'
import { DEFAULT_END_STATUS, endNode } from '../../src/nodes/end.js'
import { nodeKinds, registerNodeKind } from '../../src/nodes/registry.js'
import { startNode } from '../../src/nodes/start/kind.js'
import { DEFAULT_API_KEY_HEADER } from '../../src/nodes/start/settings.js'
import { loadProject } from '../../src/project/load.js'
import { openSqliteStore } from '../../src/store/sqlite/index.js'
import type { Store } from '../../src/model/store.js'
import { cleanupTempDirs, makeTempDir } from '../helpers.js'

const parsedSettings: unknown[] = []
const executed: unknown[] = []

/** Counts its parses and hands back what `execute` was given. */
const tallyNode = defineNodeKind({
  type: 'tally',
  description: 'Adds step to a count.',
  singlePort: true,
  settingsSchema: { type: 'object', additionalProperties: false, required: ['step'], properties: { step: { type: 'integer' } } },
  parseSettings(settings) {
    const typed = { step: Number(settings.step), twice: Number(settings.step) * 2 }
    parsedSettings.push(typed)
    return typed
  },
  ports: () => ['out'],
  async execute(_context, settings) {
    executed.push(settings)
    return { output: { twice: settings.twice } }
  },
})

const FLOW = `name: Tally
nodes:
  - { id: start, type: start, next: one }
  - { id: one, type: tally, step: 2, next: two }
  - { id: two, type: tally, step: 5, next: done }
  - { id: done, type: end, body: { a: "{{one.twice}}", b: "{{two.twice}}" } }
`

let store: Store
beforeAll(async () => {
  registerNodeKind(tallyNode)
  store = await openSqliteStore(':memory:')
})
afterAll(async () => {
  await store.close()
  await cleanupTempDirs()
})

describe('defineNodeKind', () => {
  it('parses settings once per node at load; runs hand that same value to execute', async () => {
    const dir = await makeTempDir('flowctl-define-')
    await mkdir(join(dir, 'flows'))
    await writeFile(join(dir, 'flowctl.yaml'), 'projectId: tally\nname: Tally\n')
    await writeFile(join(dir, 'flows', 'tally.yaml'), FLOW)
    const project = await loadProject(dir, { env: {} })
    expect(parsedSettings).toEqual([
      { step: 2, twice: 4 },
      { step: 5, twice: 10 },
    ])
    const flow = project.flows.get('tally')!
    expect(flow.nodesById.get('one')!.parsed).toBe(parsedSettings[0])
    for (let run = 0; run < 3; run++) {
      const outcome = await runFlow({ project, flow, store, trigger: 'cli', method: 'CLI', input: {} })
      expect(outcome).toMatchObject({ kind: 'response', status: DEFAULT_END_STATUS, body: { a: 4, b: 10 } })
    }
    expect(parsedSettings).toHaveLength(2)
    expect(executed).toHaveLength(6)
    expect(executed.every((settings, index) => settings === parsedSettings[index % 2])).toBe(true)
  })

  it('gives every registered kind a parseSettings that takes any object, even {}', () => {
    for (const kind of nodeKinds.values()) expect(() => kind.ports(kind.parseSettings({})), kind.type).not.toThrow()
  })
})

describe('the Start and End settings', () => {
  it('resolve every default into one typed value', () => {
    expect(startNode.parseSettings({})).toEqual({
      method: 'post',
      auth: null,
      inputs: {},
      pathParams: [],
      accept: ['json'],
      http: true,
      respond: 'sync',
      cors: null,
      idempotency: null,
      concurrency: null,
    })
    const full = startNode.parseSettings({
      method: 'get',
      auth: { type: 'apiKey', key: '${secrets.K}' },
      respond: 'async',
      cors: { origins: ['https://a.example'] },
      idempotency: {},
      concurrency: { limit: 2 },
      inputs: { path: { type: 'object', properties: { id: { type: 'string' } } } },
    })
    expect(full).toMatchObject({
      method: 'get',
      auth: { type: 'apiKey', key: '${secrets.K}', header: DEFAULT_API_KEY_HEADER },
      respond: 'async',
      cors: { origins: ['https://a.example'] },
      idempotency: { header: 'Idempotency-Key', headerKey: 'idempotency-key', ttlSeconds: 86_400 },
      concurrency: { limit: 2, onLimit: 'reject' },
      pathParams: ['id'],
    })
    expect(startNode.parseSettings({ auth: { type: 'hmac', scheme: 'stripe', secret: 's' } }).auth).toMatchObject({
      header: 'Stripe-Signature',
      toleranceSeconds: 300,
    })
  })

  it("keep the schema's defaults and the parsed defaults the same constants", () => {
    const startSchema = startNode.settingsSchema as {
      properties: { auth: { oneOf: { properties: { type: { const: string }; header?: { default?: unknown } } }[] } }
    }
    const apiKey = startSchema.properties.auth.oneOf.find((option) => option.properties.type.const === 'apiKey')
    expect(apiKey?.properties.header?.default).toBe(DEFAULT_API_KEY_HEADER)
    expect((endNode.settingsSchema as { properties: { status: { default: unknown } } }).properties.status.default).toBe(DEFAULT_END_STATUS)
    expect(endNode.parseSettings({}).status).toBe(DEFAULT_END_STATUS)
  })
})
