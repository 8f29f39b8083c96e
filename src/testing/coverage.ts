// `flowctl test --coverage`: per flow, the nodes no case reached and the ports no case left by.
// Sub-flows run by call/each count for the flow they belong to.
import type { Flow } from '../model/project.js'
import type { ReachedStep } from './run-case.js'
import { nodePorts } from './test-file.js'
import { compareText } from '../internal/compare.js'

export interface FlowCoverage {
  flow: string
  file: string
  nodes: { total: number; reached: number; missed: string[] }
  /** Ports as `nodeId.port`. */
  ports: { total: number; taken: number; missed: string[] }
  /** Nodes and ports together, 0–100, one decimal. */
  percent: number
}

export function flowCoverage(flows: Iterable<Flow>, reached: ReachedStep[]): FlowCoverage[] {
  const seenNodes = new Set<string>()
  const seenPorts = new Set<string>()
  for (const step of reached) {
    seenNodes.add(`${step.flow}\0${step.nodeId}`)
    if (step.port !== null) seenPorts.add(`${step.flow}\0${step.nodeId}\0${step.port}`)
  }
  const report: FlowCoverage[] = []
  for (const flow of [...flows].sort((a, b) => compareText(a.slug, b.slug))) {
    const missedNodes = flow.nodes.filter((node) => !seenNodes.has(`${flow.slug}\0${node.id}`)).map((node) => node.id)
    const ports = flow.nodes.flatMap((node) => nodePorts(node).map((port) => ({ node: node.id, port })))
    const missedPorts = ports.filter(({ node, port }) => !seenPorts.has(`${flow.slug}\0${node}\0${port}`)).map(({ node, port }) => `${node}.${port}`)
    const total = flow.nodes.length + ports.length
    const covered = total - missedNodes.length - missedPorts.length
    report.push({
      flow: flow.slug,
      file: flow.file,
      nodes: { total: flow.nodes.length, reached: flow.nodes.length - missedNodes.length, missed: missedNodes },
      ports: { total: ports.length, taken: ports.length - missedPorts.length, missed: missedPorts },
      percent: total === 0 ? 100 : Math.floor((covered / total) * 1000) / 10,
    })
  }
  return report
}
