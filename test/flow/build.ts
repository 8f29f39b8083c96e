// Builds Flow and Project objects by hand (as the loader would) for engine and node tests.
import { getNodeKind, parseNodeSettings } from '../../src/nodes/registry.js'
import { startNode as startKind } from '../../src/nodes/start/kind.js'
import { referenceName, slugify } from '../../src/project/slug.js'
import { DEFAULT_LIMITS, type Flow, type FlowNode, type HistoryKeep, type Project, type ProjectLimits } from '../../src/model/project.js'

export interface NodeSpec {
  id: string
  type: string
  name?: string
  next?: string | Record<string, string>
  [setting: string]: unknown
}

export function buildNode(spec: NodeSpec): FlowNode {
  const { id, type, name = id, next, ...settings } = spec
  return {
    id,
    type,
    name,
    refName: referenceName(name),
    settings,
    // Typed by the node's kind, as the loader does.
    parsed: parseNodeSettings(getNodeKind(type), settings),
    next: next === undefined ? {} : typeof next === 'string' ? { out: next } : next,
    pos: { line: 1, column: 1 },
  }
}

export function buildFlow(name: string, specs: NodeSpec[]): Flow {
  const nodes = specs.map(buildNode)
  const startNode = nodes.find((node) => node.type === 'start')
  return {
    slug: slugify(name),
    name,
    file: `flows/${slugify(name)}.yaml`,
    version: String(Math.random()),
    nodes,
    nodesById: new Map(nodes.map((node) => [node.id, node])),
    start: startNode ? { ...startKind.parseSettings(startNode.settings), node: startNode } : null,
    schedule: null,
  }
}

export function buildProject(
  flows: Flow[],
  options: { secrets?: Record<string, string>; limits?: Partial<ProjectLimits>; projectId?: string; keep?: HistoryKeep } = {},
): Project {
  return {
    dir: '/nonexistent',
    settings: {
      projectId: options.projectId ?? 'test',
      name: 'Test',
      flows: 'flows',
      timezone: 'UTC',
      database: 'embedded',
      secrets: '.env',
      limits: { ...DEFAULT_LIMITS, ...options.limits },
      history: { keep: options.keep ?? 'all' },
      notify: { channels: {}, alerts: [], digests: [] },
      indexes: {},
      trace: 'loopback',
    },
    flows: new Map(flows.map((flow) => [flow.slug, flow])),
    secrets: new Map(Object.entries(options.secrets ?? {})),
    problems: [],
  }
}
