// Checks that need every flow file: one slug per flow, the flows that call and each nodes run, and
// the flows named by notification rules, the OpenAPI operations' names.
import { checkCalls } from './check-calls.js'
import { checkCallbackWaits } from './check-waits.js'
import type { FlowFileResult } from './flow-file.js'
import type { Position, Problem, StartInfo } from '../model/project.js'
import { baseOperationId, slugSuffix, summaryOf } from './operation-names.js'
import type { SettingsResult } from './settings.js'
import { positionAt, type SourcePath, type YamlSource } from './yaml-source.js'

function problemAt(file: string, source: YamlSource | null, path: SourcePath, message: string, severity: Problem['severity']): Problem {
  const pos: Position = source ? positionAt(source, path) : { line: 1, column: 1 }
  return { file, ...pos, message, severity }
}

export function crossFileProblems(
  settings: SettingsResult,
  results: FlowFileResult[],
  flowsFolderMissing: boolean,
): { problems: Problem[]; failedFiles: Set<string> } {
  const problems: Problem[] = []
  const failedFiles = new Set<string>()

  const bySlug = new Map<string, FlowFileResult[]>()
  for (const result of results) if (result.slug !== null) bySlug.set(result.slug, [...(bySlug.get(result.slug) ?? []), result])
  for (const [slug, same] of bySlug) {
    if (same.length < 2) continue
    const files = same.map((r) => r.file).join(' and ')
    for (const result of same) {
      failedFiles.add(result.file)
      const message = `the flow slug "${slug}" is used by both ${files}; give each flow its own name`
      problems.push(problemAt(result.file, result.collector.source, result.slugAt, message, 'error'))
    }
  }

  for (const problem of [...checkCalls(results), ...checkCallbackWaits(results)]) {
    failedFiles.add(problem.result.file)
    problems.push(problemAt(problem.result.file, problem.result.collector.source, problem.at, problem.message, 'error'))
  }
  problems.push(...operationNameProblems(results.filter((result) => !failedFiles.has(result.file))))

  const { source } = settings
  if (flowsFolderMissing) {
    const folder = settings.settings.flows
    const at = (source?.data as { flows?: unknown } | null)?.flows === undefined ? [] : ['flows']
    problems.push(problemAt('flowctl.yaml', source, at, `the flows folder "${folder}" does not exist; the project has no flows`, 'warning'))
  }

  const known = new Set(bySlug.keys())
  const { alerts, digests } = settings.settings.notify
  for (const [list, rules] of [
    ['alerts', alerts],
    ['digests', digests],
  ] as const) {
    rules.forEach((rule, index) => {
      const written = (source?.data as { notify?: Record<string, { flows?: unknown }[]> } | null)?.notify?.[list]?.[index]?.flows
      rule.flows.forEach((slug, item) => {
        if (slug === '*' || known.has(slug)) return
        const at = Array.isArray(written) ? ['notify', list, index, 'flows', item] : ['notify', list, index, 'flows']
        const message = `notify.${list}: there is no flow with the slug "${slug}"${known.size ? ` (flows: ${[...known].join(', ')})` : ''}`
        problems.push(problemAt('flowctl.yaml', source, at, message, 'warning'))
      })
    })
  }
  return { problems, failedFiles }
}

/** Where a problem about a flow's Start node points: its `key` setting when written, else the node. */
function startAt(result: FlowFileResult, key: string | null): SourcePath {
  const start = result.flow!.start!
  const nodes = (result.collector.source?.data as { nodes?: Record<string, unknown>[] } | null)?.nodes
  const index = Array.isArray(nodes) ? nodes.findIndex((node) => node?.id === start.node.id) : -1
  if (index < 0) return []
  return key && nodes![index]?.[key] !== undefined ? ['nodes', index, key] : ['nodes', index]
}

/** "flows/a.yaml, flows/b.yaml and 3 more": a group named without flooding the line. */
function fileList(results: FlowFileResult[]): string {
  const names = results.map((r) => r.file)
  if (names.length <= 3) return `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`
  return `${names.slice(0, 3).join(', ')} and ${names.length - 3} more`
}

function groupBy(results: FlowFileResult[], keyOf: (start: StartInfo) => string): Map<string, FlowFileResult[]> {
  const groups = new Map<string, FlowFileResult[]>()
  for (const result of results) {
    const start = result.flow?.start
    if (!start?.http) continue // `http: false`: not an operation of the document
    const key = keyOf(start)
    groups.set(key, [...(groups.get(key) ?? []), result])
  }
  return groups
}

/**
 * Operations that would share an operationId or a summary (SPEC §20). The document stays valid (each
 * shared id gets `_<slug>`), but names a client generator turns into method names should be chosen.
 * An explicit `operationId` written twice is a mistake in each file; the seed's default
 * `<startNodeId>_<method>` shared by many flows is one warning per name, at its first file.
 */
function operationNameProblems(results: FlowFileResult[]): Problem[] {
  const problems: Problem[] = []
  const warn = (result: FlowFileResult, at: SourcePath, message: string) =>
    problems.push(problemAt(result.file, result.collector.source, at, message, 'warning'))
  for (const [id, same] of groupBy(results, baseOperationId)) {
    if (same.length < 2) continue
    const explicit = same.filter((result) => result.flow!.start!.operationId !== undefined)
    for (const result of explicit) {
      const message = `the OpenAPI operationId "${id}" is used by both ${fileList(same)}; give each start node its own operationId (the document appends each flow's slug)`
      warn(result, startAt(result, 'operationId'), message)
    }
    if (explicit.length > 0) continue
    const first = same[0]!
    const example = `${id}${slugSuffix(first.flow!)}`
    const message = `${same.length} operations would share the OpenAPI operationId "${id}" (${fileList(same)}), so each gets its flow's slug appended ("${example}"); set operationId on their start nodes to choose the names clients see`
    warn(first, startAt(first, null), message)
  }
  for (const [summary, same] of groupBy(results, summaryOf)) {
    if (same.length < 2) continue
    const message = `${same.length} OpenAPI operations share the summary "${summary}" (${fileList(same)}); set summary on their start nodes so API references tell them apart`
    warn(same[0]!, startAt(same[0]!, 'summary'), message)
  }
  return problems
}
