// Our own schemas that the loader checks files against, by name, exactly as they are compiled.
// They are precompiled at build time (precompile.ts → dist/generated/) so a load does not pay for ajv's
// code generation; a schema's fingerprint tells whether its generated validator matches it.
import { createHash } from 'node:crypto'
import { nodeKinds } from '../nodes/registry.js'
import { TEST_FILE_SCHEMA } from '../model/test-file-shape.js'
import type { JsonSchema } from '../model/project.js'
import { CONDITION_SCHEMA, FLOW_FILE_SCHEMA, PROJECT_FILE_SCHEMA } from '../model/shapes.js'

/** Definitions every node settings schema may refer to (`$ref: '#/$defs/condition'`). */
export const SHARED_DEFS: Record<string, JsonSchema> = { condition: CONDITION_SCHEMA }

/** Options of the ajv that checks our own schemas. verbose: errors carry the schema and data,
 *  which the messages need (oneOf branches, enum values). */
export const SHAPE_AJV_OPTIONS = { strict: false, allErrors: true, verbose: true } as const

/** Options of the ajv for the user's input schemas, like the Run API's (plus ajv-formats). */
export const INPUT_AJV_OPTIONS = { strict: false, allErrors: true, verbose: true, useDefaults: true } as const

/** The meta-schema input schemas without `$schema` are checked against (ajv's default). */
export const DRAFT07_META_ID = 'http://json-schema.org/draft-07/schema'

/** A schema as compiled: with the shared definitions. */
export function withSharedDefs(schema: JsonSchema): JsonSchema {
  return { ...schema, $defs: { ...SHARED_DEFS, ...(schema.$defs as object | undefined) } }
}

export interface BuiltinSchema {
  /** Export name in the generated module. */
  name: string
  /** The object callers pass to `shapeValidator`. */
  source: JsonSchema
}

/** Every built-in schema, in a fixed order (the generated module follows it). */
export function builtinSchemas(): BuiltinSchema[] {
  return [
    { name: 'flowFile', source: FLOW_FILE_SCHEMA },
    { name: 'projectFile', source: PROJECT_FILE_SCHEMA },
    // tests/**/*.test.yaml (flowctl test): compiling it at run time cost ajv's load and ~40 ms.
    { name: 'testFile', source: TEST_FILE_SCHEMA },
    ...[...nodeKinds.values()].map((kind) => ({ name: `node_${kind.type.replace(/\W/g, '_')}`, source: kind.settingsSchema })),
  ]
}

/** sha1 of one schema's compiled form (with its name): its generated validator is used only when it matches. */
export function schemaFingerprint(name: string, source: JsonSchema): string {
  return createHash('sha1')
    .update(JSON.stringify([name, withSharedDefs(source)]))
    .digest('hex')
}
