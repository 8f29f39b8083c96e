import type { Command } from 'commander'
import { FlowctlError } from '../errors.js'
import { projectDir, type CommandContext } from './context.js'
import { jsonFlag, projectFlag } from './flags.js'

interface ExportFlags {
  project?: string
  out?: string
  format?: string
  serverUrl?: string
  check?: boolean
}

const DEFAULT_SERVER_URL = 'http://localhost:3000'

export function defineExportOpenApiCommand(program: Command, context: CommandContext): void {
  program
    .command('export-openapi')
    .description("write the project's OpenAPI 3.0.3 document (for CI)")
    .addOption(projectFlag())
    .option('--out <file>', 'write to this file (default: standard output)')
    .option('--format <format>', 'json or yaml (default: from --out, else json)')
    .option('--server-url <url>', `servers[0].url (default ${DEFAULT_SERVER_URL})`)
    .option('--check', 'exit 1 when --out differs from what would be written')
    .addOption(jsonFlag('print the result as JSON'))
    .action(async (flags: ExportFlags) => {
      const { readFile, writeFile } = await import('node:fs/promises')
      const { resolve } = await import('node:path')
      const format = flags.format ?? (flags.out && /\.ya?ml$/i.test(flags.out) ? 'yaml' : 'json')
      if (format !== 'json' && format !== 'yaml') throw new FlowctlError('USAGE', `--format expects json or yaml, got "${format}"`)
      if (flags.check && !flags.out) throw new FlowctlError('USAGE', '--check needs --out FILE: the committed document to compare')
      const serverUrl = flags.serverUrl ?? DEFAULT_SERVER_URL
      try {
        new URL(serverUrl)
      } catch {
        throw new FlowctlError('USAGE', `--server-url expects a URL, got "${serverUrl}"`)
      }

      const { loadProject } = await import('../project/load.js')
      const { generateOpenApi } = await import('../openapi/generate.js')
      const { formatOpenApi } = await import('../openapi/format.js')
      const project = await loadProject(projectDir(context, flags.project), { env: context.env })
      const errors = project.problems.filter((p) => p.severity === 'error')
      if (errors.length) throw new FlowctlError('PROJECT_INVALID', 'the project has problems; fix them before exporting', { problems: errors })
      const text = formatOpenApi(generateOpenApi(project, { serverUrl }), format)
      const { output } = context

      if (!flags.out) {
        output.line(text.replace(/\n$/, ''))
        return
      }
      const file = resolve(context.cwd, flags.out)
      if (flags.check) {
        const current = await readFile(file, 'utf8').catch(() => null)
        const upToDate = current === text
        if (output.json) output.data({ ok: upToDate, file: flags.out })
        else if (upToDate) output.line(output.color.green(`${flags.out} is up to date`))
        else output.error(output.color.red(`${flags.out} is out of date: run flowctl export-openapi --out ${flags.out}`))
        context.exitCode = upToDate ? 0 : 1
        return
      }
      await writeFile(file, text)
      if (output.json) output.data({ ok: true, file: flags.out })
      else output.line(`wrote ${flags.out}`)
    })
}
