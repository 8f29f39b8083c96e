// Hand-built Project objects for the scheduler's pure tests (no YAML, no loader).
import { getNodeKind, parseNodeSettings } from '../../src/nodes/registry.js'
import { DEFAULT_LIMITS, type Flow, type FlowNode, type NotifySettings, type Project, type Schedule } from '../../src/model/project.js'

export interface FlowSpec {
  slug: string
  schedule?: Partial<Schedule> & { cron: string }
  nodes?: FlowNode[]
}

export function node(id: string, type: string, settings: Record<string, unknown> = {}, next: Record<string, string> = {}): FlowNode {
  return { id, type, name: id, refName: id, settings, parsed: parseNodeSettings(getNodeKind(type), settings), next, pos: { line: 1, column: 1 } }
}

export function makeFlow(spec: FlowSpec, defaultTimezone = 'UTC'): Flow {
  const nodes = spec.nodes ?? [node('start', 'start', { method: 'post' })]
  return {
    slug: spec.slug,
    name: spec.slug,
    file: `flows/${spec.slug}.yaml`,
    version: spec.slug,
    nodes,
    nodesById: new Map(nodes.map((n) => [n.id, n])),
    start: null,
    schedule: spec.schedule ? { enabled: true, timezone: defaultTimezone, input: {}, catchUp: 'none', catchUpMinutes: 60, ...spec.schedule } : null,
  }
}

export function makeProject(
  projectId: string,
  flows: FlowSpec[],
  options: { dir?: string; notify?: Partial<NotifySettings>; secrets?: Record<string, string> } = {},
): Project {
  return {
    dir: options.dir ?? '/nonexistent',
    settings: {
      projectId,
      name: projectId,
      flows: 'flows',
      timezone: 'UTC',
      database: 'embedded',
      secrets: '.env',
      limits: { ...DEFAULT_LIMITS },
      history: { keep: 'all' },
      notify: { channels: {}, alerts: [], digests: [], ...options.notify },
      indexes: {},
      trace: 'loopback',
    },
    flows: new Map(flows.map((f) => [f.slug, makeFlow(f)])),
    secrets: new Map(Object.entries(options.secrets ?? {})),
    problems: [],
  }
}

/** A small seeded PRNG (mulberry32) so "random" tests are reproducible. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}
