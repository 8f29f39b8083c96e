// Prometheus metrics of a serve process (SPEC §23, `GET /metrics`). Counting is a map update per run
// or refusal; gauges are read when scraped. prom-client (~50 ms to import) is loaded on the first
// scrape only, for the process's default metrics; the flowctl_* families are written here, since
// a histogram's buckets cannot be handed to prom-client from counts kept elsewhere.
import type { Registry } from 'prom-client'
import type { RunRecord } from '../model/store.js'

/** Upper bounds (seconds) of flowctl_run_duration_seconds: prom-client's defaults, then the run timeout's range. */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]

/** What a scrape reads per project at that moment. */
export interface ProjectGauges {
  projectId: string
  /** Queued async runs; null when the store cannot be asked (down). */
  asyncQueueDepth: number | null
  /** Runs parked at a callback wait or a long sleep (SPEC §22); null when the store cannot be asked. */
  waitingRuns: number | null
  /** Seconds the scheduler is behind; null when the project has no enabled schedule. */
  scheduleLagSeconds: number | null
  storeUp: boolean
}

interface DurationHistogram {
  project: string
  flow: string
  buckets: number[]
  count: number
  sum: number
}

export class RunMetrics {
  readonly #runs = new Map<string, { labels: [string, string, string, string]; value: number }>()
  readonly #durations = new Map<string, DurationHistogram>()
  readonly #rejections = new Map<string, { labels: [string, string]; value: number }>()

  /**
   * The counters of #runs and #durations by project, flow, trigger and status, so that counting a
   * run is four map lookups on strings it already holds (joining them into one key cost ~3,000
   * instructions a run: a new string to hash each time).
   */
  readonly #byLabels = new Map<string, Map<string, { histogram: DurationHistogram; runs: Map<string, Map<string, { value: number }>> }>>()

  /** A recorded run (every trigger of serve records through the workspace's store). */
  recordRun(run: Pick<RunRecord, 'projectId' | 'flow' | 'trigger' | 'status' | 'durationMs'>): void {
    // A parked run's `waiting` record is not its end: it is counted once, when its final record comes
    // (with every active stretch in its duration); flowctl_waiting_runs shows it meanwhile.
    if (run.status === 'waiting') return
    let flows = this.#byLabels.get(run.projectId)
    if (!flows) this.#byLabels.set(run.projectId, (flows = new Map()))
    let counters = flows.get(run.flow)
    if (!counters) flows.set(run.flow, (counters = { histogram: this.#histogram(run.projectId, run.flow), runs: new Map() }))
    let statuses = counters.runs.get(run.trigger)
    if (!statuses) counters.runs.set(run.trigger, (statuses = new Map()))
    let counted = statuses.get(run.status)
    if (!counted) statuses.set(run.status, (counted = this.#runCounter(run.projectId, run.flow, run.trigger, run.status)))
    counted.value++

    const { histogram } = counters
    const seconds = run.durationMs / 1000
    // Per bucket, not cumulative: cumulated when written.
    for (let index = 0; index < DURATION_BUCKETS.length; index++) {
      if (seconds <= DURATION_BUCKETS[index]!) {
        histogram.buckets[index]!++
        break
      }
    }
    histogram.count++
    histogram.sum += seconds
  }

  #runCounter(project: string, flow: string, trigger: string, status: string): { value: number } {
    const key = `${project}\u0000${flow}\u0000${trigger}\u0000${status}`
    let counted = this.#runs.get(key)
    if (!counted) this.#runs.set(key, (counted = { labels: [project, flow, trigger, status], value: 0 }))
    return counted
  }

  #histogram(project: string, flow: string): DurationHistogram {
    const flowKey = `${project}\u0000${flow}`
    let histogram = this.#durations.get(flowKey)
    if (!histogram) this.#durations.set(flowKey, (histogram = { project, flow, buckets: DURATION_BUCKETS.map(() => 0), count: 0, sum: 0 }))
    return histogram
  }

  /** A request refused before a run, by HTTP status (as /status counts them). */
  countRejection(projectId: string, status: number): void {
    const key = `${projectId}\u0000${status}`
    const counted = this.#rejections.get(key)
    if (counted) counted.value++
    else this.#rejections.set(key, { labels: [projectId, String(status)], value: 1 })
  }

  /** The flowctl_* families in the text exposition format, for the projects in `gauges` (the scraper's). */
  familiesText(gauges: readonly ProjectGauges[], visible: (projectId: string) => boolean): string {
    const out: string[] = []
    family(out, 'flowctl_runs_total', 'counter', 'Runs recorded, by project, flow, trigger and status.')
    for (const { labels, value } of this.#runs.values()) {
      if (visible(labels[0])) out.push(sample('flowctl_runs_total', { project: labels[0], flow: labels[1], trigger: labels[2], status: labels[3] }, value))
    }
    family(out, 'flowctl_run_duration_seconds', 'histogram', 'How long runs took, by project and flow.')
    for (const histogram of this.#durations.values()) if (visible(histogram.project)) histogramLines(out, histogram)
    family(out, 'flowctl_rejections_total', 'counter', 'Requests refused before a run (401, 400, 404, 405, 413, 415, 429, 503), by project and HTTP status.')
    for (const { labels, value } of this.#rejections.values()) {
      if (visible(labels[0])) out.push(sample('flowctl_rejections_total', { project: labels[0], code: labels[1] }, value))
    }
    gaugeFamily(out, 'flowctl_async_queue_depth', 'Async runs waiting in the queue.', gauges, (g) => g.asyncQueueDepth)
    gaugeFamily(out, 'flowctl_waiting_runs', 'Runs parked at a callback wait or a long sleep, not finished yet.', gauges, (g) => g.waitingRuns)
    gaugeFamily(
      out,
      'flowctl_schedule_lag_seconds',
      'Seconds the scheduler is behind: time since the last tick beyond one minute.',
      gauges,
      (g) => g.scheduleLagSeconds,
    )
    gaugeFamily(out, 'flowctl_store_up', "Whether the project's store is open (1) or unavailable (0).", gauges, (g) => (g.storeUp ? 1 : 0))
    return out.join('\n') + '\n'
  }
}

let defaultRegistry: Promise<Registry> | null = null

/** The process's default metrics (prom-client's collectDefaultMetrics), collected from the first scrape on. */
export async function defaultMetricsText(): Promise<string> {
  defaultRegistry ??= import('prom-client').then(({ Registry, collectDefaultMetrics }) => {
    const registry = new Registry()
    collectDefaultMetrics({ register: registry })
    return registry
  })
  return (await defaultRegistry).metrics()
}

function family(out: string[], name: string, type: string, help: string): void {
  out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`)
}

function gaugeFamily(out: string[], name: string, help: string, gauges: readonly ProjectGauges[], read: (g: ProjectGauges) => number | null): void {
  family(out, name, 'gauge', help)
  for (const gauge of gauges) {
    const value = read(gauge)
    if (value !== null) out.push(sample(name, { project: gauge.projectId }, value))
  }
}

function histogramLines(out: string[], h: DurationHistogram): void {
  let cumulative = 0
  DURATION_BUCKETS.forEach((bound, i) => {
    cumulative += h.buckets[i]!
    out.push(sample('flowctl_run_duration_seconds_bucket', { project: h.project, flow: h.flow, le: String(bound) }, cumulative))
  })
  out.push(sample('flowctl_run_duration_seconds_bucket', { project: h.project, flow: h.flow, le: '+Inf' }, h.count))
  out.push(sample('flowctl_run_duration_seconds_sum', { project: h.project, flow: h.flow }, h.sum))
  out.push(sample('flowctl_run_duration_seconds_count', { project: h.project, flow: h.flow }, h.count))
}

function sample(name: string, labels: Record<string, string>, value: number): string {
  const text = Object.entries(labels)
    .map(([label, v]) => `${label}="${escapeLabel(v)}"`)
    .join(',')
  return `${name}{${text}} ${Number.isFinite(value) ? value : 'NaN'}`
}

/** The exposition format's escapes: backslash, double quote and line feed. */
function escapeLabel(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')
}
