import { defineNodeKind } from './define.js'
import { FinalFailure, type SubFlowResult } from './types.js'

const MAX_EACH_CONCURRENCY = 16

/** Runs a flow once per item (the item is its body), at most `concurrency` at a time. */
export const eachNode = defineNodeKind({
  type: 'each',
  description: 'Runs another flow once per item of a list (the item is its body); its output is { results: [{ status, body }], failed }.',
  singlePort: true,
  settingsSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['items', 'flow'],
    properties: {
      description: { type: 'string' },
      items: { description: 'The list: a {{ reference }} or {{= expression }} giving an array, or an array of bindings.' },
      flow: { type: 'string', minLength: 1, description: 'The slug of the flow to run for each item.' },
      concurrency: { type: 'integer', minimum: 1, maximum: MAX_EACH_CONCURRENCY, default: 1, description: 'How many items run at a time.' },
    },
  },
  ports: () => ['out'],
  /** items as written (bindings, resolved when the node runs); concurrency within 1-16 (default 1). */
  parseSettings: (settings) => ({
    items: settings.items,
    flow: typeof settings.flow === 'string' ? settings.flow : null,
    concurrency: typeof settings.concurrency === 'number' ? Math.min(MAX_EACH_CONCURRENCY, Math.max(1, settings.concurrency)) : 1,
  }),
  calledFlow: (settings) => settings.flow,
  async execute(context, settings) {
    // Null (a missing list, or an expression that selected nothing) is no items.
    const items = context.resolve(settings.items) ?? []
    if (!Array.isArray(items)) throw new Error(`each needs items to be a list, but it is ${items === null ? 'null' : typeof items}`)
    const limit = context.project.settings.limits.eachItems
    // Checked before any item starts; more items would not make it pass, so it is not retried.
    if (items.length > limit) throw new FinalFailure(`each: ${items.length} items exceed limits.eachItems (${limit})`)
    const slug = String(settings.flow)
    const { concurrency } = settings
    const results: SubFlowResult[] = Array.from({ length: items.length })
    let nextIndex = 0
    let stopped = false
    // A small pool: each worker takes the next item until none are left; results keep the items' order.
    // A call that throws (the run stopped, a budget spent) stops the others taking items.
    const worker = async (): Promise<void> => {
      try {
        for (let index = nextIndex++; index < items.length && !stopped; index = nextIndex++) {
          results[index] = await context.callFlow(slug, items[index])
        }
      } catch (error) {
        stopped = true
        throw error
      }
    }
    const settled = await Promise.allSettled(Array.from({ length: Math.min(concurrency, items.length) }, worker))
    const thrown = settled.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected')
    if (thrown) throw thrown.reason
    const failed = results.filter((result) => result.failed !== null || result.status >= 400).length
    return { output: { results: results.map(({ status, body }) => ({ status, body })), failed } }
  },
})
