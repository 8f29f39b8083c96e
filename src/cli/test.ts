// `flowctl test`: runs the cases of tests/**/*.test.yaml (SPEC §15). Exit 0 when every case passes,
// 1 when one fails (or there are none), 2 when a flow or test file is broken.
import type { Command } from 'commander'
import { FlowctlError } from '../errors.js'
import { failureLines } from '../testing/report.js'
import type { CaseResult } from '../testing/run-case.js'
import type { TestPass } from '../testing/session.js'
import { projectDir, type CommandContext } from './context.js'
import { jsonFlag, projectFlag } from './flags.js'

interface TestFlags {
  project?: string
  flow?: string
  json?: boolean
  reporter: string
  out?: string
  coverage?: boolean
  watch?: boolean
}

const REPORTERS = ['default', 'junit']

export function defineTestCommand(program: Command, context: CommandContext): void {
  program
    .command('test')
    .description('run the flow tests in tests/**/*.test.yaml (mocked http, in-memory store)')
    .addOption(projectFlag())
    .option('--flow <slug>', 'only the tests of this flow')
    .addOption(jsonFlag('print { ok, passed, failed, cases, coverage } as JSON'))
    .option('--reporter <name>', `default, or junit for JUnit XML (to --out FILE, else standard output)`, 'default')
    .option('--out <file>', 'where --reporter junit writes its XML')
    .option('--coverage', 'list per flow the nodes and ports no case reached')
    .option('--watch', 'run again whenever a flow, test or project file changes')
    .action(async (flags: TestFlags) => {
      if (!REPORTERS.includes(flags.reporter)) throw new FlowctlError('USAGE', `--reporter must be one of ${REPORTERS.join(', ')} (got "${flags.reporter}")`)
      if (flags.out !== undefined && flags.reporter !== 'junit') throw new FlowctlError('USAGE', '--out is where --reporter junit writes; add --reporter junit')
      const dir = projectDir(context, flags.project)
      if (flags.watch) {
        const { watchTests } = await import('./test-watch.js')
        context.exitCode = await watchTests(context, dir, () => testOnce(context, dir, flags), flags.out ? [flags.out] : [])
      } else {
        context.exitCode = await testOnce(context, dir, flags)
      }
    })
}

/** One pass: runs and prints; resolves to the exit code. */
async function testOnce(context: CommandContext, dir: string, flags: TestFlags): Promise<number> {
  const { runTestPass } = await import('../testing/session.js')
  const { output } = context
  // JUnit on standard output takes it over; the human lines are left out.
  const junitToStdout = flags.reporter === 'junit' && flags.out === undefined
  const quiet = output.json || junitToStdout
  const pass = await runTestPass(dir, {
    env: context.env,
    flow: flags.flow,
    coverage: flags.coverage,
    onCase: quiet ? undefined : (result) => printCase(context, result),
  })
  if (pass.kind === 'broken') {
    // CI still gets its report: the broken files become testcases with an <error> (SPEC §20).
    if (flags.reporter === 'junit') await writeJunit(context, pass, flags.out)
    if (output.json)
      output.data({ ok: false, problems: pass.problems.map(({ file, line, column, message }) => ({ file, line, column, message })), errors: [pass.reason] })
    else {
      output.problems(pass.problems)
      output.error(output.color.red(`error: ${pass.reason}`))
    }
    return 2
  }
  if (pass.kind === 'empty') {
    if (output.json) output.data({ ok: false, passed: 0, failed: 0, cases: [], errors: [pass.reason] })
    else output.error(output.color.red(`error: ${pass.reason}`))
    return 1
  }
  const passed = pass.results.filter((result) => result.ok).length
  const failed = pass.results.length - passed
  if (flags.reporter === 'junit') await writeJunit(context, pass, flags.out)
  if (output.json) {
    output.data({
      ok: failed === 0,
      passed,
      failed,
      durationMs: pass.durationMs,
      cases: pass.results.map(({ reached: _reached, ...result }) => result),
      ...(pass.coverage ? { coverage: pass.coverage } : {}),
    })
  } else if (!junitToStdout) {
    if (pass.coverage) printCoverage(context, pass.coverage)
    const paint = failed ? output.color.red : output.color.green
    output.line(paint(`${passed} passed, ${failed} failed`) + output.color.dim(` (${pass.durationMs} ms)`))
  }
  return failed === 0 ? 0 : 1
}

function printCase(context: CommandContext, result: CaseResult): void {
  const { output } = context
  const { color } = output
  const title = `${result.file} › ${result.name}` + color.dim(` (${Math.round(result.durationMs)} ms)`)
  if (result.ok) {
    output.line(`${color.green('✓')} ${title}`)
    return
  }
  output.line(`${color.red('✗')} ${title}`)
  for (const line of failureLines(result)) {
    const painted = line.startsWith('  - ') ? color.green(line) : line.startsWith('  + ') ? color.red(line) : line
    output.line(`    ${painted}`)
  }
}

function printCoverage(context: CommandContext, coverage: NonNullable<Extract<TestPass, { kind: 'ran' }>['coverage']>): void {
  const { output } = context
  output.line('')
  output.line('coverage (nodes and ports reached by some case):')
  const width = Math.max(...coverage.map((flow) => flow.flow.length))
  for (const flow of coverage) {
    const full = flow.nodes.missed.length === 0 && flow.ports.missed.length === 0
    const paint = full ? output.color.green : output.color.yellow
    output.line(
      `  ${paint(`${flow.percent}%`.padEnd(7))}${flow.flow.padEnd(width)}  ${output.color.dim(`nodes ${flow.nodes.reached}/${flow.nodes.total}, ports ${flow.ports.taken}/${flow.ports.total}`)}`,
    )
    if (flow.nodes.missed.length) output.line(`           nodes never reached: ${flow.nodes.missed.join(', ')}`)
    if (flow.ports.missed.length) output.line(`           ports never taken: ${flow.ports.missed.join(', ')}`)
  }
  output.line('')
}

async function writeJunit(context: CommandContext, pass: Extract<TestPass, { kind: 'ran' | 'broken' }>, out: string | undefined): Promise<void> {
  const { junitBrokenReport, junitReport } = await import('../testing/junit.js')
  const xml =
    pass.kind === 'ran'
      ? junitReport(pass.results, pass.project.settings.name)
      : junitBrokenReport(pass.problems, pass.reason, pass.projectName ?? 'flowctl test')
  if (out === undefined) {
    context.output.line(xml)
    return
  }
  const { mkdir, writeFile } = await import('node:fs/promises')
  const { dirname, resolve } = await import('node:path')
  const target = resolve(context.cwd, out)
  try {
    await mkdir(dirname(target), { recursive: true })
    await writeFile(target, xml.endsWith('\n') ? xml : `${xml}\n`)
  } catch (error) {
    throw new FlowctlError('IO_FAILED', `cannot write the JUnit report to ${out}: ${(error as Error).message}`, { cause: error })
  }
  if (!context.output.json) context.output.line(context.output.color.dim(`JUnit report written to ${out}`))
}
