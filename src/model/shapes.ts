// JSON Schemas of the parts of flow files and flowctl.yaml that are not node settings. They check
// files at load time and are also published (through buildFlowSchema) for editors.
import type { JsonSchema } from './project.js'

const CONDITION_OPERATORS = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'contains', 'startsWith', 'endsWith', 'in', 'exists', 'empty'] as const

const CONDITION_REF = { $ref: '#/$defs/condition' }

/** `{ left, op, right }`, `{ all: [...] }`, `{ any: [...] }` or `{ not: ... }`. Chained if/then
 *  rather than oneOf, so a mistake is reported once, in the shape the author meant. */
export const CONDITION_SCHEMA: JsonSchema = {
  description: 'A condition: { left, op, right }, or { all: [...] }, { any: [...] }, { not: condition }.',
  type: 'object',
  additionalProperties: false,
  properties: {
    left: { description: 'A value or a {{ reference }}.' },
    op: { enum: [...CONDITION_OPERATORS] },
    right: { description: 'A value or a {{ reference }} (not needed for exists and empty).' },
    all: { type: 'array', minItems: 1, items: CONDITION_REF, description: 'True when every condition is true.' },
    any: { type: 'array', minItems: 1, items: CONDITION_REF, description: 'True when one condition is true.' },
    not: { ...CONDITION_REF, description: 'True when the condition is false.' },
  },
  if: { required: ['all'] },
  then: { maxProperties: 1 },
  else: {
    if: { required: ['any'] },
    then: { maxProperties: 1 },
    else: { if: { required: ['not'] }, then: { maxProperties: 1 }, else: { required: ['left', 'op'] } },
  },
}

/** `cors` in flowctl.yaml and on a Start node (SPEC §11). */
export const CORS_SCHEMA: JsonSchema = {
  description: 'Cross-origin access for browsers. On a Start node, the fields given replace those of flowctl.yaml.',
  type: 'object',
  additionalProperties: false,
  properties: {
    origins: {
      type: 'array',
      items: { type: 'string', minLength: 1 },
      description: 'Origins allowed to call, like https://app.example.com; "*" allows any origin (only without credentials).',
    },
    credentials: { type: 'boolean', default: false, description: 'Let browsers send cookies and Authorization headers.' },
    maxAgeSeconds: { type: 'integer', minimum: 0, default: 600, description: 'How long a browser may cache a preflight answer.' },
    headers: {
      type: 'array',
      items: { type: 'string', minLength: 1 },
      description: 'Request headers a browser may send, besides Content-Type, the auth header and the declared header inputs.',
    },
  },
}

const SCHEDULE_SCHEMA: JsonSchema = {
  description: 'Runs the flow on a cron schedule.',
  type: 'object',
  additionalProperties: false,
  required: ['cron'],
  properties: {
    cron: {
      type: 'string',
      description:
        '5 fields (minute hour day-of-month month day-of-week; names, ranges, lists, steps, L and <day>#<n>) or @hourly/@daily/@weekly/@monthly/@yearly.',
    },
    enabled: { type: 'boolean', default: true },
    timezone: { type: 'string', description: "IANA timezone; default: the project's timezone." },
    input: { type: 'object', description: 'The starting body of scheduled runs, validated like a request body.' },
    catchUp: {
      enum: ['none', 'latest', 'all'],
      default: 'none',
      description: 'Minutes missed since the previous tick (timer down): none, the newest once (latest), or each once, oldest first (all).',
    },
    catchUpMinutes: { type: 'integer', minimum: 1, maximum: 1440, default: 60, description: 'How far back catch-up looks, in minutes.' },
  },
}

/** The top level of a flow file; node entries are checked one by one against their kind. */
export const FLOW_FILE_SCHEMA: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['nodes'],
  properties: {
    name: { type: 'string', minLength: 1, description: "Source of the flow's slug; default: the file's base name." },
    description: { type: 'string' },
    schedule: SCHEDULE_SCHEMA,
    nodes: { type: 'array', minItems: 1, items: { type: 'object' } },
  },
}

const CHANNEL_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['type'],
  properties: { type: { enum: ['webhook', 'file'] } },
  allOf: [
    {
      if: { required: ['type'], properties: { type: { const: 'webhook' } } },
      then: {
        additionalProperties: false,
        required: ['url'],
        properties: { type: {}, url: { type: 'string', minLength: 1 }, timeoutMs: { type: 'integer', minimum: 1 } },
      },
    },
    {
      if: { required: ['type'], properties: { type: { const: 'file' } } },
      then: { additionalProperties: false, required: ['path'], properties: { type: {}, path: { type: 'string', minLength: 1 } } },
    },
  ],
}

const RULE_FLOWS = {
  type: ['array', 'string'],
  items: { type: 'string', minLength: 1 },
  description: '"*" or flow slugs.',
}

export const PROJECT_FILE_SCHEMA: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['projectId', 'name'],
  properties: {
    projectId: { type: 'string' },
    name: { type: 'string', minLength: 1 },
    flows: { type: 'string', minLength: 1 },
    timezone: { type: 'string' },
    database: {
      description: '"embedded", a postgres:// URL, or { url, schema } (schema: PostgreSQL schema of flowctl\'s tables, default flowctl).',
      type: ['string', 'object'],
      minLength: 1,
      additionalProperties: false,
      required: ['url'],
      properties: {
        url: { type: 'string', minLength: 1 },
        schema: { type: 'string', pattern: '^[a-z_][a-z0-9_]{0,62}$' },
      },
    },
    secrets: { type: 'string', minLength: 1 },
    limits: {
      type: 'object',
      additionalProperties: false,
      properties: {
        runsPerMinutePerIp: { type: 'integer', minimum: 0 },
        runTimeoutMs: { type: 'integer', minimum: 1 },
        bodyLimitBytes: { type: 'integer', minimum: 1 },
        historyRuns: { type: 'integer', minimum: 1 },
        expressionMs: {
          type: 'integer',
          minimum: 1,
          description: 'How long one {{= }} expression may evaluate before the node fails with "expression timed out".',
        },
        traceBytes: { type: 'integer', minimum: 1024, description: 'Stored trace outputs per run, in bytes (default 65536); the rest is cut with a marker.' },
        textChars: {
          type: 'integer',
          minimum: 1,
          description: 'The longest text any {{= }} expression may build (default 1000000); longer fails the node with "expression result too large".',
        },
        arrayItems: {
          type: 'integer',
          minimum: 1,
          description: 'The longest array any {{= }} expression may build (default 100000); longer fails the node with "expression result too large".',
        },
        eachItems: { type: 'integer', minimum: 1, description: 'The most items one each node may run (default 10000); more fails the node.' },
        httpCallsPerRun: {
          type: 'integer',
          minimum: 1,
          description: 'The most http requests one run may make, retries and sub-flows included (default 1000); past it the http node fails.',
        },
        storedInputBytes: {
          type: 'integer',
          minimum: 1024,
          description: 'Bytes of input a history record keeps (default 65536); a larger input is cut with a marker and cannot be replayed.',
        },
        eventBufferBytes: {
          type: 'integer',
          minimum: 1024,
          description: 'The send buffer of one /api/events client (default 1048576); a client that does not read is disconnected when it is full.',
        },
        rateLimitScope: {
          enum: ['instance', 'cluster'],
          default: 'instance',
          description:
            'instance: each serve process allows runsPerMinutePerIp; cluster: every instance on the database together allows it (counted in the store).',
        },
        inlineWaitMs: {
          type: 'integer',
          minimum: 0,
          description:
            'A wait of more ms than this (default 5000) parks a run that may park (respond: async, scheduled) instead of holding it; it goes on when due.',
        },
        asyncConcurrency: {
          type: 'integer',
          minimum: 0,
          maximum: 1000,
          description: 'Async runs (respond: async) this instance executes at once (default 4); 0 = it only queues them.',
        },
      },
    },
    history: {
      type: 'object',
      additionalProperties: false,
      properties: {
        keep: { enum: ['all', 'failed', 'none'], description: 'Which runs keep their input and trace in history (default all).' },
      },
    },
    cors: CORS_SCHEMA,
    telemetry: {
      type: 'object',
      additionalProperties: false,
      properties: {
        otlp: {
          type: 'object',
          additionalProperties: false,
          properties: {
            endpoint: {
              type: 'string',
              minLength: 1,
              description:
                'OTLP/HTTP base URL spans of this project are exported to (spans go to <endpoint>/v1/traces); OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, when set, win.',
            },
          },
        },
      },
    },
    trace: {
      enum: ['loopback', 'anyone', 'never'],
      description: 'Who gets ?_trace=1 answers (default loopback: requests from this machine only); for anyone else the flag is ignored.',
    },
    indexes: {
      type: 'object',
      description: 'Expression indexes on document fields: { <collection>: [<field path>, ...] }.',
      propertyNames: { pattern: '^[A-Za-z0-9_-]+$' },
      additionalProperties: { type: 'array', items: { type: 'string', minLength: 1 } },
    },
    notify: {
      type: 'object',
      additionalProperties: false,
      properties: {
        channels: { type: 'object', additionalProperties: CHANNEL_SCHEMA },
        alerts: {
          type: 'array',
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['flows', 'channel'],
            properties: { flows: RULE_FLOWS, channel: { type: 'string' } },
          },
        },
        digests: {
          type: 'array',
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['flows', 'cron', 'channel'],
            properties: { flows: RULE_FLOWS, cron: { type: 'string' }, channel: { type: 'string' }, timezone: { type: 'string' } },
          },
        },
      },
    },
  },
}
