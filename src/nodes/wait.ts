import { defineNodeKind } from './define.js'

/** Pauses the run; the run's timeout (and shutdown) cuts the pause short. */
export const waitNode = defineNodeKind({
  type: 'wait',
  description: 'Pauses the run for ms milliseconds; its output is { waitedMs }.',
  singlePort: true,
  settingsSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['ms'],
    properties: {
      description: { type: 'string' },
      ms: { description: 'Milliseconds to wait (a number, or a {{ reference }} or {{= expression }} giving one).', type: ['integer', 'string'], minimum: 0 },
    },
  },
  /** ms as written: a number, or a binding resolved when the node runs. */
  parseSettings: (settings) => ({ ms: settings.ms }),
  ports: () => ['out'],
  async execute(context, settings) {
    const ms = Number(context.resolve(settings.ms))
    if (!Number.isFinite(ms) || ms < 0)
      throw new Error(`wait needs ms to be a number of milliseconds (0 or more), not ${JSON.stringify(context.resolve(settings.ms))}`)
    const began = performance.now()
    await context.sleep(ms, context.signal)
    return { output: { waitedMs: Math.round(performance.now() - began) } }
  },
})
