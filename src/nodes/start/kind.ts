// The Start node: its settings schema and the kind that ties together its typed settings
// (settings.ts), their checks (checks.ts) and its OpenAPI request (request-doc.ts).
import { HMAC_SCHEMES } from '../../model/project.js'
import { CORS_SCHEMA } from '../../model/shapes.js'
import { defineNodeKind } from '../define.js'
import { startProblems } from './checks.js'
import { documentedRequest } from './request-doc.js'
import {
  DEFAULT_API_KEY_HEADER,
  DEFAULT_IDEMPOTENCY_HEADER,
  DEFAULT_IDEMPOTENCY_TTL_SECONDS,
  DEFAULT_TOLERANCE_SECONDS,
  parseStartSettings,
} from './settings.js'

const inputSchema = { type: 'object', description: 'A JSON Schema of type object; each property is one input.' }

/** Makes a flow callable over HTTP. Its output is the validated inputs, prepared by the engine. */
export const startNode = defineNodeKind({
  type: 'start',
  description: 'Entry point: HTTP method, body types, authentication, CORS, JSON-Schema inputs, idempotency keys and a concurrency limit.',
  singlePort: true,
  settingsSchema: {
    type: 'object',
    additionalProperties: false,
    properties: {
      description: { type: 'string' },
      method: { enum: ['get', 'post', 'put', 'patch', 'delete'], default: 'post' },
      auth: {
        oneOf: [
          {
            type: 'object',
            additionalProperties: false,
            required: ['type', 'token'],
            properties: { type: { const: 'bearer' }, token: { type: 'string' } },
          },
          {
            type: 'object',
            additionalProperties: false,
            required: ['type', 'username', 'password'],
            properties: { type: { const: 'basic' }, username: { type: 'string' }, password: { type: 'string' } },
          },
          {
            type: 'object',
            additionalProperties: false,
            required: ['type', 'key'],
            properties: { type: { const: 'apiKey' }, key: { type: 'string' }, header: { type: 'string', default: DEFAULT_API_KEY_HEADER } },
          },
          {
            type: 'object',
            additionalProperties: false,
            required: ['type', 'secret'],
            description:
              "A signed webhook: an HMAC of the raw body bytes (GitHub: header X-Hub-Signature-256, prefix sha256=), or with scheme: stripe | slack the sender's timestamped signature, each accepted once.",
            properties: {
              type: { const: 'hmac' },
              secret: { type: 'string' },
              header: { type: 'string', minLength: 1, description: 'The header carrying the signature (required without scheme).' },
              algorithm: { enum: ['sha256', 'sha1', 'sha512'], default: 'sha256' },
              prefix: { type: 'string', default: '', description: 'Text before the signature in the header, like sha256=.' },
              encoding: { enum: ['hex', 'base64'], default: 'hex' },
              scheme: {
                enum: [...HMAC_SCHEMES],
                description:
                  'stripe: Stripe-Signature (t=<unix>,v1=<hex>, signed text <t>.<body>); slack: X-Slack-Signature (v0=<hex>) with X-Slack-Request-Timestamp (signed text v0:<t>:<body>). Header, algorithm, prefix and encoding are then fixed.',
              },
              toleranceSeconds: {
                type: 'integer',
                minimum: 1,
                maximum: 86_400,
                default: DEFAULT_TOLERANCE_SECONDS,
                description: "With scheme: how far the signature's timestamp may be from now, either way; a signature is accepted once within it.",
              },
            },
          },
        ],
      },
      accept: {
        type: 'array',
        minItems: 1,
        uniqueItems: true,
        items: { enum: ['json', 'form', 'text'] },
        default: ['json'],
        description: 'Body types taken: json, form (application/x-www-form-urlencoded), text (text/plain). Others get 415.',
      },
      http: { type: 'boolean', default: true, description: 'false: no HTTP route; the flow runs only on its schedule or with flowctl run.' },
      respond: {
        enum: ['sync', 'async'],
        default: 'sync',
        description:
          'async: the Run API answers 202 with a runId once the run is queued, and runs it in the background (result at /api/result/<projectId>/<runId>).',
      },
      cors: CORS_SCHEMA,
      summary: { type: 'string', minLength: 1, description: "The operation's summary in the OpenAPI document (default: the node's name)." },
      operationId: {
        type: 'string',
        pattern: '^[A-Za-z0-9._-]+$',
        description:
          "The operation's operationId in the OpenAPI document (default: <startNodeId>_<method>; when several operations share an id, each gets _<slug> appended).",
      },
      inputs: {
        type: 'object',
        additionalProperties: false,
        properties: { path: inputSchema, query: inputSchema, headers: inputSchema, body: inputSchema },
      },
      idempotency: {
        type: 'object',
        additionalProperties: false,
        description:
          'A repeated key answers the stored response (Idempotent-Replayed: true) and runs nothing; 409 while the first runs, 422 with a different request.',
        properties: {
          header: {
            type: 'string',
            minLength: 1,
            pattern: "^[A-Za-z0-9!#$%&'*+.^_`|~-]+$",
            default: DEFAULT_IDEMPOTENCY_HEADER,
            description: 'The request header carrying the key.',
          },
          ttlSeconds: {
            type: 'integer',
            minimum: 1,
            maximum: 2_592_000,
            default: DEFAULT_IDEMPOTENCY_TTL_SECONDS,
            description: 'How long a key and its answer are kept (at most 30 days).',
          },
        },
      },
      concurrency: {
        type: 'object',
        additionalProperties: false,
        required: ['limit'],
        description: 'At most limit runs of this flow at once, across every instance on the store; scheduled runs over it are recorded as skipped.',
        properties: {
          limit: { type: 'integer', minimum: 1, maximum: 1000 },
          onLimit: {
            enum: ['reject', 'queue'],
            default: 'reject',
            description: 'reject: 429 "flow busy"; queue: wait for a free slot, at most the run timeout.',
          },
        },
      },
    },
  },
  parseSettings: parseStartSettings,
  ports: () => ['out'],
  noCommonSettings: true,
  literalSettings: ['inputs'],
  entry: { check: startProblems, start: (settings) => settings },
  openapi: { request: documentedRequest },
  async execute(context) {
    return { output: context.inputs ?? {} }
  },
})
