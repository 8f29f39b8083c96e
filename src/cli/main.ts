// The CLI entry: commander, global flags, one file per command, and the single place where
// errors become messages and exit codes: every FlowctlError exits with its code's `exitCode` from
// the catalog in src/errors.ts (0 success, 1 failed run or check, 2 usage error).
// Only bin/flowctl.js, the process's entry point, calls process.exit with what `main` resolves to.
import { Command, CommanderError } from 'commander'
import { readFileSync } from 'node:fs'
import { ERROR_CATALOG, FlowctlError, formatProblem, isFlowctlError, keepCatalogErrorFrames } from '../errors.js'
import { defineBackfillCommand } from './backfill.js'
import type { CommandContext } from './context.js'
import { defineDocumentsCommand } from './documents.js'
import { defineExportOpenApiCommand } from './export-openapi.js'
import { defineHistoryCommand } from './history.js'
import { defineInitCommand } from './init.js'
import { createOutput, whenPipeCloses, type OutputStreams } from './output.js'
import { defineRunCommand } from './run.js'
import { defineServeCommand } from './serve-command.js'
import { defineTestCommand } from './test.js'
import { defineTickCommand } from './tick.js'
import { defineUsersCommand } from './users.js'
import { defineValidateCommand } from './validate.js'

function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
  return pkg.version
}

export interface MainOptions extends Partial<OutputStreams> {
  cwd?: string
  /** Stops a long-running command (`serve`) as SIGTERM does: embedders and in-process tests. */
  signal?: AbortSignal
}

/** Runs one command line and resolves to its exit code. Never calls process.exit. */
export async function main(argv: string[], options: MainOptions = {}): Promise<number> {
  const streams: OutputStreams = {
    stdout: options.stdout ?? process.stdout,
    stderr: options.stderr ?? process.stderr,
    env: options.env ?? process.env,
  }
  const json = argv.includes('--json')
  // Stops a long-running command when asked (options.signal) or when its output pipe closes.
  const stop = new AbortController()
  const stopNow = () => stop.abort()
  options.signal?.addEventListener('abort', stopNow, { once: true })
  if (options.signal?.aborted) stop.abort()
  const unwatch = whenPipeCloses(streams, stopNow)
  const context: CommandContext = {
    output: createOutput(json, streams),
    streams,
    signal: stop.signal,
    cwd: options.cwd ?? process.cwd(),
    env: streams.env,
    debug: argv.includes('--debug'),
    exitCode: 0,
  }
  // --debug shows where an error came from, catalog errors included (they capture no frames otherwise).
  keepCatalogErrorFrames(context.debug)

  const program = new Command('flowctl')
    .description('Build, run and serve YAML workflow projects.')
    .version(packageVersion(), '-V, --version')
    .option('--debug', 'show stack traces of unexpected errors')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .configureOutput({
      writeOut: (text) => void streams.stdout.write(text),
      writeErr: (text) => void streams.stderr.write(text),
    })

  for (const define of [
    defineServeCommand,
    defineRunCommand,
    defineTickCommand,
    defineBackfillCommand,
    defineExportOpenApiCommand,
    defineValidateCommand,
    defineTestCommand,
    defineInitCommand,
    defineHistoryCommand,
    defineDocumentsCommand,
    defineUsersCommand,
  ]) {
    define(program, context)
  }
  for (const command of program.commands) command.exitOverride()

  try {
    await program.parseAsync(argv, { from: 'user' })
    return context.exitCode
  } catch (error) {
    return reportError(error, context)
  } finally {
    unwatch()
    options.signal?.removeEventListener('abort', stopNow)
  }
}

function reportError(error: unknown, context: CommandContext): number {
  const { output } = context
  if (error instanceof CommanderError) {
    // --help and --version end here with exit code 0; a bad flag or argument is a usage error.
    if (error.exitCode === 0 || error.code === 'commander.helpDisplayed' || error.code === 'commander.version') return 0
    return ERROR_CATALOG.USAGE.exitCode
  }
  if (isFlowctlError(error)) {
    if (output.json) {
      output.data({ ok: false, errors: error.problems.length ? error.problems.map(formatProblem) : [error.message] })
    } else {
      output.error(output.color.red(`error: ${error.message}`))
      output.problems(error.problems)
    }
    if (context.debug && error.stack) output.error(error.stack)
    return error.exitCode
  }
  const message = error instanceof Error ? error.message : String(error)
  output.error(output.color.red(`error: ${message}`))
  if (context.debug && error instanceof Error && error.stack) output.error(error.stack)
  else output.error('(run again with --debug for details)')
  return ERROR_CATALOG.INTERNAL.exitCode
}

export { FlowctlError }
