// Where a callback wait may be (SPEC §22): only in a flow that answers before it waits — a
// `respond: async` Start, a scheduled flow, or a flow without a route of its own (`http: false`)
// that only such flows call. A synchronous HTTP flow holds its caller until its End, so a wait of
// hours there is a load error, not a request left hanging.
import { getNodeKind } from '../nodes/registry.js'
import type { Flow } from '../model/project.js'
import type { FlowFileResult } from './flow-file.js'
import type { CallProblem } from './check-calls.js'

export function checkCallbackWaits(results: FlowFileResult[]): CallProblem[] {
  const flows = new Map<string, Flow>()
  for (const result of results) if (result.flow && result.slug !== null) flows.set(result.slug, result.flow)
  const callers = new Map<string, string[]>()
  for (const [slug, flow] of flows) {
    for (const node of flow.nodes) {
      const target = getNodeKind(node.type)?.calledFlow?.(node.parsed)
      if (typeof target === 'string') callers.set(target, [...(callers.get(target) ?? []), slug])
    }
  }
  const known = new Map<string, boolean>()
  const answersFirst = (slug: string, seen: Set<string>): boolean => {
    const cached = known.get(slug)
    if (cached !== undefined) return cached
    const flow = flows.get(slug)
    if (!flow?.start || seen.has(slug)) return false
    seen.add(slug)
    const own = flow.start.respond === 'async' || flow.schedule !== null
    const viaCalls = !flow.start.http && (callers.get(slug) ?? []).length > 0 && callers.get(slug)!.every((caller) => answersFirst(caller, seen))
    const answer = own || viaCalls
    known.set(slug, answer)
    return answer
  }
  const problems: CallProblem[] = []
  for (const result of results) {
    if (!result.flow || result.slug === null) continue
    result.flow.nodes.forEach((node, index) => {
      if (node.type !== 'wait' || node.settings.until !== 'callback' || answersFirst(result.slug!, new Set())) return
      problems.push({
        result,
        at: ['nodes', index, 'until'],
        message:
          `node "${node.id}": a callback wait parks the run, so its flow must answer its caller first: ` +
          'set respond: async on the start node, give the flow a schedule, or make it a flow with http: false that only such flows call',
      })
    })
  }
  return problems
}
