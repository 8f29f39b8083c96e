// OpenTelemetry spans of runs and steps (SPEC §23), as the engine sees them: a run span, a child span
// per step attempt, and the `traceparent` an http node sends. The OpenTelemetry SDK lives in otel.ts
// and is imported only when exporting is on (an OTEL_* endpoint, or `telemetry.otlp.endpoint`):
// with it off, `tracerFor` answers null after one size check and the engine makes no span at all.
import type { Project } from '../model/project.js'
import type { ExportTarget, RunTracer } from './spans.js'

export type { RunTracer, TraceSpan } from './spans.js'

/** The tracer of each project that exports; empty when nothing exports (the engine's null check). */
const projectTracers = new Map<string, RunTracer>()
/** One tracer (provider, exporter, queue) per target, shared by the projects that use it. */
const tracers = new Map<string, Promise<RunTracer>>()

/** The project's tracer, or null when its spans are not exported. Called once per run. */
export function tracerFor(project: Project): RunTracer | null {
  if (projectTracers.size === 0) return null
  return projectTracers.get(project.settings.projectId) ?? null
}

/** Where this project's spans go, or null when it exports none. The OTEL_* endpoints win over flowctl.yaml. */
function exportTargetOf(project: Project, env: NodeJS.ProcessEnv = process.env): ExportTarget | null {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return null
  if (env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT) return { kind: 'env' }
  const endpoint = project.settings.otlpEndpoint
  if (!endpoint) return null
  // As OTEL_EXPORTER_OTLP_ENDPOINT: a base URL, traces under /v1/traces.
  return { kind: 'url', url: `${endpoint.replace(/\/+$/, '')}/v1/traces` }
}

/**
 * Turns exporting on (or off) for these projects, per their settings and the environment. Loads the
 * SDK the first time a project exports; a project whose settings stopped exporting is dropped.
 */
export async function enableTracing(projects: readonly Project[], warn: (line: string) => void = defaultWarn): Promise<void> {
  for (const project of projects) {
    const target = exportTargetOf(project)
    const id = project.settings.projectId
    if (!target) {
      projectTracers.delete(id)
      continue
    }
    const key = target.kind === 'env' ? 'env' : target.url
    let tracer = tracers.get(key)
    if (!tracer) {
      tracer = import('./otel.js').then(({ createRunTracer }) => createRunTracer(target, warn))
      tracers.set(key, tracer)
    }
    try {
      projectTracers.set(id, await tracer)
    } catch (error) {
      // A broken exporter set-up never stops a run: the project runs without spans.
      tracers.delete(key)
      warn(`telemetry: spans of project ${id} are not exported: ${error instanceof Error ? error.message : String(error)}`)
    }
  }
}

/** Flushes and stops every exporter (`serve` on shutdown); tracing is off afterwards. */
export async function shutdownTracing(): Promise<void> {
  const all = [...tracers.values()]
  projectTracers.clear()
  tracers.clear()
  await Promise.allSettled(all.map(async (tracer) => (await tracer).shutdown()))
}

function defaultWarn(line: string): void {
  process.stderr.write(line + '\n')
}
