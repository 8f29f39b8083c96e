// The loaded project model: what `loadProject` produces and what the engine, the HTTP server,
// the scheduler and the OpenAPI generator all read. Nothing downstream parses YAML again.

export type JsonSchema = Record<string, unknown>

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete'
export const HTTP_METHODS: readonly HttpMethod[] = ['get', 'post', 'put', 'patch', 'delete']

/** A place in a source file; line and column are 1-based. */
export interface Position {
  line: number
  column: number
}

/** One problem found while loading. `file` is relative to the project folder. */
export interface Problem extends Position {
  file: string
  message: string
  severity: 'error' | 'warning'
}

export type AuthSettings =
  | { type: 'bearer'; token: string }
  | { type: 'basic'; username: string; password: string }
  | { type: 'apiKey'; key: string; header: string }
  | HmacAuth

export type HmacAlgorithm = 'sha256' | 'sha1' | 'sha512'

/** Senders whose signatures carry a timestamp (SPEC §19): their header formats are fixed. */
export type HmacScheme = 'stripe' | 'slack'
export const HMAC_SCHEMES: readonly HmacScheme[] = ['stripe', 'slack']

/**
 * A signed webhook: an HMAC of the raw body bytes, sent in `header` as `<prefix><digest>`. With a
 * `scheme`, the sender's own format instead (Stripe: `Stripe-Signature: t=..,v1=..` over `<t>.<body>`;
 * Slack: `X-Slack-Signature: v0=..` with `X-Slack-Request-Timestamp`, over `v0:<t>:<body>`): the
 * timestamp may be at most `toleranceSeconds` away from now, and each signature is accepted once.
 */
export interface HmacAuth {
  type: 'hmac'
  secret: string
  header: string
  algorithm: HmacAlgorithm
  prefix: string
  encoding: 'hex' | 'base64'
  /** Absent or null: a plain HMAC of the body, no timestamp. */
  scheme?: HmacScheme | null
  /** With a scheme (default 300). */
  toleranceSeconds?: number
}

/** Request body types a Start takes (SPEC §11): JSON, form-encoded fields, or plain text. */
export type BodyType = 'json' | 'form' | 'text'

/** Cross-origin access (SPEC §11): in flowctl.yaml, overridable per Start. */
export interface CorsSettings {
  /** Allowed origins (`https://app.example.com`), or `*` (only without credentials). */
  origins: string[]
  credentials: boolean
  maxAgeSeconds: number
  /** Request headers a browser may send besides those the Start itself declares. */
  headers: string[]
}

/** The Start node's input schemas, as written (JSON Schema objects). */
export interface StartInputs {
  path?: JsonSchema
  query?: JsonSchema
  headers?: JsonSchema
  body?: JsonSchema
}

declare const PARSED: unique symbol

/**
 * A node's settings as its kind typed them (opaque outside the kind). The brand keeps the settings
 * as written (`FlowNode.settings`, a plain object) from being handed to a kind's `ports`, `calledFlow`
 * or `openapi`: those take this, from `node.parsed` or from `kind.parseSettings(...)`.
 */
export interface ParsedSettings {
  readonly [PARSED]: true
}

export interface FlowNode {
  id: string
  type: string
  name: string
  /** `name` lower-cased, runs outside a-z0-9 replaced by `_`: the root used in `{{ ref.x }}`. */
  refName: string
  /** Every setting of the node except id, type, name and next, as written. */
  settings: Record<string, unknown>
  /** The same settings typed by the node's kind (its `parseSettings`, with defaults), parsed once at load. */
  parsed: ParsedSettings
  /** Port name -> target node id. One-port nodes use the port `out`. */
  next: Record<string, string>
  pos: Position
}

export interface Schedule {
  cron: string
  enabled: boolean
  /** IANA zone; the project's timezone when the flow gives none. */
  timezone: string
  input: Record<string, unknown>
  /** What a tick does with due minutes missed since the previous tick (SPEC §16). */
  catchUp: CatchUp
  /** How far back catch-up looks (1-1440, default 60). */
  catchUpMinutes: number
}

export type CatchUp = 'none' | 'latest' | 'all'

/** A Start's `idempotency` (SPEC §12): repeated keys answer the stored response. */
export interface IdempotencySettings {
  /** The header as written (for messages and the document) and lower-cased (for reading). */
  header: string
  headerKey: string
  ttlSeconds: number
}

/** A Start's `concurrency` (SPEC §12): at most `limit` runs of the flow at once. */
export interface ConcurrencySettings {
  limit: number
  onLimit: 'reject' | 'queue'
}

/** A Start's settings, typed and with their defaults (the Start kind's parsed settings). */
export interface StartSettings {
  method: HttpMethod
  /** The credential a caller must send, its header defaulted (the Start kind's for an api key); null: none. */
  auth: AuthSettings | null
  inputs: StartInputs
  /** Names of the path parameters, in order: each is one `/{param}` segment after the slug. */
  pathParams: string[]
  /** Body types taken (default `[json]`). */
  accept: BodyType[]
  /** False: no HTTP route (schedule-only or `flowctl run` only). */
  http: boolean
  /** `async`: the Run API queues the run and answers 202 (SPEC §12). */
  respond: 'sync' | 'async'
  /** The Start's own `cors` fields; they override the project's (`corsFor` merges them). */
  cors: Partial<CorsSettings> | null
  /** Idempotency keys; null when the Start takes none. */
  idempotency: IdempotencySettings | null
  /** The flow's concurrency limit; null: no limit. */
  concurrency: ConcurrencySettings | null
  /** OpenAPI overrides. */
  summary?: string
  operationId?: string
}

/** The flow's entry: its Start node and that node's typed settings. */
export interface StartInfo extends StartSettings {
  node: FlowNode
}

export interface Flow {
  slug: string
  name: string
  description?: string
  /** Path of the flow file relative to the project folder. */
  file: string
  /** Content hash of the file: caches of compiled validators are keyed by it. */
  version: string
  nodes: FlowNode[]
  nodesById: Map<string, FlowNode>
  /** The flow's Start node, when it has one (a flow without one cannot be called over HTTP). */
  start: StartInfo | null
  schedule: Schedule | null
}

export interface ProjectLimits {
  runsPerMinutePerIp: number
  runTimeoutMs: number
  /** A `wait` of more ms than this parks a run that may park instead of holding it (SPEC §22). */
  inlineWaitMs: number
  bodyLimitBytes: number
  historyRuns: number
  /** How long one `{{= }}` expression may evaluate (SPEC §9). */
  expressionMs: number
  /** Bytes of step outputs a stored trace keeps per run; the rest is cut with a marker. */
  traceBytes: number
  /** Async runs this instance executes at once per project (SPEC §12); 0 = it takes none. */
  asyncConcurrency: number
  /** The longest text any expression may build (SPEC §18). */
  textChars: number
  /** The longest array any expression may build (SPEC §18). */
  arrayItems: number
  /** The most items one `each` node may run (SPEC §18). */
  eachItems: number
  /** The most http requests one run may make, retries and sub-flows included (SPEC §18). */
  httpCallsPerRun: number
  /** Bytes of input a history record keeps; a larger input is cut with a marker (SPEC §18). */
  storedInputBytes: number
  /** The send buffer of one `/api/events` client; a client that fills it is disconnected (SPEC §18). */
  eventBufferBytes: number
}

/** Which runs keep their input and trace in history (SPEC §14). */
export type HistoryKeep = 'all' | 'failed' | 'none'

export interface HistorySettings {
  keep: HistoryKeep
}

export type NotifyChannel = { type: 'webhook'; url: string; timeoutMs: number } | { type: 'file'; path: string }

export interface AlertRule {
  flows: string[]
  channel: string
}

export interface DigestRule {
  flows: string[]
  cron: string
  channel: string
  timezone: string
}

export interface NotifySettings {
  channels: Record<string, NotifyChannel>
  alerts: AlertRule[]
  digests: DigestRule[]
}

export interface ProjectSettings {
  projectId: string
  name: string
  /** Flows folder relative to the project folder (default `flows`). */
  flows: string
  timezone: string
  /** `embedded` or a postgres:// URL; may contain `${secrets.X}` (resolve with `resolveSecrets`). */
  database: string
  /**
   * PostgreSQL schema of flowctl's tables (`database: { url, schema }`); default `flowctl`, so they
   * never mix with an application's tables in `public`. Unused by the embedded store.
   */
  databaseSchema?: string
  /** Dotenv file relative to the project folder (default `.env`). */
  secrets: string
  limits: ProjectLimits
  history: HistorySettings
  notify: NotifySettings
  /** Project-wide CORS; unset = no cross-origin access unless a Start sets its own. */
  cors?: CorsSettings
  /** Who gets `?_trace=1` (SPEC §17): loopback requests only (default), anyone, or nobody. */
  trace: TraceAccess
  /** `telemetry.otlp.endpoint` (SPEC §23): where this project's spans go when no OTEL_* endpoint is set. */
  otlpEndpoint?: string
  /** Fields to index per document collection (`indexes` in flowctl.yaml), as written (dotted paths). */
  indexes: Record<string, string[]>
  /** `limits.rateLimitScope`: count per instance (default) or across every instance on the store (SPEC §12). */
  rateLimitScope?: 'instance' | 'cluster'
}

export type TraceAccess = 'loopback' | 'anyone' | 'never'

/** Secret values by name: the dotenv file, overridden by FLOWCTL_SECRET_<NAME> variables. */
export type Secrets = ReadonlyMap<string, string>

export interface Project {
  /** Absolute path of the project folder. */
  dir: string
  settings: ProjectSettings
  /** Flows by slug. */
  flows: Map<string, Flow>
  secrets: Secrets
  /** Every problem of every file (errors and warnings), in file order. */
  problems: Problem[]
}

export const DEFAULT_LIMITS: ProjectLimits = {
  runsPerMinutePerIp: 60,
  runTimeoutMs: 30_000,
  inlineWaitMs: 5_000,
  bodyLimitBytes: 1_048_576,
  historyRuns: 10_000,
  expressionMs: 50,
  traceBytes: 65_536,
  asyncConcurrency: 4,
  textChars: 1_000_000,
  arrayItems: 100_000,
  eachItems: 10_000,
  httpCallsPerRun: 1_000,
  storedInputBytes: 65_536,
  eventBufferBytes: 1_048_576,
}

export const DEFAULT_CORS: CorsSettings = { origins: [], credentials: false, maxAgeSeconds: 600, headers: [] }

/** The CORS settings of one Start: its own fields over the project's; null when neither sets any. */
export function corsFor(project: CorsSettings | undefined, start: Partial<CorsSettings> | null): CorsSettings | null {
  if (!project && !start) return null
  return { ...DEFAULT_CORS, ...project, ...start }
}

/** The CORS settings a flow's Start answers with: its own fields over the project's; null when neither sets any. */
export function startCors(project: Project, start: StartSettings): CorsSettings | null {
  return corsFor(project.settings.cors, start.cors)
}
