import type { Command } from 'commander'
import { ERROR_CATALOG } from '../errors.js'
import { projectDir, type CommandContext } from './context.js'
import { jsonFlag, projectFlag } from './flags.js'

export function defineValidateCommand(program: Command, context: CommandContext): void {
  program
    .command('validate')
    .description('check flowctl.yaml and every flow file; report every problem with file:line:column')
    .addOption(projectFlag())
    .addOption(jsonFlag('print { ok, problems: [{ file, line, column, message }] }'))
    .action(async (flags: { project?: string }) => {
      const { validateProject } = await import('../project/validate.js')
      const { output } = context
      const result = await validateProject(projectDir(context, flags.project))
      if (output.json) {
        // Warnings keep the spec's problem shape; their message says they are warnings.
        const problems = result.problems.map(({ file, line, column, message, severity }) => ({
          file,
          line,
          column,
          message: severity === 'warning' ? `warning: ${message}` : message,
        }))
        output.data({ ok: result.ok, problems })
      } else {
        // The problems are what validate is asked for: standard output, so `validate | less` shows them.
        output.problems(result.problems, 'stdout')
        const errors = result.problems.filter((p) => p.severity === 'error').length
        const warnings = result.problems.length - errors
        const summary = `${errors} error${errors === 1 ? '' : 's'}, ${warnings} warning${warnings === 1 ? '' : 's'}`
        const checked = `${result.flows} flow${result.flows === 1 ? '' : 's'} checked`
        output.line(result.ok ? output.color.green(`${checked}: ok (${summary})`) : output.color.red(`${checked}: failed (${summary})`))
      }
      context.exitCode = result.ok ? 0 : ERROR_CATALOG.CHECK_FAILED.exitCode
    })
}
