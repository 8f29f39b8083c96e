// Checks across flow files for call and each nodes (SPEC §13): the called flow exists and has a Start,
// no flow calls itself (directly or through others), and calls nest at most MAX_CALL_DEPTH deep.
import { MAX_CALL_DEPTH } from '../nodes/call.js'
import { getNodeKind } from '../nodes/registry.js'
import type { FlowFileResult } from './flow-file.js'
import type { FlowNode } from '../model/project.js'
import type { SourcePath } from './yaml-source.js'

export interface CallProblem {
  result: FlowFileResult
  at: SourcePath
  message: string
}

interface CallSite {
  result: FlowFileResult
  node: FlowNode
  at: SourcePath
  target: string
}

export function checkCalls(results: FlowFileResult[]): CallProblem[] {
  const problems: CallProblem[] = []
  const bySlug = new Map<string, FlowFileResult>()
  for (const result of results) if (result.slug !== null && !bySlug.has(result.slug)) bySlug.set(result.slug, result)

  const calls = new Map<string, CallSite[]>()
  for (const result of results) {
    if (!result.flow) continue
    const sites: CallSite[] = []
    result.flow.nodes.forEach((node, index) => {
      const target = getNodeKind(node.type)?.calledFlow?.(node.parsed)
      if (typeof target !== 'string') return
      const at = ['nodes', index, 'flow']
      const called = bySlug.get(target)
      if (!called) {
        const known = [...bySlug.keys()].join(', ')
        problems.push({ result, at, message: `node "${node.id}": there is no flow with the slug "${target}" to call (flows: ${known})` })
      } else if (called.flow && !called.flow.start) {
        problems.push({ result, at, message: `node "${node.id}": flow "${target}" has no start node, so it cannot be called` })
      } else {
        sites.push({ result, node, at, target })
      }
    })
    if (result.slug !== null) calls.set(result.slug, sites)
  }

  // Depth-first over the call graph: a call back to a flow on the current path is recursion.
  const depthOf = new Map<string, number>()
  const onPath: string[] = []
  const visit = (slug: string): number => {
    const known = depthOf.get(slug)
    if (known !== undefined) return known
    onPath.push(slug)
    let deepest = 0
    for (const site of calls.get(slug) ?? []) {
      const loopAt = onPath.indexOf(site.target)
      if (loopAt >= 0) {
        const loop = [...onPath.slice(loopAt), site.target].join(' → ')
        const how = site.target === slug ? 'calls its own flow' : `makes the flows call each other (${loop})`
        problems.push({ result: site.result, at: site.at, message: `node "${site.node.id}" ${how}; a flow may not call itself, directly or through others` })
        continue
      }
      const depth = 1 + visit(site.target)
      if (depth > MAX_CALL_DEPTH && depth - 1 <= MAX_CALL_DEPTH) {
        problems.push({
          result: site.result,
          at: site.at,
          message: `node "${site.node.id}": calling "${site.target}" nests flow calls ${depth} deep; calls nest at most ${MAX_CALL_DEPTH} deep`,
        })
      }
      deepest = Math.max(deepest, depth)
    }
    onPath.pop()
    depthOf.set(slug, deepest)
    return deepest
  }
  for (const slug of calls.keys()) visit(slug)
  return problems
}
