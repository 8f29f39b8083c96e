import type { Command } from 'commander'
import { FlowctlError } from '../errors.js'
import type { CommandContext } from './context.js'
import { jsonFlag } from './flags.js'

export function defineInitCommand(program: Command, context: CommandContext): void {
  program
    .command('init')
    .description('create a new project from a template')
    .argument('[dir]', 'folder of the new project (default: --project or the current folder)')
    .option('--project <dir>', 'folder of the new project')
    .option('--template <name>', 'template from templates/ (default basic)', 'basic')
    .option('--id <projectId>', 'project id (default: from the folder name)')
    .option('--name <name>', 'project name (default: from the folder name)')
    .addOption(jsonFlag('print { ok, dir, projectId, files, merged, kept, warnings } as JSON'))
    .action(async (dir: string | undefined, flags: { project?: string; template: string; id?: string; name?: string }) => {
      const { createProjectFromTemplate, listTemplates } = await import('./templates.js')
      const { resolve, relative } = await import('node:path')
      const target = resolve(context.cwd, dir ?? flags.project ?? '.')
      const { stat } = await import('node:fs/promises')
      const existing = await stat(target).catch(() => null)
      if (existing && !existing.isDirectory()) {
        throw new FlowctlError('USAGE', `${target} is a file, not a folder; name a new or existing folder for the project`)
      }
      const templates = await listTemplates()
      if (!templates.includes(flags.template)) {
        throw new FlowctlError('USAGE', `no template "${flags.template}" (templates: ${templates.join(', ')})`)
      }
      const result = await createProjectFromTemplate(target, flags.template, { projectId: flags.id, name: flags.name })
      const { output } = context
      const warnings = result.machineSchemaLinks.length ? [machineLinkWarning(result.machineSchemaLinks)] : []
      if (output.json) {
        output.data({ ok: true, dir: target, projectId: result.projectId, files: result.files, merged: result.merged, kept: result.kept, warnings })
      } else {
        for (const warning of warnings) output.error(output.color.yellow(`warning: ${warning}`))
        const shown = relative(context.cwd, target) || '.'
        output.line(output.color.green(`created project "${result.projectId}" in ${shown}`))
        for (const file of result.files) output.line(`  ${file}`)
        for (const file of result.merged) output.line(`  ${file} (flowctl's lines added)`)
        for (const file of result.kept) output.line(output.color.dim(`  ${file} (already there, kept as it was)`))
        output.line('')
        output.line('next:')
        if (shown !== '.') output.line(`  cd ${shown}`)
        output.line('  flowctl validate')
        output.line('  flowctl test')
        output.line('  flowctl run hello --query name=Ada')
        output.line('  flowctl serve')
      }
    })
}

/** flowctl is not a dependency of the project: the links name this machine's copy of the schemas. */
function machineLinkWarning(files: string[]): string {
  return (
    `the $schema links in ${files.join(' and ')} point to this machine's flowctl and will not resolve for a teammate; ` +
    'add flowctl to the devDependencies of a package.json in the project and change them to ../node_modules/flowctl/schema/flow.schema.json ' +
    '(flows) and ../node_modules/flowctl/schema/test.schema.json (tests), or run flowctl init again in a project that has it'
  )
}
