import type { Command } from 'commander'
import { openProject, projectDir, type CommandContext } from './context.js'
import { parseIsoFlag, printRuns, refuseFuture } from './schedule-time.js'
import { jsonFlag, projectFlag } from './flags.js'

export function defineTickCommand(program: Command, context: CommandContext): void {
  program
    .command('tick')
    .description('run one scheduler tick: the schedules due this minute (and missed ones with catchUp), alerts and digests (for the system crontab)')
    .addOption(projectFlag())
    .option('--at <iso>', 'pretend the tick happens at this time (ISO 8601; the future only with --dry-run)')
    .option('--dry-run', 'print what would run and write nothing')
    .addOption(jsonFlag('print the tick summary as JSON'))
    .action(async (flags: { project?: string; at?: string; dryRun?: boolean }) => {
      const now = new Date()
      const at = flags.at === undefined ? now : parseIsoFlag('--at', flags.at)
      const dryRun = flags.dryRun === true
      refuseFuture('--at', at, now, dryRun)
      const { project, store } = await openProject(context, projectDir(context, flags.project))
      // Spans (SPEC §23): the SDK is imported only when this project exports them; sent before exiting.
      const { enableTracing, shutdownTracing } = await import('../telemetry/tracing.js')
      await enableTracing([project], (line) => context.output.error(line))
      try {
        const { runTick } = await import('../schedule/tick.js')
        const { withSpinner } = await import('./spinner.js')
        const summary = await withSpinner(context.output, 'ticking', () => runTick({ targets: [{ project, store }], at, dryRun }))
        const { output } = context
        if (output.json) output.data(summary)
        else if (dryRun) {
          output.line(`tick ${summary.at} (dry run, nothing was run or written): would run ${summary.runs.length}`)
          printRuns(output, summary.runs, false)
        } else {
          output.line(`tick ${summary.at}: ran ${summary.ran}, errors ${summary.errors}`)
          printRuns(output, summary.runs, false)
          output.line(`alerts ${summary.alertsSent}/${summary.alertsChecked} sent, digests ${summary.digestsSent}/${summary.digestsChecked} sent`)
        }
        // A tick with failed runs exits 1 so that cron reports it; the runs are in history either way.
        context.exitCode = summary.ok && summary.errors === 0 ? 0 : 1
      } finally {
        await store.close()
        await shutdownTracing()
      }
    })
}
