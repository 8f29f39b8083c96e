// The published JSON Schema of flow files (schema/flow.schema.json), generated from the node
// registry so editors (`# yaml-language-server: $schema=...`) know every node kind and setting.
import { nodeKinds } from '../nodes/registry.js'
import type { NodeKind } from '../nodes/types.js'
import { SHARED_DEFS } from './builtin-schemas.js'
import type { JsonSchema } from '../model/project.js'
import { FLOW_FILE_SCHEMA } from '../model/shapes.js'

export type { JsonSchema }

function nextSchema(kind: NodeKind): JsonSchema | null {
  if (kind.ports(kind.parseSettings({})).length === 0) return null
  const single: JsonSchema = { type: 'string', minLength: 1, description: 'The id of the node that runs next.' }
  if (kind.singlePort && kind.optionalPorts) {
    const map = { type: 'object', additionalProperties: { type: 'string', minLength: 1 }, description: 'Port name → id of the node that runs next.' }
    return { anyOf: [single, map] }
  }
  if (kind.singlePort) return single
  return {
    type: 'object',
    additionalProperties: { type: 'string', minLength: 1 },
    description: 'Port name → id of the node that runs next. A port with no entry ends the run.',
  }
}

function nodeSchema(kind: NodeKind): JsonSchema {
  const {
    properties,
    required,
    $defs: _defs,
    ...rest
  } = kind.settingsSchema as JsonSchema & {
    properties?: Record<string, JsonSchema>
    required?: string[]
  }
  const next = nextSchema(kind)
  return {
    description: kind.description,
    ...rest,
    type: 'object',
    additionalProperties: false,
    required: ['id', 'type', ...(required ?? [])],
    properties: {
      id: { type: 'string', minLength: 1, description: 'Unique within the flow; used by next.' },
      type: { const: kind.type },
      name: { type: 'string', minLength: 1, description: 'Lower-cased with runs of other characters as _, it is the root of {{ references }} to this node.' },
      ...(next ? { next } : {}),
      ...properties,
    },
  }
}

export function buildFlowSchema(): JsonSchema {
  const kinds = [...nodeKinds.values()]
  const defs: Record<string, JsonSchema> = { ...SHARED_DEFS }
  for (const kind of kinds) {
    Object.assign(defs, (kind.settingsSchema.$defs as Record<string, JsonSchema> | undefined) ?? {})
    defs[`${kind.type}Node`] = nodeSchema(kind)
  }
  defs.node = {
    type: 'object',
    required: ['id', 'type'],
    properties: { type: { enum: kinds.map((k) => k.type) } },
    allOf: kinds.map((kind) => ({
      if: { required: ['type'], properties: { type: { const: kind.type } } },
      then: { $ref: `#/$defs/${kind.type}Node` },
    })),
  }
  const top = FLOW_FILE_SCHEMA as { properties: Record<string, JsonSchema> }
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    title: 'flowctl flow file',
    description: 'A flow: a graph of nodes from a Start node to End nodes. See the flowctl README.',
    type: 'object',
    additionalProperties: false,
    required: ['nodes'],
    properties: {
      ...top.properties,
      nodes: { type: 'array', minItems: 1, items: { $ref: '#/$defs/node' }, description: 'The nodes; exactly one has type start.' },
    },
    $defs: defs,
  }
}

/** The file's text: pretty JSON, 2 spaces, trailing newline. */
export function formatFlowSchema(schema: JsonSchema = buildFlowSchema()): string {
  return `${JSON.stringify(schema, null, 2)}\n`
}
