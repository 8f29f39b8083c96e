// A real NodeContext for node tests: the real resolver over a hand-built scope and a real store.
import { createResolver, createScope, resolveParts, templateCacheOf, type ExpressionValues, type Scope } from '../../src/language/resolve.js'
import type { NodeContext } from '../../src/nodes/types.js'
import type { DocumentsPort, Store } from '../../src/model/store.js'
import { buildFlow, buildProject, type NodeSpec } from '../flow/build.js'

export interface ContextOptions {
  scope?: Record<string, unknown>
  secrets?: Record<string, string>
  store?: Store
  signal?: AbortSignal
  inputs?: Record<string, unknown>
  callFlow?: NodeContext['callFlow']
  expressionValues?: ExpressionValues
}

export function nodeContext(spec: NodeSpec, options: ContextOptions = {}): NodeContext {
  const flow = buildFlow('Node Test', [spec])
  const project = buildProject([flow], { secrets: options.secrets })
  const run = { id: 'run-1', startedAt: '2024-05-01T10:00:00.000Z', trigger: 'cli', scheduledFor: null }
  const scope: Scope = Object.assign(createScope(run), options.scope)
  return {
    node: flow.nodes[0]!,
    project,
    // Node kinds that touch documents get a real store's port; the others must not touch it.
    documents:
      options.store?.documents ??
      (new Proxy(
        {},
        {
          get: () => {
            throw new Error('this node must not use the store')
          },
        },
      ) as DocumentsPort),
    resolve: createResolver(flow, scope, project.secrets, options.expressionValues),
    resolveParts: (text) => resolveParts(text, scope, project.secrets, templateCacheOf(flow), options.expressionValues ?? new Map()),
    signal: options.signal ?? new AbortController().signal,
    run,
    inputs: options.inputs,
    callFlow: options.callFlow ?? (() => Promise.reject(new Error('this node must not call flows'))),
    fetch: (url, init) => fetch(url, init),
    canPark: false,
    park: () => {
      throw new Error('this run cannot park')
    },
    sleep: (ms, signal) =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ms)
        signal.addEventListener('abort', () => {
          clearTimeout(timer)
          resolve()
        })
      }),
  }
}
