import { defineNodeKind } from './define.js'

/** The longest a callback wait may wait (30 days), and its default (1 day). SPEC §22. */
const MAX_CALLBACK_SECONDS = 2_592_000
const DEFAULT_CALLBACK_SECONDS = 86_400

interface WaitSettings {
  /** ms as written: a number, or a binding resolved when the node runs. */
  ms: unknown
  /** `until: callback`: park until the resume URL is posted to. */
  callback: boolean
  /** With a callback, how long before port `timeout` (default DEFAULT_CALLBACK_SECONDS). */
  timeoutSeconds: number
}

function parseWaitSettings(settings: Record<string, unknown>): WaitSettings {
  return {
    ms: settings.ms,
    callback: settings.until === 'callback',
    timeoutSeconds: typeof settings.timeoutSeconds === 'number' ? settings.timeoutSeconds : DEFAULT_CALLBACK_SECONDS,
  }
}

/**
 * Pauses the run. A short `ms` waits inline (the run's timeout and shutdown cut it short); a longer
 * one (past `limits.inlineWaitMs`) in a run that may park, and every `until: callback`, parks the
 * run (SPEC §22): the engine commits it and it goes on when it is resumed.
 */
export const waitNode = defineNodeKind({
  type: 'wait',
  description:
    'Pauses the run for ms milliseconds (output { waitedMs }), or with until: callback parks it until its resume URL is posted to (output { body, receivedAt } on port out) or timeoutSeconds pass (port timeout).',
  singlePort: true,
  optionalPorts: true,
  settingsSchema: {
    type: 'object',
    additionalProperties: false,
    anyOf: [{ required: ['ms'] }, { required: ['until'] }],
    properties: {
      description: { type: 'string' },
      ms: { description: 'Milliseconds to wait (a number, or a {{ reference }} or {{= expression }} giving one).', type: ['integer', 'string'], minimum: 0 },
      until: { enum: ['callback'], description: 'callback: park the run until its resume URL ({{ run.resumeUrl }}) is posted to.' },
      timeoutSeconds: {
        type: 'integer',
        minimum: 1,
        maximum: MAX_CALLBACK_SECONDS,
        description: `With until: callback, how long to wait before going on at port timeout (default ${DEFAULT_CALLBACK_SECONDS}, at most ${MAX_CALLBACK_SECONDS}).`,
      },
    },
  },
  parseSettings: parseWaitSettings,
  ports: (settings) => (settings.callback ? ['out', 'timeout'] : ['out']),
  checkSettings(settings) {
    if (settings.until === 'callback' && settings.ms !== undefined)
      return [{ path: ['ms'], key: true, message: 'a callback wait waits for its callback, not for ms; remove ms (timeoutSeconds bounds the wait)' }]
    if (settings.until === undefined && settings.timeoutSeconds !== undefined)
      return [{ path: ['timeoutSeconds'], key: true, message: 'timeoutSeconds is for until: callback; a wait of ms waits ms' }]
    return []
  },
  async execute(context, settings) {
    if (settings.callback) context.park('callback', Date.now() + settings.timeoutSeconds * 1000)
    const ms = Number(context.resolve(settings.ms))
    if (!Number.isFinite(ms) || ms < 0)
      throw new Error(`wait needs ms to be a number of milliseconds (0 or more), not ${JSON.stringify(context.resolve(settings.ms))}`)
    if (ms > context.project.settings.limits.inlineWaitMs && context.canPark) context.park('sleep', Date.now() + ms)
    const began = performance.now()
    await context.sleep(ms, context.signal)
    return { output: { waitedMs: Math.round(performance.now() - began) } }
  },
})
