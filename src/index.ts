// flowctl's programmatic API: every public export, by name. The CLI (src/cli/) is built on these.
export { main } from './cli/main.js'
export { ERROR_CATALOG, FlowctlError, formatProblem, isFlowctlError, type ErrorCode } from './errors.js'

export { loadProject, reloadProject, type LoadOptions } from './project/load.js'
export { validateProject, type ValidationResult } from './project/validate.js'
export { buildFlowSchema } from './project/schema.js'
export { referenceName, slugify } from './project/slug.js'
export { loadSecrets } from './project/secrets.js'
export { maskSecrets, resolveSecretText } from './language/secrets.js'
export type * from './model/project.js'

export { runFlow, newRunId } from './flow/engine.js'
export type { NodeFetch, RunInput, RunOptions, RunOutcome, Trace, TraceStep } from './model/run.js'
export { nodeKinds, getNodeKind, registerNodeKind } from './nodes/registry.js'
export type { NodeContext, NodeKind, NodeRequestDoc, NodeResponseDoc, NodeResult, SettingsCheckContext, SettingsProblem } from './nodes/types.js'

export { openStore, type DatabaseTarget, type OpenStoreOptions } from './store/index.js'
export { documentIndexesOf, embeddedDatabaseFile, resolveDatabase } from './project/database.js'
export type { Heartbeat, OutboxMessage, RunQuery, RunRecord, RunStatus, RunTrigger, Store } from './model/store.js'

export { generateOpenApi, type OpenApiDocument } from './openapi/generate.js'
export { formatOpenApi, type OpenApiFormat } from './openapi/format.js'

export { runTestPass, type TestPass, type TestPassOptions } from './testing/session.js'
export { buildTestSchema } from './model/test-file-shape.js'
export type { CaseFailure, CaseResult } from './testing/run-case.js'
export type { FlowCoverage } from './testing/coverage.js'

export { runTick, type TickRun, type TickSummary } from './schedule/tick.js'
export { runBackfill, type BackfillSummary } from './schedule/backfill.js'
export { DueIndex, listSchedules } from './schedule/due-index.js'

export { createApp, type AppOptions } from './http/app.js'
export { Workspace, type WorkspaceEntry } from './serve/workspace.js'
export { openProjectStore } from './serve/project-store.js'
export { startRuntime, type RuntimeOptions, type ServeRuntime } from './serve/runtime.js'
