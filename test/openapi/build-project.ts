// Builds loaded-project objects by hand, so the generator is tested without the loader.
import type { AuthSettings, BodyType, Flow, HttpMethod, JsonSchema, Project, StartInputs } from '../../src/model/project.js'
import { DEFAULT_LIMITS } from '../../src/model/project.js'
import { startNode as startKind } from '../../src/nodes/start/kind.js'
import { buildNode, type NodeSpec } from '../flow/build.js'

// One node builder for every test: the engine tests' (test/flow/build.ts).
export const node = buildNode

export interface FlowSpec {
  slug: string
  name?: string
  description?: string
  method?: HttpMethod
  auth?: AuthSettings | null
  inputs?: StartInputs
  /** Start node id (default `start`) and name (default `Start`). */
  startId?: string
  startName?: string
  /** Where the Start's `out` port leads; nothing means the run ends right after the Start. */
  startNext?: string
  nodes?: NodeSpec[]
  /** No Start node at all. */
  noStart?: boolean
  accept?: BodyType[]
  http?: boolean
  summary?: string
  operationId?: string
}

export function flow(spec: FlowSpec): Flow {
  // The Start's settings as a flow file would write them; its kind types them, as the loader does.
  const written = {
    auth: spec.auth ?? undefined,
    inputs: spec.inputs,
    accept: spec.accept,
    http: spec.http,
    summary: spec.summary,
    operationId: spec.operationId,
  }
  const startNode = node({
    id: spec.startId ?? 'start',
    type: 'start',
    name: spec.startName ?? 'Start',
    method: spec.method ?? 'post',
    ...Object.fromEntries(Object.entries(written).filter(([, value]) => value !== undefined)),
    ...(spec.startNext ? { next: spec.startNext } : {}),
  })
  const others = (spec.nodes ?? []).map(node)
  const nodes = spec.noStart ? others : [startNode, ...others]
  return {
    slug: spec.slug,
    name: spec.name ?? spec.slug,
    ...(spec.description ? { description: spec.description } : {}),
    file: `flows/${spec.slug}.yaml`,
    version: `v-${spec.slug}`,
    nodes,
    nodesById: new Map(nodes.map((n) => [n.id, n])),
    start: spec.noStart ? null : { ...startKind.parseSettings(startNode.settings), node: startNode },
    schedule: null,
  }
}

export function project(flows: Flow[], settings: { projectId?: string; name?: string } = {}): Project {
  return {
    dir: '/tmp/project',
    settings: {
      projectId: settings.projectId ?? 'shop',
      name: settings.name ?? 'Shop API',
      flows: 'flows',
      timezone: 'UTC',
      database: 'embedded',
      secrets: '.env',
      limits: { ...DEFAULT_LIMITS },
      history: { keep: 'all' },
      notify: { channels: {}, alerts: [], digests: [] },
      indexes: {},
      trace: 'loopback',
    },
    flows: new Map(flows.map((f) => [f.slug, f])),
    secrets: new Map(),
    problems: [],
  }
}

/** A flow Start -> End with the given status and schema. */
export function simpleFlow(slug: string, options: Partial<FlowSpec> & { status?: number; schema?: JsonSchema } = {}): Flow {
  const { status, schema, ...rest } = options
  return flow({
    slug,
    startNext: 'done',
    nodes: [{ id: 'done', type: 'end', name: 'Done', ...(status ? { status } : {}), ...(schema ? { schema } : {}) }],
    ...rest,
  })
}
