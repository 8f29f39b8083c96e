import type { Command } from 'commander'
import { flowOf, openProject, projectDir, type CommandContext } from './context.js'
import { parseIsoFlag, printRuns, refuseFuture } from './schedule-time.js'
import { jsonFlag, projectFlag } from './flags.js'

export function defineBackfillCommand(program: Command, context: CommandContext): void {
  program
    .command('backfill')
    .description("run each due minute of a flow's schedule in a time range once, oldest first (minutes that already ran are skipped)")
    .argument('<slug>', 'the flow')
    .requiredOption('--from <iso>', 'first minute of the range (ISO 8601, included)')
    .requiredOption('--to <iso>', 'last minute of the range (ISO 8601, included; the future only with --dry-run)')
    .addOption(projectFlag())
    .option('--dry-run', 'print what would run and write nothing')
    .addOption(jsonFlag('print the result as JSON'))
    .action(async (slug: string, flags: { project?: string; from: string; to: string; dryRun?: boolean }) => {
      const from = parseIsoFlag('--from', flags.from)
      const to = parseIsoFlag('--to', flags.to)
      const dryRun = flags.dryRun === true
      refuseFuture('--to', to, new Date(), dryRun)
      const { project, store } = await openProject(context, projectDir(context, flags.project), { printProblems: false })
      try {
        const flow = flowOf(project, slug)
        const { runBackfill } = await import('../schedule/backfill.js')
        const { withSpinner } = await import('./spinner.js')
        const result = await withSpinner(context.output, 'backfilling', () => runBackfill({ project, store, flow, from, to, dryRun }))
        const { output } = context
        if (output.json) output.data(result)
        else {
          const range = `${result.from.slice(0, 16)}Z to ${result.to.slice(0, 16)}Z`
          const head = `backfill ${result.flow} ("${result.cron}" in ${result.timezone}), ${range}`
          const due = result.runs.length
          if (result.dryRun) {
            output.line(`${head} (dry run, nothing was run or written): ${due} due, would run ${due - result.alreadyRan}, already ran ${result.alreadyRan}`)
          } else {
            output.line(`${head}: ${due} due, ran ${result.ran}, errors ${result.errors}, already ran ${result.alreadyRan}`)
          }
          printRuns(output, result.runs, false, 50)
        }
        context.exitCode = result.ok && result.errors === 0 ? 0 : 1
      } finally {
        await store.close()
      }
    })
}
