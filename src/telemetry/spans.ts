// The spans the engine makes (SPEC §23), as interfaces: tracing.ts hands them out, otel.ts implements
// them with the OpenTelemetry SDK (loaded only when exporting).
import type { FlowNode } from '../model/project.js'
import type { RunTrigger } from '../model/store.js'

/** What a finished span records; `error` (already masked) makes its status ERROR. */
export interface SpanEnd {
  port?: string | null
  error?: string | null
  /** The run's answer status (HTTP runs). */
  httpStatus?: number
}

/** A run span or a step span; sub-flow steps are children of their calling step's span. */
export interface TraceSpan {
  /** A child span for one attempt of a step. */
  step(node: FlowNode, attempt: number): TraceSpan
  /** The W3C `traceparent` header naming this span (what an http node of this step sends). */
  traceparent(): string
  end(outcome: SpanEnd): void
}

export interface RunSpanStart {
  projectId: string
  slug: string
  runId: string
  trigger: RunTrigger
  /** Upper-case HTTP method, `CRON` or `CLI`. */
  method: string
  /** The caller's `traceparent`: the run span becomes its child. */
  traceparent?: string
}

export interface RunTracer {
  startRun(start: RunSpanStart): TraceSpan
  /** Exports what is queued; bounded in time, never throws. */
  flush(): Promise<void>
  shutdown(): Promise<void>
}

/** Where a project's spans go: `env` (the exporter reads OTEL_* itself) or a flowctl.yaml URL. */
export type ExportTarget = { kind: 'env' } | { kind: 'url'; url: string }
