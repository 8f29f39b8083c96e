import type { Command } from 'commander'
import { FlowctlError } from '../errors.js'
import type { OutcomeAnswer } from '../flow/answer.js'
import type { RunOutcome } from '../model/run.js'
import { collect, flowOf, openProject, parsePairs, projectDir, type CommandContext } from './context.js'
import type { TraceStep } from '../model/run.js'
import { jsonFlag, projectFlag } from './flags.js'

interface RunFlags {
  project?: string
  body?: string
  param?: string[]
  query?: string[]
  header?: string[]
  trace?: boolean
  json?: boolean
  replay?: string
  retryFailed?: string
}

export function defineRunCommand(program: Command, context: CommandContext): void {
  program
    .command('run')
    .description('run a flow once, locally, through the same pipeline as the Run API (auth is not checked)')
    .argument('[slug]', 'the flow to run (not needed with --replay)')
    .addOption(projectFlag())
    .option('--body <json>', 'request body as JSON (text for a Start with accept: [text]), or @file to read it from a file')
    .option('--param <name=value>', 'path parameter (repeatable)', collect)
    .option('--query <name=value>', 'query parameter (repeatable)', collect)
    .option('--header <name=value>', 'request header (repeatable)', collect)
    .option('--trace', 'also print the trace of every step')
    .addOption(jsonFlag('print { status, body, runId } as JSON'))
    .option('--replay <runId>', "run a recorded run's input again through the flow's current version")
    .option('--retry-failed <runId>', 'retry a failed run from its failed node: the steps before it are reused, not run again')
    .action(async (slug: string | undefined, flags: RunFlags) => {
      const replayFlag = replayFlagOf(flags)
      if (replayFlag !== null) {
        if (flags.body !== undefined || flags.param || flags.query || flags.header) {
          throw new FlowctlError('USAGE', `${replayFlag} sends the recorded input; leave out --body, --param, --query and --header`)
        }
      } else if (slug === undefined) throw new FlowctlError('USAGE', 'which flow? flowctl run SLUG (or flowctl run --replay RUNID)')
      context.exitCode = await runCommand(context, slug, flags)
    })
}

/** Which replay flag was given (null: none); both at once is a usage error. */
function replayFlagOf(flags: RunFlags): '--replay' | '--retry-failed' | null {
  if (flags.replay !== undefined && flags.retryFailed !== undefined) {
    throw new FlowctlError('USAGE', '--replay runs the whole recorded run again and --retry-failed only from its failed node; give one of them')
  }
  return flags.replay !== undefined ? '--replay' : flags.retryFailed !== undefined ? '--retry-failed' : null
}

/** The --body text (or the @file's), unparsed: a text-only Start takes it as it is. */
async function readBodySource(context: CommandContext, text: string | undefined): Promise<{ source: string; origin: string } | undefined> {
  if (text === undefined) return undefined
  let source = text
  let origin = '--body'
  if (text.startsWith('@')) {
    const { readFile } = await import('node:fs/promises')
    const { resolve } = await import('node:path')
    origin = text.slice(1)
    try {
      source = await readFile(resolve(context.cwd, origin), 'utf8')
    } catch {
      throw new FlowctlError('IO_FAILED', `cannot read the body file ${origin}`)
    }
  }
  return { source, origin }
}

function parseBodySource(read: { source: string; origin: string } | undefined, textOnly: boolean): unknown {
  if (read === undefined) return undefined
  if (textOnly) return read.source
  try {
    return JSON.parse(read.source)
  } catch (error) {
    throw new FlowctlError('USAGE', `${read.origin} is not valid JSON: ${(error as Error).message}`)
  }
}

async function runCommand(context: CommandContext, slugArgument: string | undefined, flags: RunFlags): Promise<number> {
  const { output } = context
  // Parsed once the flow is known: a text-only Start takes the text as it is, others JSON.
  const bodySource = await readBodySource(context, flags.body)
  const path = parsePairs(flags.param, '--param')
  const query = parsePairs(flags.query, '--query')
  const headers = Object.fromEntries(Object.entries(parsePairs(flags.header, '--header')).map(([k, v]) => [k.toLowerCase(), v]))

  const replayOf = flags.replay ?? flags.retryFailed
  const { project, store } = await openProject(context, projectDir(context, flags.project), {
    printProblems: false,
    check: (loaded) => void (replayOf === undefined && flowOf(loaded, slugArgument!)),
  })
  // Spans (SPEC §23): the SDK is imported only when this project exports them; sent before exiting.
  const { enableTracing, shutdownTracing } = await import('../telemetry/tracing.js')
  await enableTracing([project], (line) => context.output.error(line))
  try {
    const { withSpinner } = await import('./spinner.js')
    let outcome: RunOutcome
    let slug: string
    if (replayOf !== undefined) {
      const runId = replayOf
      const from = flags.retryFailed !== undefined ? 'failed' : undefined
      const { replayRun } = await import('../flow/replay.js')
      const replay = await withSpinner(output, from ? `retrying run ${runId} from its failed node` : `replaying run ${runId}`, () =>
        replayRun({ project, store, runId, trigger: 'cli', method: 'CLI', trace: flags.trace, from }),
      )
      if (slugArgument !== undefined && slugArgument !== replay.flow.slug) {
        output.error(output.color.yellow(`run ${runId} belongs to flow ${replay.flow.slug}, not ${slugArgument}; replayed it on ${replay.flow.slug}`))
      }
      outcome = replay.outcome
      slug = replay.flow.slug
    } else {
      slug = slugArgument!
      const flow = flowOf(project, slug)
      const textOnly = flow.start?.accept.length === 1 && flow.start.accept[0] === 'text'
      const body = parseBodySource(bodySource, textOnly)
      const { runFlow } = await import('../flow/engine.js')
      outcome = await withSpinner(output, `running ${slug}`, () =>
        runFlow({ project, flow, store, trigger: 'cli', method: 'CLI', input: { body, path, query, headers }, trace: flags.trace }),
      )
    }

    const { answerOutcome } = await import('../flow/answer.js')
    return reportOutcome(output, outcome, answerOutcome(outcome), { ...flags, replayOf }, slug)
  } finally {
    await store.close()
    await shutdownTracing()
  }
}

/** The answer of the run as the Run API would give it (answerOutcome); the exit status of the command. */
function reportOutcome(
  output: CommandContext['output'],
  outcome: RunOutcome,
  answer: OutcomeAnswer,
  flags: RunFlags & { replayOf: string | undefined },
  slug: string,
): number {
  if (outcome.kind === 'invalid') {
    if (output.json) output.data({ status: answer.status, body: answer.body, runId: null })
    else {
      output.error(output.color.red('400 invalid input'))
      for (const error of outcome.errors) output.error(`  ${error}`)
    }
    return answer.error!.exitCode
  }
  const { replayOf } = flags
  const resumedFrom = flags.retryFailed !== undefined ? outcome.record.resumedFrom : null
  if (output.json) {
    const replayed = replayOf !== undefined ? { replayOf, ...(resumedFrom ? { resumedFrom } : {}) } : {}
    output.data({ status: answer.status, body: answer.body ?? null, runId: outcome.runId, ...replayed, ...(flags.trace ? { trace: outcome.trace } : {}) })
  } else {
    const paint = answer.status < 400 ? output.color.green : output.color.red
    const replayNote =
      replayOf === undefined ? '' : resumedFrom ? `, a retry of ${replayOf} from node ${resumedFrom} (${slug})` : `, a replay of ${replayOf} (${slug})`
    output.line(paint(`${answer.status}`) + output.color.dim(`  run ${outcome.runId}${replayNote}`))
    // The message of a failed run's error names the node and the reason.
    if (answer.error) output.error(output.color.red(answer.error.message))
    // A text answer (an End with a non-JSON content-type) is printed as it is.
    if (answer.text && typeof answer.body === 'string') output.line(answer.body)
    else if (answer.body !== undefined) output.line(JSON.stringify(answer.body, null, 2))
    if (flags.trace && outcome.trace) {
      output.line(output.color.dim(`trace (${outcome.trace.durationMs} ms):`))
      printSteps(output, outcome.trace.steps, '  ')
    }
  }
  // A failed run exits as its error says; an End that answers 4xx/5xx is no error of flowctl's, but the command still fails (SPEC §9).
  if (answer.error) return answer.error.exitCode
  return answer.status < 400 ? 0 : 1
}

/** Trace steps, one line each plus the output; attempts are numbered and sub-flow steps indented under their step. */
function printSteps(output: { line(text: string): void; color: { dim(text: string): string } }, steps: TraceStep[], indent: string): void {
  for (const step of steps) {
    const attempt = step.attempt === undefined ? '' : ` attempt ${step.attempt}`
    // A retry from the failed step did not run the steps before it: their outputs are the failed run's.
    const reused = step.reused ? output.color.dim(' reused') : ''
    output.line(`${indent}${step.nodeId} (${step.type})${attempt} ${step.port ? '→ ' + step.port : ''} ${step.durationMs} ms${reused}`)
    output.line(`${indent}  ${JSON.stringify(step.output)}`)
    for (const [index, call] of (step.calls ?? []).entries()) {
      output.line(output.color.dim(`${indent}  ↳ flow ${call.flow}${(step.calls?.length ?? 0) > 1 ? ` #${index + 1}` : ''}:`))
      printSteps(output, call.steps, `${indent}    `)
    }
  }
}
