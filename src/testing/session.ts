// One `flowctl test` pass: load the project and its test files, run every case, gather coverage.
import { isFlowctlError } from '../errors.js'
import { loadProject } from '../project/load.js'
import type { Problem, Project } from '../model/project.js'
import { flowCoverage, type FlowCoverage } from './coverage.js'
import { loadTests } from './discover.js'
import { runCase, type CaseResult } from './run-case.js'
import { flowsReachedFrom } from './test-file.js'

export type TestPass =
  /** Flow files or test files have errors: nothing ran (exit 2). */
  | { kind: 'broken'; problems: Problem[]; reason: string; projectName?: string }
  | { kind: 'empty'; reason: string }
  | { kind: 'ran'; project: Project; results: CaseResult[]; coverage: FlowCoverage[] | null; durationMs: number }

export interface TestPassOptions {
  env?: NodeJS.ProcessEnv
  flow?: string
  coverage?: boolean
  /** Called as each case finishes (the terminal prints a line per case as it goes). */
  onCase?: (result: CaseResult) => void
}

export async function runTestPass(dir: string, options: TestPassOptions = {}): Promise<TestPass> {
  const began = performance.now()
  let project: Project
  try {
    project = await loadProject(dir, { env: options.env })
  } catch (error) {
    // A broken flowctl.yaml is a broken project, like a broken flow file: exit 2, with positions.
    if (!isFlowctlError(error) || error.code !== 'PROJECT_INVALID') throw error
    return { kind: 'broken', problems: error.problems.filter((problem) => problem.severity === 'error'), reason: error.message }
  }
  const flowProblems = project.problems.filter((problem) => problem.severity === 'error')
  const projectName = project.settings.name
  if (flowProblems.length)
    return { kind: 'broken', problems: flowProblems, reason: 'the flow files have errors; fix them first (see flowctl validate)', projectName }
  if (options.flow !== undefined && !project.flows.has(options.flow)) {
    const known = [...project.flows.keys()].sort().join(', ') || 'none'
    return { kind: 'broken', problems: [], reason: `--flow: there is no flow "${options.flow}" (flows: ${known})`, projectName }
  }
  const tests = await loadTests(project, { flow: options.flow })
  if (tests.problems.some((problem) => problem.severity === 'error')) {
    const files = new Set(tests.problems.map((problem) => problem.file)).size
    return { kind: 'broken', problems: tests.problems, reason: `${files} test file${files === 1 ? ' has' : 's have'} errors; no case ran`, projectName }
  }
  if (tests.files.length === 0) {
    const which = options.flow === undefined ? '' : ` for flow "${options.flow}"`
    return { kind: 'empty', reason: `no test files${which} in tests/ (files named *.test.yaml; flowctl init writes an example)` }
  }
  const results: CaseResult[] = []
  for (const file of tests.files) {
    for (const testCase of file.cases) {
      const result = await runCase(project, file, testCase)
      results.push(result)
      options.onCase?.(result)
    }
  }
  let coverage: FlowCoverage[] | null = null
  if (options.coverage) {
    const flows = options.flow === undefined ? project.flows.values() : flowsReachedFrom(project.flows.get(options.flow)!, project)
    coverage = flowCoverage(
      flows,
      results.flatMap((result) => result.reached),
    )
  }
  return { kind: 'ran', project, results, coverage, durationMs: Math.round(performance.now() - began) }
}
