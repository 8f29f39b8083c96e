// Checks that need every flow file: one slug per flow, the flows that call and each nodes run, and
// the flows named by notification rules.
import { checkCalls } from './check-calls.js'
import type { FlowFileResult } from './flow-file.js'
import { operationIdOf, type Position, type Problem } from '../model/project.js'
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

  for (const problem of checkCalls(results)) {
    failedFiles.add(problem.result.file)
    problems.push(problemAt(problem.result.file, problem.result.collector.source, problem.at, problem.message, 'error'))
  }
  problems.push(...duplicateOperationIds(results.filter((result) => !failedFiles.has(result.file))))

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

/** Two operations of the OpenAPI document with one operationId (only `operationId` settings can do that). */
function duplicateOperationIds(results: FlowFileResult[]): Problem[] {
  const byId = new Map<string, FlowFileResult[]>()
  for (const result of results) {
    const start = result.flow?.start
    if (!result.flow || !start?.http) continue
    const id = operationIdOf(result.flow, start)
    byId.set(id, [...(byId.get(id) ?? []), result])
  }
  const problems: Problem[] = []
  for (const [id, same] of byId) {
    if (same.length < 2) continue
    const files = same.map((r) => r.file).join(' and ')
    for (const result of same) {
      const start = result.flow!.start!
      const nodes = (result.collector.source?.data as { nodes?: { id?: unknown }[] } | null)?.nodes
      const index = Array.isArray(nodes) ? nodes.findIndex((node) => node?.id === start.node.id) : -1
      const at = index < 0 ? [] : start.operationId ? ['nodes', index, 'operationId'] : ['nodes', index]
      const message = `the OpenAPI operationId "${id}" is used by both ${files}; give each start node its own operationId (later ones get a number in the document)`
      problems.push(problemAt(result.file, result.collector.source, at, message, 'warning'))
    }
  }
  return problems
}
