// What every command gets: the parsed global flags, the output and a way to set the exit code.
import { resolve } from 'node:path'
import { FlowctlError } from '../errors.js'
import type { Flow, Project } from '../model/project.js'
import { closestName } from '../project/suggest.js'
import type { Store } from '../model/store.js'
import type { Output, OutputStreams } from './output.js'

export interface CommandContext {
  output: Output
  /** The raw streams behind `output` (`serve` writes its log lines to them). */
  streams: OutputStreams
  cwd: string
  env: NodeJS.ProcessEnv
  debug: boolean
  exitCode: number
  /** Aborting it stops a long-running command (`serve`) as SIGTERM does. */
  signal?: AbortSignal
}

/** The project folder of `--project DIR` (default: the current folder). */
export function projectDir(context: CommandContext, option: string | undefined): string {
  return resolve(context.cwd, option ?? '.')
}

/**
 * Loads the project and opens its store. Problems of flow files are printed as warnings here
 * (the affected flows are simply absent); a broken flowctl.yaml throws.
 */
export async function openProject(
  context: CommandContext,
  dir: string,
  options: { printProblems?: boolean; check?: (project: Project) => void } = {},
): Promise<{ project: Project; store: Store }> {
  const { loadProject } = await import('../project/load.js')
  const { openProjectStore } = await import('../serve/project-store.js')
  const project = await loadProject(dir, { env: context.env })
  if (options.printProblems !== false && !context.output.json) {
    context.output.problems(project.problems.filter((p) => p.severity === 'error'))
  }
  // Before the store opens: a mistyped slug must not create .flowctl/ in the folder.
  options.check?.(project)
  const store = await openProjectStore(project, { env: context.env })
  return { project, store }
}

/** Parses repeated `name=value` flags into an object. */
export function parsePairs(values: string[] | undefined, flag: string): Record<string, string> {
  const pairs: Record<string, string> = {}
  for (const value of values ?? []) {
    const at = value.indexOf('=')
    if (at <= 0) throw new FlowctlError('USAGE', `${flag} expects name=value, got "${value}"`)
    pairs[value.slice(0, at)] = value.slice(at + 1)
  }
  return pairs
}

export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value]
}

/** The loaded flow of a slug; a flow whose file failed to load, or an unknown slug, is a clear error. */
export function flowOf(project: Project, slug: string): Flow {
  const flow = project.flows.get(slug)
  if (flow) return flow
  const problems = project.problems.filter((p) => p.severity === 'error')
  if (problems.length) throw new FlowctlError('PROJECT_INVALID', `flow "${slug}" could not be loaded`, { problems })
  const slugs = [...project.flows.keys()].sort()
  const closest = closestName(slug, slugs)
  const hint = closest === null ? '' : `; did you mean "${closest}"?`
  throw new FlowctlError('FLOW_NOT_FOUND', `flow "${slug}" not found${hint} (flows: ${slugs.join(', ') || 'none'})`)
}
