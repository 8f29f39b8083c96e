// SPEC §23 against the real `flowctl serve`, `flowctl run` and `flowctl tick`: spans reach a real
// OTLP/HTTP receiver (a node:http server here, decoding http/json and, with protobufjs and a small
// .proto of ExportTraceServiceRequest, http/protobuf); `/metrics` is scraped and parsed; a collector
// that is down or never answers changes no run's answer.
import { mkdir, writeFile } from 'node:fs/promises'
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import parsePrometheusTextFormat from 'parse-prometheus-text-format'
import protobuf from 'protobufjs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cleanupTempDirs, eventually, flowctl, freePort, makeTempDir, startServe, type StartedServe } from '../helpers.js'

const SECRET = 'sekret-key-4711'

const OTLP_PROTO = `syntax = "proto3";
message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
message ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2; }
message Resource { repeated KeyValue attributes = 1; }
message ScopeSpans { repeated Span spans = 2; }
message Span {
  bytes trace_id = 1; bytes span_id = 2; string trace_state = 3; bytes parent_span_id = 4; string name = 5; int32 kind = 6;
  fixed64 start_time_unix_nano = 7; fixed64 end_time_unix_nano = 8; repeated KeyValue attributes = 9; Status status = 15;
}
message Status { string message = 2; int32 code = 3; }
message KeyValue { string key = 1; AnyValue value = 2; }
message AnyValue { oneof value { string string_value = 1; bool bool_value = 2; int64 int_value = 3; double double_value = 4; } }
`
const ExportRequest = protobuf.parse(OTLP_PROTO).root.lookupType('ExportTraceServiceRequest')

/** OTLP's SpanKind and StatusCode numbers. */
const KIND = { INTERNAL: 1, SERVER: 2 }
const STATUS_ERROR = 2

interface ReceivedSpan {
  name: string
  traceId: string
  spanId: string
  parentSpanId: string
  kind: number
  attributes: Record<string, unknown>
  status: { code: number; message: string }
  service: unknown
}

interface Receiver {
  url: string
  spans: ReceivedSpan[]
  /** Every request body as text (protobuf bytes as latin1), for the secret check. */
  raw: string[]
  contentTypes: string[]
  close(): Promise<void>
}

function attributesOf(list: { key: string; value: Record<string, unknown> }[] | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const { key, value } of list ?? []) {
    const v = value.stringValue ?? value.intValue ?? value.boolValue ?? value.doubleValue
    out[key] = typeof v === 'object' && v !== null ? Number(String(v)) : typeof v === 'string' && 'intValue' in value ? Number(v) : v
  }
  return out
}

const hex = (value: unknown): string => (typeof value === 'string' ? value : Buffer.from(value as Uint8Array).toString('hex'))

/** A collector: decodes what the exporter posts to /v1/traces (json or protobuf by content type). */
async function startReceiver(): Promise<Receiver> {
  const receiver: Receiver = { url: '', spans: [], raw: [], contentTypes: [], close: async () => {} }
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const body = Buffer.concat(chunks)
      const type = req.headers['content-type'] ?? ''
      receiver.contentTypes.push(type)
      receiver.raw.push(body.toString('latin1'))
      const message = (
        type.includes('json') ? JSON.parse(body.toString('utf8')) : ExportRequest.toObject(ExportRequest.decode(body), { longs: String, defaults: false })
      ) as { resourceSpans?: { resource?: { attributes?: never }; scopeSpans?: { spans?: Record<string, never>[] }[] }[] }
      for (const resourceSpans of message.resourceSpans ?? []) {
        const service = attributesOf(resourceSpans.resource?.attributes)['service.name']
        for (const scope of resourceSpans.scopeSpans ?? [])
          for (const span of scope.spans ?? []) {
            const s = span as Record<string, unknown>
            receiver.spans.push({
              name: s.name as string,
              traceId: hex(s.traceId),
              spanId: hex(s.spanId),
              parentSpanId: s.parentSpanId ? hex(s.parentSpanId) : '',
              kind: Number(s.kind),
              attributes: attributesOf(s.attributes as never),
              status: {
                code: Number((s.status as { code?: number } | undefined)?.code ?? 0),
                message: (s.status as { message?: string } | undefined)?.message ?? '',
              },
              service,
            })
          }
      }
      res.writeHead(200, { 'content-type': type.includes('json') ? 'application/json' : 'application/x-protobuf' }).end(type.includes('json') ? '{}' : '')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  receiver.close = () => closeServer(server)
  return receiver
}

function closeServer(server: Server): Promise<void> {
  server.closeAllConnections()
  return new Promise((resolve) => server.close(() => resolve()))
}

/** A GET with a chosen Host header (fetch cannot set it): a non-loopback caller as §17 sees one. */
function getWithHost(url: string, host: string): Promise<{ status: number; headers: IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { host } }, (res) => {
      res.resume()
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers }))
    })
    req.on('error', reject)
    req.end()
  })
}

let upstream: Server
let upstreamTraceparents: string[] = []

async function makeProject(): Promise<string> {
  const upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`
  const dir = await makeTempDir('flowctl-telemetry-')
  await mkdir(join(dir, 'flows'))
  await writeFile(join(dir, 'flowctl.yaml'), 'projectId: tel\nname: Telemetry\nlimits: { runsPerMinutePerIp: 0 }\n')
  await writeFile(join(dir, '.env'), `UP_KEY=${SECRET}\n`)
  await writeFile(
    join(dir, 'flows', 'orders.yaml'),
    `name: Orders
nodes:
  - { id: start, type: start, name: Start, method: post, inputs: { body: { type: object, required: [sku], properties: { sku: { type: string } } } }, next: enrich }
  - { id: enrich, type: call, name: Enrich, flow: enrich, input: { sku: "{{ start.sku }}" }, next: upstream }
  - { id: upstream, type: http, name: Call Upstream, url: "${upstreamUrl}/stock?key=\${secrets.UP_KEY}", failOnStatus: true, next: done }
  - { id: done, type: end, name: Done, body: { ok: true } }
`,
  )
  await writeFile(
    join(dir, 'flows', 'enrich.yaml'),
    `name: Enrich
nodes:
  - { id: start, type: start, name: Start, method: post, inputs: { body: { type: object } }, next: mark }
  - { id: mark, type: set, name: Mark, values: { sku: "{{ start.sku }}" }, next: done }
  - { id: done, type: end, name: Done, body: { sku: "{{ mark.sku }}" } }
`,
  )
  await writeFile(
    join(dir, 'flows', 'nightly.yaml'),
    `name: Nightly
schedule: { cron: "* * * * *" }
nodes:
  - { id: start, type: start, name: Start, method: post, http: false, next: done }
  - { id: done, type: end, name: Done, body: { ok: true } }
`,
  )
  return dir
}

beforeAll(async () => {
  upstream = createServer((req, res) => {
    upstreamTraceparents.push(String(req.headers.traceparent ?? ''))
    res.writeHead(503, { 'content-type': 'application/json' }).end('{"busy":true}')
  })
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve))
})

afterAll(async () => {
  await closeServer(upstream)
  await cleanupTempDirs()
})

const INCOMING_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736'
const INCOMING_SPAN = '00f067aa0ba902b7'

async function stopServe(serve: StartedServe): Promise<void> {
  serve.child.kill('SIGTERM')
  await serve.child
}

describe.each(['http/protobuf', 'http/json'])('spans of a run through serve (%s)', (protocol) => {
  it('names, nests, links and marks the spans; the upstream gets the step traceparent; no secret leaves', async () => {
    const receiver = await startReceiver()
    upstreamTraceparents = []
    const dir = await makeProject()
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: protocol, OTEL_SERVICE_NAME: 'shop-flows' }
    const serve = await startServe([dir, '--quiet', '--no-watch'], { env })
    try {
      const answer = await fetch(`${serve.base}/api/run/tel/orders`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', traceparent: `00-${INCOMING_TRACE}-${INCOMING_SPAN}-01` },
        body: JSON.stringify({ sku: 'A1' }),
      })
      expect(answer.status).toBe(500)
      const { runId } = (await answer.json()) as { runId: string }
      // serve flushes on shutdown: every span is there once it exited.
      await stopServe(serve)

      expect(receiver.contentTypes[0]).toContain(protocol === 'http/json' ? 'application/json' : 'application/x-protobuf')
      const spans = receiver.spans
      const run = spans.find((s) => s.name === 'tel/orders')!
      expect(run).toBeDefined()
      expect(run.service).toBe('shop-flows')
      expect(run.kind).toBe(KIND.SERVER)
      expect(run.traceId).toBe(INCOMING_TRACE)
      expect(run.parentSpanId).toBe(INCOMING_SPAN)
      expect(run.attributes).toMatchObject({
        'flowctl.project': 'tel',
        'flowctl.flow': 'orders',
        'flowctl.run_id': runId,
        'flowctl.trigger': 'http',
        'http.request.method': 'POST',
        'http.response.status_code': 500,
      })
      expect(run.status.code).toBe(STATUS_ERROR)

      const byName = (name: string) => spans.filter((s) => s.name === name)
      const start = byName('start Start').find((s) => s.parentSpanId === run.spanId)!
      expect(start.attributes).toMatchObject({
        'flowctl.node.id': 'start',
        'flowctl.node.kind': 'start',
        'flowctl.node.port': 'out',
        'flowctl.node.attempt': 1,
      })
      const call = byName('call Enrich')[0]!
      expect(call.parentSpanId).toBe(run.spanId)
      expect(call.kind).toBe(KIND.INTERNAL)
      // The sub-flow's steps nest under the calling step.
      const mark = byName('set Mark')[0]!
      expect(mark.parentSpanId).toBe(call.spanId)
      expect(byName('end Done').some((s) => s.parentSpanId === call.spanId)).toBe(true)
      const failed = byName('http Call Upstream')[0]!
      expect(failed.parentSpanId).toBe(run.spanId)
      expect(failed.attributes).toMatchObject({ 'flowctl.node.id': 'upstream', 'flowctl.node.kind': 'http', 'flowctl.node.attempt': 1 })
      expect(failed.status.code).toBe(STATUS_ERROR)
      expect(failed.status.message).toContain('503')
      expect(spans.every((s) => s.traceId === INCOMING_TRACE)).toBe(true)

      // The upstream saw the traceparent of the http step's span (W3C).
      expect(upstreamTraceparents).toEqual([`00-${INCOMING_TRACE}-${failed.spanId}-01`])
      // Secrets never appear in spans (the failure reason names the URL with the key masked).
      expect(receiver.raw.join('')).not.toContain(SECRET)
    } finally {
      serve.child.kill('SIGKILL')
      await receiver.close()
    }
  })
})

describe('flowctl run and flowctl tick', () => {
  it('export their spans before they exit', async () => {
    const receiver = await startReceiver()
    const dir = await makeProject()
    // telemetry.otlp.endpoint in flowctl.yaml turns exporting on as well (no OTEL_* variable here).
    await writeFile(join(dir, 'flowctl.yaml'), `projectId: tel\nname: Telemetry\ntelemetry: { otlp: { endpoint: "${receiver.url}" } }\n`)
    try {
      const ran = await flowctl(['run', 'nightly', '--project', dir, '--json'])
      expect(ran.exitCode).toBe(0)
      const runSpan = receiver.spans.find((s) => s.name === 'tel/nightly')!
      expect(runSpan.kind).toBe(KIND.INTERNAL)
      expect(runSpan.attributes).toMatchObject({ 'flowctl.trigger': 'cli', 'flowctl.run_id': JSON.parse(ran.stdout).runId })
      expect(runSpan.attributes['http.request.method']).toBeUndefined()

      const ticked = await flowctl(['tick', '--project', dir, '--json'])
      expect(JSON.parse(ticked.stdout).ran).toBe(1)
      const cron = receiver.spans.filter((s) => s.name === 'tel/nightly' && s.attributes['flowctl.trigger'] === 'cron')
      expect(cron).toHaveLength(1)
      expect(receiver.spans.some((s) => s.name === 'end Done' && s.parentSpanId === cron[0]!.spanId)).toBe(true)
    } finally {
      await receiver.close()
    }
  })
})

describe('a collector that is down or never answers', () => {
  it.each(['down', 'silent'])('changes no answer (%s)', async (kind) => {
    let silent: Server | null = null
    let endpoint: string
    if (kind === 'silent') {
      // Accepts the export and never answers.
      silent = createServer(() => {})
      await new Promise<void>((resolve) => silent!.listen(0, '127.0.0.1', resolve))
      endpoint = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`
    } else endpoint = `http://127.0.0.1:${await freePort()}`
    const dir = await makeProject()
    // A short export timeout, so the failure (and its one warning) comes within the test.
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_BSP_SCHEDULE_DELAY: '20', OTEL_EXPORTER_OTLP_TIMEOUT: '300' }
    const serve = await startServe([dir, '--no-watch'], { env })
    try {
      for (let i = 0; i < 20; i++) {
        const answer = await fetch(`${serve.base}/api/run/tel/orders`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"sku":"A"}' })
        expect(answer.status).toBe(500)
        expect(((await answer.json()) as { errors: string[] }).errors).toEqual(['node upstream failed'])
      }
      if (kind === 'down') {
        await eventually(async () => serve.stderr().includes('telemetry: exporting spans failed'), 15_000)
        expect(serve.stderr().split('telemetry: exporting spans failed').length - 1).toBe(1)
      }
    } finally {
      serve.child.kill('SIGKILL')
      await serve.child
      if (silent) await closeServer(silent)
    }
  })
})

describe('GET /metrics', () => {
  let serve: StartedServe
  beforeAll(async () => {
    serve = await startServe([await makeProject(), '--quiet', '--no-watch'])
  })
  afterAll(async () => {
    serve.child.kill('SIGKILL')
    await serve.child
  })

  async function scrape() {
    const answer = await fetch(`${serve.base}/metrics`)
    expect(answer.status).toBe(200)
    expect(answer.headers.get('content-type')).toContain('text/plain')
    const text = await answer.text()
    const families = parsePrometheusTextFormat(text)
    const value = (name: string, labels: Record<string, string>) =>
      Number(families.find((f) => f.name === name)?.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v))?.value ?? 0)
    return { families, value, text }
  }

  it('counts runs and refusals, and shows gauges and default metrics', async () => {
    const before = await scrape()
    const runs = { project: 'tel', flow: 'orders', trigger: 'http', status: 'error' }
    const runsBefore = before.value('flowctl_runs_total', runs)
    const refusedBefore = before.value('flowctl_rejections_total', { project: 'tel', code: '400' })
    for (let i = 0; i < 2; i++)
      await fetch(`${serve.base}/api/run/tel/orders`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"sku":"A"}' })
    await fetch(`${serve.base}/api/run/tel/orders`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })

    const after = await scrape()
    expect(after.value('flowctl_runs_total', runs)).toBe(runsBefore + 2)
    expect(after.value('flowctl_rejections_total', { project: 'tel', code: '400' })).toBe(refusedBefore + 1)
    const histogram = after.families.find((f) => f.name === 'flowctl_run_duration_seconds')!
    expect(histogram.type).toBe('HISTOGRAM')
    // The parser keeps a labelled histogram's buckets only (it drops its labels, _sum and _count):
    // only orders has runs, so its buckets are the one sample; _count is read from the text.
    expect(histogram.metrics).toHaveLength(1)
    expect(Number(histogram.metrics[0]!.buckets!['+Inf'])).toBe(runsBefore + 2)
    expect(after.text).toContain(`flowctl_run_duration_seconds_count{project="tel",flow="orders"} ${runsBefore + 2}`)
    expect(after.value('flowctl_async_queue_depth', { project: 'tel' })).toBe(0)
    expect(after.families.find((f) => f.name === 'flowctl_waiting_runs')?.metrics).toEqual([{ labels: { project: 'tel' }, value: '0' }])
    expect(after.value('flowctl_store_up', { project: 'tel' })).toBe(1)
    expect(after.families.some((f) => f.name === 'flowctl_schedule_lag_seconds')).toBe(true)
    expect(after.families.some((f) => f.name === 'process_cpu_user_seconds_total')).toBe(true)
    expect(after.families.some((f) => f.name === 'nodejs_eventloop_lag_seconds')).toBe(true)
  })

  it('refuses a non-loopback caller without sign-in (401), HEAD answers as GET', async () => {
    const remote = await getWithHost(`${serve.base}/metrics`, 'metrics.example')
    expect(remote.status).toBe(401)
    expect(remote.headers['www-authenticate']).toContain('Bearer')
    const head = await fetch(`${serve.base}/metrics`, { method: 'HEAD' })
    expect(head.status).toBe(200)
    expect((await fetch(`${serve.base}/metrics`, { method: 'POST' })).status).toBe(405)
  })
})
