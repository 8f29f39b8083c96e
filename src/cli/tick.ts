import type { Command } from 'commander'
import { FlowctlError } from '../errors.js'
import { openProject, projectDir, type CommandContext } from './context.js'

export function defineTickCommand(program: Command, context: CommandContext): void {
  program
    .command('tick')
    .description('run one scheduler tick: the schedules due this minute, alerts and digests (for the system crontab)')
    .option('--project <dir>', 'project folder (default: the current folder)')
    .option('--at <iso>', 'pretend the tick happens at this time (ISO 8601)')
    .option('--json', 'print the tick summary as JSON')
    .action(async (flags: { project?: string; at?: string }) => {
      const at = flags.at === undefined ? new Date() : new Date(flags.at)
      if (Number.isNaN(at.getTime())) throw new FlowctlError('USAGE', `--at expects an ISO 8601 time, got "${flags.at}"`)
      const { project, store } = await openProject(context, projectDir(context, flags.project))
      try {
        const { runTick } = await import('../schedule/tick.js')
        const { withSpinner } = await import('./spinner.js')
        const summary = await withSpinner(context.output, 'ticking', () => runTick({ targets: [{ project, store }], at }))
        const { output } = context
        if (output.json) output.data(summary)
        else {
          output.line(`tick ${summary.at}: ran ${summary.ran}, errors ${summary.errors}`)
          output.line(`alerts ${summary.alertsSent}/${summary.alertsChecked} sent, digests ${summary.digestsSent}/${summary.digestsChecked} sent`)
        }
        // A tick with failed runs exits 1 so that cron reports it; the runs are in history either way.
        context.exitCode = summary.ok && summary.errors === 0 ? 0 : 1
      } finally {
        await store.close()
      }
    })
}
