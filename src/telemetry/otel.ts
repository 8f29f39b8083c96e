// The OpenTelemetry side of tracing.ts, imported only when a project exports spans (SPEC §23): a
// tracer provider with a batching, bounded queue and an OTLP/HTTP exporter (protobuf by default,
// JSON with OTEL_EXPORTER_OTLP_PROTOCOL=http/json). Spans are parented explicitly (no global
// context manager): the engine hands each step its run's or calling step's span.
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, TraceFlags, type Context, type Span, type Tracer } from '@opentelemetry/api'
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources'
import { BatchSpanProcessor, TracerProvider, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace'
import { ATTR_HTTP_REQUEST_METHOD, ATTR_HTTP_RESPONSE_STATUS_CODE, ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions'
import type { FlowNode } from '../model/project.js'
import type { ExportTarget, RunSpanStart, RunTracer, SpanEnd, TraceSpan } from './spans.js'

/** How long a flush (`run`/`tick` exit, `serve` shutdown) waits for a slow collector at most. */
const FLUSH_TIMEOUT_MS = 5000

export async function createRunTracer(target: ExportTarget, warn: (line: string) => void): Promise<RunTracer> {
  const exporter = new WarnOnce(await otlpExporter(target, warn), warn)
  const provider = new TracerProvider({
    resource: defaultResource()
      .merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: 'flowctl' }))
      // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES.
      .merge(detectResources({ detectors: [envDetector] })),
    forceFlushTimeoutMillis: FLUSH_TIMEOUT_MS,
    spanProcessors: [new BatchSpanProcessor({ exporter, ...batchOptions(process.env) })],
  })
  return new OtelRunTracer(provider, provider.getTracer('flowctl'))
}

/** The standard OTEL_BSP_* variables (this SDK version leaves them to the application). */
function batchOptions(env: NodeJS.ProcessEnv): {
  scheduledDelayMillis?: number
  maxQueueSize?: number
  maxExportBatchSize?: number
  exportTimeoutMillis?: number
} {
  const read = (name: string): number | undefined => {
    const value = Number(env[name])
    return env[name] && Number.isFinite(value) && value > 0 ? value : undefined
  }
  const options = {
    scheduledDelayMillis: read('OTEL_BSP_SCHEDULE_DELAY'),
    maxQueueSize: read('OTEL_BSP_MAX_QUEUE_SIZE'),
    maxExportBatchSize: read('OTEL_BSP_MAX_EXPORT_BATCH_SIZE'),
    exportTimeoutMillis: read('OTEL_BSP_EXPORT_TIMEOUT'),
  }
  return Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined))
}

async function otlpExporter(target: ExportTarget, warn: (line: string) => void): Promise<SpanExporter> {
  const env = process.env
  const protocol = (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL || env.OTEL_EXPORTER_OTLP_PROTOCOL || 'http/protobuf').trim()
  if (protocol !== 'http/protobuf' && protocol !== 'http/json') warn(`telemetry: OTLP protocol "${protocol}" is not supported; sending http/protobuf`)
  // Endpoint, headers and timeout: the exporter reads OTEL_EXPORTER_OTLP_* itself; a flowctl.yaml URL is given.
  // One export waits FLUSH_TIMEOUT_MS at most unless OTEL_EXPORTER_OTLP_TIMEOUT says otherwise (the
  // exporter's own default is 10 s): an unanswered request keeps `flowctl run` alive that long.
  const timeout = env.OTEL_EXPORTER_OTLP_TRACES_TIMEOUT || env.OTEL_EXPORTER_OTLP_TIMEOUT ? {} : { timeoutMillis: FLUSH_TIMEOUT_MS }
  const config = target.kind === 'url' ? { url: target.url, ...timeout } : timeout
  if (protocol === 'http/json') {
    const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http')
    return new OTLPTraceExporter(config)
  }
  const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-proto')
  return new OTLPTraceExporter(config)
}

/** The exporter, saying once on stderr that the collector cannot be reached; failures never reach a run. */
class WarnOnce implements SpanExporter {
  #warned = false

  constructor(
    private readonly inner: SpanExporter,
    private readonly warn: (line: string) => void,
  ) {}

  export(spans: ReadableSpan[], done: Parameters<SpanExporter['export']>[1]): void {
    this.inner.export(spans, (result) => {
      // ExportResultCode.SUCCESS is 0.
      if (result.code !== 0 && !this.#warned) {
        this.#warned = true
        this.warn(`telemetry: exporting spans failed (${result.error?.message ?? 'unknown error'}); runs go on, spans are dropped (said once)`)
      }
      done(result)
    })
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown()
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve()
  }
}

class OtelRunTracer implements RunTracer {
  constructor(
    private readonly provider: TracerProvider,
    private readonly tracer: Tracer,
  ) {}

  startRun(start: RunSpanStart): TraceSpan {
    const http = start.trigger === 'http'
    const attributes: Record<string, string> = {
      'flowctl.project': start.projectId,
      'flowctl.flow': start.slug,
      'flowctl.run_id': start.runId,
      'flowctl.trigger': start.trigger,
    }
    if (http) attributes[ATTR_HTTP_REQUEST_METHOD] = start.method
    const parent = start.traceparent ? remoteParent(start.traceparent) : ROOT_CONTEXT
    const span = this.tracer.startSpan(`${start.projectId}/${start.slug}`, { kind: http ? SpanKind.SERVER : SpanKind.INTERNAL, attributes }, parent)
    return new OtelSpan(this.tracer, span, http)
  }

  async flush(): Promise<void> {
    await this.provider.forceFlush().catch(() => {})
  }

  async shutdown(): Promise<void> {
    await withTimeout(this.provider.shutdown(), FLUSH_TIMEOUT_MS).catch(() => {})
  }
}

class OtelSpan implements TraceSpan {
  constructor(
    private readonly tracer: Tracer,
    private readonly span: Span,
    private readonly http: boolean,
  ) {}

  step(node: FlowNode, attempt: number): TraceSpan {
    const attributes = { 'flowctl.node.id': node.id, 'flowctl.node.kind': node.type, 'flowctl.node.attempt': attempt }
    const span = this.tracer.startSpan(`${node.type} ${node.name}`, { kind: SpanKind.INTERNAL, attributes }, trace.setSpan(ROOT_CONTEXT, this.span))
    return new OtelSpan(this.tracer, span, false)
  }

  traceparent(): string {
    const { traceId, spanId, traceFlags } = this.span.spanContext()
    return `00-${traceId}-${spanId}-${traceFlags & TraceFlags.SAMPLED ? '01' : '00'}`
  }

  end(outcome: SpanEnd): void {
    const { span } = this
    if (outcome.port) span.setAttribute('flowctl.node.port', outcome.port)
    if (this.http && outcome.httpStatus !== undefined) span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, outcome.httpStatus)
    if (outcome.error) span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.error })
    // A server span whose answer is a 5xx is an error (OpenTelemetry's HTTP conventions), End-chosen or not.
    else if (this.http && outcome.httpStatus !== undefined && outcome.httpStatus >= 500)
      span.setStatus({ code: SpanStatusCode.ERROR, message: `answered ${outcome.httpStatus}` })
    span.end()
  }
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/

/** The caller's span from a W3C `traceparent`; a malformed one is ignored (a new trace starts). */
function remoteParent(header: string): Context {
  const match = TRACEPARENT.exec(header.trim().toLowerCase())
  if (!match) return ROOT_CONTEXT
  const [, version, traceId, spanId, flags] = match as unknown as [string, string, string, string, string, string | undefined]
  // Version ff is invalid; version 00 has nothing after the flags.
  if (version === 'ff' || (version === '00' && match[5] !== undefined)) return ROOT_CONTEXT
  if (/^0+$/.test(traceId) || /^0+$/.test(spanId)) return ROOT_CONTEXT
  return trace.setSpanContext(ROOT_CONTEXT, { traceId, spanId, traceFlags: parseInt(flags, 16) & TraceFlags.SAMPLED, isRemote: true })
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms)
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}
