// flowctl's public API (`import … from 'flowctl'`): what a program embedding flowctl needs to load and
// check a project, run its flows, record runs, generate its OpenAPI document, run its tests, tick its
// schedules, serve it, and add a node kind. Everything else in src/ is internal and may change; the
// README's "Programmatic API" shows each export in use and test/api.test.ts pins this list.
export { main } from './cli/main.js'
export { ERROR_CATALOG, FlowctlError, formatProblem, isFlowctlError, type ErrorCode } from './errors.js'

export { loadProject, type LoadOptions } from './project/load.js'
export { validateProject, type ValidationResult } from './project/validate.js'
export type * from './model/project.js'

export { runFlow } from './flow/engine.js'
export type { NodeFetch, RunInput, RunOptions, RunOutcome, Trace, TraceStep } from './model/run.js'
export { registerNodeKind } from './nodes/registry.js'
export { defineNodeKind, type NodeKindDefinition } from './nodes/define.js'
export type { NodeContext, NodeKind, NodeRequestDoc, NodeResponseDoc, NodeResult, SettingsCheckContext, SettingsProblem } from './nodes/types.js'

export { openProjectStore, type OpenProjectStoreOptions } from './serve/project-store.js'
export { openStore, type DatabaseTarget, type OpenStoreOptions } from './store/index.js'
export { resolveDatabase } from './project/database.js'
export type {
  DocumentsPort,
  Heartbeat,
  HistoryPort,
  OutboxMessage,
  QueuePort,
  RecordedListener,
  RunQuery,
  RunRecord,
  RunStatus,
  RunTrigger,
  SchedulesPort,
  Store,
} from './model/store.js'

export { generateOpenApi, type GenerateOptions, type OpenApiDocument } from './openapi/generate.js'

export { runTestPass, type TestPass, type TestPassOptions } from './testing/session.js'
export type { CaseFailure, CaseResult } from './testing/run-case.js'

export { runTick, type TickOptions, type TickRun, type TickSummary, type TickTarget } from './schedule/tick.js'

export { startRuntime, type RuntimeOptions, type ServeRuntime } from './serve/runtime.js'
export { createApp, type AppOptions } from './http/app.js'
