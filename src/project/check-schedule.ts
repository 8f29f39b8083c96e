// A flow's schedule: its cron, timezone and input (checked against the Start's body schema), and the
// warning about a scheduled flow anyone can also call. The Start's own settings are read by its kind
// (src/nodes/start/).
import { checkCronExpression, isValidTimezone } from '../language/cron.js'
import { compileInputSchema } from './ajv.js'
import type { JsonSchema, Schedule, StartInfo } from '../model/project.js'
import type { NodeEntry } from './node-entries.js'
import { plainlySatisfies } from './plain-schema.js'
import { describeSchemaErrors } from './schema-messages.js'
import type { ProblemCollector } from './yaml-source.js'
import { isRecord } from '../internal/is-record.js'

/** A scheduled flow that anyone can also call over HTTP is usually a mistake (SPEC §11). */
export function warnOpenScheduledFlow(entry: NodeEntry, start: StartInfo, collector: ProblemCollector): void {
  if (!start.http || start.auth) return
  collector.warning(
    ['schedule'],
    `this flow runs on a schedule and anyone can also call it over HTTP (${entry.label} has no auth); add "http: false" to the start node to make it schedule-only, or give it auth`,
    { key: true },
  )
}

/** The schedule with defaults; its cron, timezone and input (against the Start's body schema) checked. */
export function readSchedule(value: unknown, start: StartInfo | null, projectTimezone: string, collector: ProblemCollector): Schedule | null {
  if (!isRecord(value) || typeof value.cron !== 'string') return null
  const cronProblem = checkCronExpression(value.cron)
  if (cronProblem) collector.error(['schedule', 'cron'], `schedule ${cronProblem}`)
  let timezone = projectTimezone
  if (typeof value.timezone === 'string') {
    if (isValidTimezone(value.timezone)) timezone = value.timezone
    else collector.error(['schedule', 'timezone'], `schedule timezone "${value.timezone}" is not a known timezone; use an IANA name like Europe/Berlin or UTC`)
  }
  const input = isRecord(value.input) ? value.input : {}
  const body: JsonSchema | undefined = start?.inputs.body
  if (body) checkScheduleInput(input, body, collector)
  // Shapes (enum, 1-1440) are checked by the flow file schema; here only the defaults.
  const catchUp = value.catchUp === 'latest' || value.catchUp === 'all' ? value.catchUp : 'none'
  const catchUpMinutes =
    typeof value.catchUpMinutes === 'number' && Number.isInteger(value.catchUpMinutes) ? Math.min(Math.max(value.catchUpMinutes, 1), 1440) : 60
  return { cron: value.cron, enabled: value.enabled !== false, timezone, input, catchUp, catchUpMinutes }
}

function checkScheduleInput(input: Record<string, unknown>, body: JsonSchema, collector: ProblemCollector): void {
  if (plainlySatisfies(body, structuredClone(input))) return // no need to load and run ajv
  let validate
  try {
    validate = compileInputSchema(body)
  } catch {
    return // the body schema itself is reported on the start node
  }
  // Validate a copy: defaults are applied by the engine at run time, not written into the model.
  const copy = structuredClone(input)
  if (validate(copy)) return
  const written = collector.source?.data as { schedule?: { input?: unknown } } | null
  const at = written?.schedule?.input === undefined ? ['schedule'] : ['schedule', 'input']
  for (const issue of describeSchemaErrors(validate.errors ?? [], copy, { rootName: 'schedule.input', prefix: ['schedule', 'input'] })) {
    const path = at.length === 1 ? at : [...at, ...issue.path]
    collector.error(path, `${issue.message} (the schedule input is the body of scheduled runs)`, { key: issue.key && at.length > 1 })
  }
}
