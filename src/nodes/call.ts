import { defineNodeKind } from './define.js'

/** How deep call and each nodes may nest flows (SPEC §13). */
export const MAX_CALL_DEPTH = 8

/** Runs another flow of the project (no HTTP, no auth) and outputs its End's `{ status, body }`. */
export const callNode = defineNodeKind({
  type: 'call',
  description: "Runs another flow of this project with input as its body; its output is { status, body } of that flow's End.",
  singlePort: true,
  settingsSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['flow'],
    properties: {
      description: { type: 'string' },
      flow: { type: 'string', minLength: 1, description: 'The slug of the flow to run.' },
      input: { description: "The called flow's body (bindings); checked against its Start's body schema." },
    },
  },
  ports: () => ['out'],
  /** flow: the slug, or null when not written as text; input: the body as written (bindings). */
  parseSettings: (settings) => ({ flow: typeof settings.flow === 'string' ? settings.flow : null, input: settings.input }),
  calledFlow: (settings) => settings.flow,
  async execute(context, settings) {
    const body = settings.input === undefined ? {} : context.resolve(settings.input)
    const result = await context.callFlow(String(settings.flow), body)
    if (result.failed !== null) throw new Error(result.failed)
    return { output: { status: result.status, body: result.body } }
  },
})
