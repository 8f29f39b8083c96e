// What a node kind is: its settings schema, typed settings, ports, load-time checks and OpenAPI part
// beside `execute`. Adding a kind is adding a file in src/nodes/ (written with `defineNodeKind`,
// define.ts) and a line in registry.ts (see src/nodes/README.md).
// The loader, the engine and the OpenAPI generator ask the kind; none of them tests a node's type.
import type { CorsSettings, FlowNode, JsonSchema, ParsedSettings, Project, StartSettings } from '../model/project.js'
import type { ResolvedPart } from '../language/resolve.js'
import type { NodeFetch, RunSleep } from '../model/run.js'
import type { DocumentsPort } from '../model/store.js'
import type { WaitKind } from '../model/waits.js'

export interface NodeContext {
  node: FlowNode
  project: Project
  /** Stored documents (SPEC §10) as the run sees them: its inserts commit with its record. */
  documents: DocumentsPort
  /** Replaces `{{ refs }}` and `${secrets.X}` in a setting's value (deeply, for objects and arrays). */
  resolve(value: unknown): unknown
  /** The same, piece by piece: literal text (secrets included) and the values placed in it. */
  resolveParts(text: string): ResolvedPart[]
  /** Aborted when the run times out or the server shuts down. */
  signal: AbortSignal
  /** How http nodes send requests: the global fetch, or the run's own (mocks in `flowctl test`). */
  fetch: NodeFetch
  /** How the run waits (`wait` nodes): real timers, or instant under `flowctl test`. */
  sleep: RunSleep
  run: { id: string; startedAt: string; trigger: string; scheduledFor: string | null; resumeUrl?: string | null }
  /** Whether this run may park (SPEC §22): its caller has its answer already, and this is not a called flow. */
  canPark: boolean
  /** Parks the run at this node: throws the signal the engine commits the run on, or the reason this run cannot park. */
  park(kind: WaitKind, dueAt: number): never
  /** The validated inputs; set for the Start node only. */
  inputs?: Record<string, unknown>
  /** Runs another flow of the project through the same engine (call and each nodes). An input its
   *  Start refuses, or its failing, comes back as `{ failed: reason }`; throws when the call itself is
   *  wrong (unknown flow, nesting too deep) or the run is stopped. */
  callFlow(slug: string, body: unknown): Promise<SubFlowResult>
}

/** A failure that trying again cannot mend (a list past its limit): the engine does not retry the node. */
export class FinalFailure extends Error {
  override name = 'FinalFailure'
}

/**
 * The run as a whole spent a budget (`limits.httpCallsPerRun`): not retried, and a sub-flow failing
 * with it fails its `call`/`each` node with the same reason (the run, not the item, asked for too much).
 */
export class RunBudgetSpent extends FinalFailure {
  override name = 'RunBudgetSpent'
}

/**
 * A failure that carries facts beside its reason: the engine puts `details` next to `error` in the
 * failed step's output (an http node's request and answer, SPEC §21), masked like every output.
 */
export class StepFailure extends Error {
  override name = 'StepFailure'
  constructor(
    message: string,
    readonly details: Record<string, unknown>,
    options?: ErrorOptions,
  ) {
    super(message, options)
  }
}

/** A sub-flow's answer; `failed` is the reason when its input was refused (400) or it failed (500). */
export type SubFlowResult = { failed: null; status: number; body: unknown } | { failed: string; status: 400 | 500; body: { error: string } }

export interface NodeResult {
  /** Stored under the node's reference name for later `{{ ref.x }}`. */
  output: unknown
  /** The port to follow; undefined for one-port nodes (`out`) and for End nodes. */
  port?: string
  /** The attempt answered something worth trying again (an http 429 or 5xx): with `retry`, it is. */
  retryable?: boolean
  /** Set by End nodes: the run's response. */
  response?: { status: number; body: unknown; headers: Record<string, string> }
}

/**
 * A node kind as the registry holds it (made with `defineNodeKind`, see define.ts). `S` is its typed
 * settings: `parseSettings` turns the node's settings into them once, when the project loads, and the
 * loader keeps them on the node (`FlowNode.parsed`); `ports`, `calledFlow`, `entry` and `openapi` get
 * them, and `execute` reads them from the node, so nothing parses a setting per run.
 */
export interface NodeKind<S = ParsedSettings> {
  type: string
  description: string
  /** JSON Schema of the node's own settings (everything but id, type, name, next); used by the
   *  published flow.schema.json and by `validate` to report unknown or wrong settings. */
  settingsSchema: JsonSchema
  /**
   * The typed settings, with their defaults, from the settings as written. Called once per node at
   * load, after the settings schema checked them; it must accept any object all the same (a node the
   * schema refused still has ports for the graph check, though its flow is never run).
   */
  parseSettings(settings: Record<string, unknown>): S
  /** The ports a node of this kind has, given its settings (a switch's ports come from its cases). */
  ports(settings: S): string[]
  /** Whether `next` is a single node id (one port `out`) rather than a port map. */
  singlePort: boolean
  /** Some settings add ports beyond `out` (a callback wait's `timeout`): `next` may then be a port map too. */
  optionalPorts?: boolean
  /** The run ends at this node (End): it has no ports, and `execute` returns the run's `response`. */
  terminates?: boolean
  /** Settings that hold JSON Schemas rather than bindings: their strings are never templates. */
  literalSettings?: readonly string[]
  /** Whether `retry` and `onError` (SPEC §13) are left out of its settings (Start and End). */
  noCommonSettings?: boolean
  /**
   * Load-time checks the settings schema cannot express (filter operators, where a url may hold
   * values), on the settings as written so problems point into the file; run once the settings fit
   * the schema. Project-level help comes in `context`.
   */
  checkSettings?(settings: Record<string, unknown>, context: SettingsCheckContext): SettingsProblem[]
  /** The slug of the flow this node runs (call, each): checked across files, followed by `flowctl test`. */
  calledFlow?(settings: S): string | null
  /** It sends requests through `context.fetch`, so `flowctl test` mocks (keyed by node id) may answer them. */
  sendsRequests?: boolean
  /** The flow's entry (Start): every flow has exactly one such node, and it gives the flow its HTTP face. */
  entry?: {
    /** Problems of the settings (as written, and parsed); run even when the schema refused some of them. */
    check(settings: Record<string, unknown>, context: SettingsCheckContext, parsed: S): SettingsProblem[]
    /** The flow's entry settings (`Flow.start`) from the typed settings. */
    start(settings: S): StartSettings
  }
  /** What a node of this kind adds to the OpenAPI document. */
  openapi?: {
    /** A terminating node's answer (End): its status, media type, body schema (as written) and header names. */
    response?(settings: S): NodeResponseDoc
    /** The entry node's request (Start): parameters and body, for the flow's operation. */
    request?(start: StartSettings): NodeRequestDoc
  }
  /** The work; the node's typed settings are `context.node.parsed` (`defineNodeKind` hands them over). */
  execute(context: NodeContext): Promise<NodeResult>
}

export interface SettingsProblem {
  path: (string | number)[]
  message: string
  /** Point at the key rather than its value. */
  key?: boolean
  /** Default error: the flow is left out. A warning keeps it. */
  severity?: 'warning'
}

/** What load-time checks may ask of the project (the nodes layer cannot import the loader). */
export interface SettingsCheckContext {
  /** Where a user's JSON Schema breaks the meta-schema (a path inside it), or null when it is valid. */
  schemaProblem(schema: JsonSchema): { path: string[]; message: string } | null
  /** `pattern`s inside a schema that could backtrack catastrophically (ReDoS). */
  patternProblems(schema: JsonSchema): { path: (string | number)[]; severity: 'error' | 'warning'; message: string }[]
  /** The project's CORS settings, which a Start's `cors` fields override. */
  projectCors?: CorsSettings
}

/** What an operation takes, for the OpenAPI document; schemas as written (the generator converts them). */
export interface NodeRequestDoc {
  parameters: { name: string; in: 'path' | 'query' | 'header'; required: boolean; schema: unknown }[]
  /** Media type → schema of the body; null when the operation reads no body. */
  body: { required: boolean; content: Record<string, JsonSchema> } | null
}

/** One terminating node's answer, for the OpenAPI document. */
export interface NodeResponseDoc {
  status: number
  mediaType: string
  /** JSON Schema of the body as written (converted to OpenAPI's dialect by the generator), or null. */
  schema: JsonSchema | null
  /** Header names the node sets. */
  headers: string[]
}
