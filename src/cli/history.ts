import type { Command } from 'commander'
import { FlowctlError } from '../errors.js'
import type { RunRecord, StoredRun } from '../model/store.js'
import { describeHttpFailure, failedHttpOf } from '../flow/failed-http.js'
import { openProject, projectDir, type CommandContext } from './context.js'
import type { Output } from './output.js'
import { jsonFlag, projectFlag } from './flags.js'

// oxlint-disable-next-line no-control-regex -- matching them is the point
const CONTROL_CHARACTERS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g

interface HistoryFlags {
  project?: string
  flow?: string
  status?: string
  limit?: string
}

export function defineHistoryCommand(program: Command, context: CommandContext): void {
  const history = program
    .command('history')
    .description('list run history, newest first')
    .addOption(projectFlag())
    .option('--flow <slug>', 'only runs of this flow')
    .option('--status <status>', 'only runs with this status: success, error or skipped')
    .option('--limit <n>', 'at most this many runs (default 20)')
    .addOption(jsonFlag('print the records as JSON'))
    .action(async (flags: HistoryFlags) => {
      const status = flags.status
      if (status !== undefined && status !== 'success' && status !== 'error' && status !== 'skipped') {
        throw new FlowctlError('USAGE', `--status expects success, error or skipped, got "${status}"`)
      }
      const limit = flags.limit === undefined ? 20 : Number(flags.limit)
      if (!Number.isInteger(limit) || limit < 1) throw new FlowctlError('USAGE', `--limit expects a positive whole number, got "${flags.limit}"`)
      const { project, store } = await openProject(context, projectDir(context, flags.project), { printProblems: false })
      try {
        const runs = await store.history.listRuns({ projectId: project.settings.projectId, flow: flags.flow, status, limit })
        if (context.output.json) context.output.data(runs)
        else printRuns(context.output, runs)
      } finally {
        await store.close()
      }
    })

  history
    .command('show')
    .description('show one run record')
    .argument('<runId>', 'the run id (X-Run-Id, or from `flowctl history`)')
    .addOption(projectFlag())
    .addOption(jsonFlag('print the record as JSON'))
    .action(async (runId: string, flags: { project?: string }) => {
      // Options given before `show` belong to the parent command.
      const parentProject = (history.opts() as HistoryFlags).project
      const { project, store } = await openProject(context, projectDir(context, flags.project ?? parentProject), { printProblems: false })
      try {
        const run = await store.history.getRun(project.settings.projectId, runId)
        if (!run) throw new FlowctlError('RUN_NOT_FOUND', `no run with id "${runId}" in project ${project.settings.projectId}`)
        if (context.output.json) context.output.data(run)
        else printRun(context.output, run)
      } finally {
        await store.close()
      }
    })
}

function printRuns(output: Output, runs: RunRecord[]): void {
  if (runs.length === 0) {
    output.line('no runs yet')
    return
  }
  // Columns as wide as their longest value (a long slug widens its column instead of shifting the rest).
  const header = ['STARTED', 'RUN ID', 'FLOW', 'METHOD', 'STATUS', 'HTTP', 'MS', 'ERROR']
  const rows = runs.map((run) => [
    run.startedAt,
    run.id,
    run.flow,
    run.method,
    run.status,
    String(run.httpStatus ?? '-'),
    String(run.durationMs),
    run.status === 'error' ? `${run.failedNodeId ?? '-'}: ${run.error ?? ''}` : run.status === 'skipped' ? (run.error ?? '') : '',
  ])
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => row[i]!.length)))
  const format = (cells: string[], paint: (text: string, column: number) => string) =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : i === 6 ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!)))
      .map(paint)
      .join('  ')
      .trimEnd()
  output.line(format(header, (text) => output.color.dim(text)))
  for (const [index, cells] of rows.entries()) {
    const status = runs[index]!.status
    const paint = status === 'success' ? output.color.green : status === 'skipped' ? output.color.yellow : output.color.red
    output.line(format(cells, (text, column) => (column === 4 ? paint(text) : text)))
  }
}

function printRun(output: Output, run: StoredRun): void {
  const rows: [string, string][] = [
    ['id', run.id],
    ['flow', run.flow],
    ['trigger', `${run.trigger} (${run.method})`],
    ['started', run.startedAt],
    ...(run.scheduledFor ? ([['scheduled for', run.scheduledFor]] as [string, string][]) : []),
    ['duration', `${run.durationMs} ms`],
    ['status', run.status],
    ['http status', String(run.httpStatus ?? '-')],
    ['ports', run.ports.map((p) => `${p.nodeId}→${p.port}`).join(', ') || '-'],
  ]
  if (run.replayOf) rows.push(['replay of', run.replayOf])
  if (run.resumedFrom) rows.push(['resumed from', `${run.resumedFrom} (the steps before it reused from ${run.replayOf ?? 'the failed run'})`])
  if (run.status === 'error') rows.push(['failed node', run.failedNodeId ?? '-'], ['error', run.error ?? '-'])
  const failedHttp = failedHttpOf(run.trace, run.failedNodeId)
  if (failedHttp) {
    const where = failedHttp.flow ? ` (node ${failedHttp.nodeId} of flow ${failedHttp.flow})` : ''
    rows.push(['http call', `${describeHttpFailure(failedHttp.http)}${where}`])
  }
  for (const [label, value] of rows) output.line(`${output.color.dim(label.padEnd(12))} ${value}`)
  // The answer's body on lines of its own: it is often an upstream's error page or JSON.
  if (failedHttp?.http.body) {
    output.line(output.color.dim('answer body (first 2 KiB)'))
    // Control characters from an upstream (terminal escapes) are shown as U+FFFD, never sent to the terminal.
    for (const line of failedHttp.http.body.split('\n')) output.line(`  ${line.replace(CONTROL_CHARACTERS, '\uFFFD')}`)
  }
  printDetails(output, run)
}

/** The stored input and every step (SPEC §14), or why they are missing. */
function printDetails(output: Output, run: StoredRun): void {
  const { dim } = output.color
  if (!run.input && !run.trace) {
    output.line(dim('input and steps were not kept for this run (history.keep in flowctl.yaml)'))
    return
  }
  if (run.input) {
    output.line(dim('input'))
    for (const location of ['body', 'path', 'query', 'headers'] as const) {
      const value = run.input[location]
      if (value === undefined || (location !== 'body' && Object.keys(value as object).length === 0)) continue
      const label = location === 'body' && run.input.bodyType ? `${location} (${run.input.bodyType})` : location
      output.line(`  ${label.padEnd(8)} ${JSON.stringify(value)}`)
    }
    if (run.input.cut) output.line(output.color.yellow('  input was cut at limits.storedInputBytes (it cannot be replayed)'))
  }
  if (run.trace) {
    output.line(dim(`steps (${run.trace.steps.length}, ${run.trace.durationMs} ms)`))
    run.trace.steps.forEach((step, index) => {
      const failed = run.failedNodeId === step.nodeId && index === run.trace!.steps.length - 1 && run.status === 'error'
      const port = step.port ? ` → ${step.port}` : ''
      const mark = failed ? output.color.red(' failed') : step.reused ? dim(' reused') : ''
      output.line(`  ${String(index + 1).padStart(2)}. ${step.name} (${step.type}, ${step.nodeId})${port}  ${step.durationMs} ms${mark}`)
      output.line(`      ${JSON.stringify(step.output)}`)
    })
    if (run.trace.cut) output.line(output.color.yellow('  outputs were cut at limits.traceBytes'))
  }
}
