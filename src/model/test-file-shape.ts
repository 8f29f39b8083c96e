// The JSON Schema of test files (tests/**/*.test.yaml, SPEC §15). It checks them at load time and is
// published as schema/test.schema.json for editors (`# yaml-language-server: $schema=...`).
import type { JsonSchema } from './project.js'

const TEXT_VALUES = {
  type: 'object',
  additionalProperties: { type: ['string', 'number', 'boolean'] },
}

const MOCK_SCHEMA: JsonSchema = {
  description: 'The answer an http node gets instead of calling the network: { status, headers, body }, or { error: timeout | network }.',
  type: 'object',
  additionalProperties: false,
  properties: {
    status: { type: 'integer', minimum: 200, maximum: 599, default: 200, description: 'The HTTP status of the answer.' },
    headers: { type: 'object', additionalProperties: { type: 'string' }, description: 'Answer headers (names in any case).' },
    body: { description: 'Text is sent as is; anything else as JSON (with content-type application/json).' },
    error: { enum: ['timeout', 'network'], description: 'Fail the request as a timeout or a network error would (drives retry and onError).' },
  },
  if: { required: ['error'] },
  then: { maxProperties: 1 },
}

const PORT_SCHEMA: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['nodeId', 'port'],
  properties: { nodeId: { type: 'string', minLength: 1 }, port: { type: 'string', minLength: 1 } },
}

const CASE_SCHEMA: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'expect'],
  properties: {
    name: { type: 'string', minLength: 1, description: 'Unique within the file; shown in reports.' },
    input: {
      type: 'object',
      additionalProperties: false,
      description: 'The request: validated against the Start node like a Run API request.',
      properties: {
        body: { description: 'The request body.' },
        path: { ...TEXT_VALUES, description: 'Path parameters by name.' },
        query: {
          type: 'object',
          additionalProperties: { type: ['string', 'number', 'boolean', 'array'], items: { type: ['string', 'number', 'boolean'] } },
          description: 'Query parameters by name (a list repeats one).',
        },
        headers: { ...TEXT_VALUES, description: 'Request headers by name (any case).' },
      },
    },
    secrets: { type: 'object', additionalProperties: { type: 'string' }, description: "Secret values for this case, over the project's." },
    mocks: { type: 'object', additionalProperties: MOCK_SCHEMA, description: 'http node id → its answer. Every http node the case reaches needs one.' },
    documents: {
      type: 'object',
      additionalProperties: {
        type: 'array',
        items: {
          type: 'object',
          properties: { _id: { type: 'string', minLength: 1, description: 'Its id (any text, unique in the case); a new id when left out.' } },
        },
      },
      description: 'Collection → documents stored in the fresh store before the run (so get, update and delete find them).',
    },
    // Its form is checked by the loader, with a plainer message than a pattern's.
    now: { type: 'string', description: 'The run start (run.startedAt), ISO 8601, e.g. 2026-01-01T09:00:00Z.' },
    expect: {
      type: 'object',
      additionalProperties: false,
      description: 'What the run must give. Objects match partially (extra fields are fine); lists match item by item.',
      properties: {
        status: {
          type: 'integer',
          minimum: 100,
          maximum: 599,
          description: 'The response status (204 when no End node ran, 500 when a node failed, 400 for invalid input).',
        },
        body: { description: 'The response body, matched partially.' },
        ports: { type: 'array', items: PORT_SCHEMA, description: 'Every If/Switch port and error branch taken, in order.' },
        documents: {
          type: 'object',
          additionalProperties: { type: 'array' },
          description:
            'Collection → the documents the case seeded and the run stored there, in order, as they are after the run (deleted ones left out), each matched partially.',
        },
        failedNodeId: { type: ['string', 'null'], description: 'The node that failed; null (the default) when the run must not fail.' },
      },
    },
  },
}

export const TEST_FILE_SCHEMA: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['flow', 'cases'],
  properties: {
    flow: { type: 'string', minLength: 1, description: 'The slug of the flow under test.' },
    cases: { type: 'array', minItems: 1, items: CASE_SCHEMA },
  },
}

/** The published file: schema/test.schema.json. */
export function buildTestSchema(): JsonSchema {
  // Editors know the date-time format; the loader's ajv runs without formats and checks `now` itself.
  const schema = structuredClone(TEST_FILE_SCHEMA) as { properties: { cases: { items: { properties: { now: JsonSchema } } } } }
  schema.properties.cases.items.properties.now.format = 'date-time'
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    title: 'flowctl test file',
    description: 'Cases for one flow, run by `flowctl test`. See "Testing flows" in the flowctl README.',
    ...schema,
  }
}

export function formatTestSchema(): string {
  return `${JSON.stringify(buildTestSchema(), null, 2)}\n`
}
