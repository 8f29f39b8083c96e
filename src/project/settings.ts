// flowctl.yaml: the project's settings, with defaults filled in and every problem positioned.
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { FlowctlError } from '../errors.js'
import { checkCronExpression, isValidTimezone } from '../schedule/cron.js'
import { shapeValidator } from './ajv.js'
import { DEFAULT_LIMITS, type HistoryKeep, type NotifyChannel, type NotifySettings, type ProjectLimits, type ProjectSettings } from './model.js'
import { describeSchemaErrors } from './schema-messages.js'
import { PROJECT_FILE_SCHEMA } from './shapes.js'
import { parseYamlSource, ProblemCollector, type YamlSource } from './yaml-source.js'

export const PROJECT_FILE = 'flowctl.yaml'
const PROJECT_ID = /^[a-z0-9][a-z0-9_-]*$/
const DEFAULT_WEBHOOK_TIMEOUT_MS = 10_000

export interface SettingsResult {
  settings: ProjectSettings
  /** Problems of flowctl.yaml (rule flow slugs are checked later, against the loaded flows). */
  collector: ProblemCollector
  source: YamlSource | null
  /** The file's text, to tell whether it changed on reload. */
  text: string
}

type Raw = Record<string, unknown>

const asRecord = (value: unknown): Raw => (value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Raw) : {})
const stringOr = (value: unknown, fallback: string): string => (typeof value === 'string' && value !== '' ? value : fallback)
const ruleFlows = (value: unknown): string[] =>
  typeof value === 'string' ? [value] : Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : []

export async function readProjectSettings(dir: string): Promise<SettingsResult> {
  let text: string
  try {
    text = await readFile(join(dir, PROJECT_FILE), 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new FlowctlError('PROJECT_NOT_FOUND', `no ${PROJECT_FILE} in ${dir}; is this a flowctl project? (flowctl init creates one)`)
    }
    throw error
  }
  const source = parseYamlSource(text)
  const collector = new ProblemCollector(PROJECT_FILE, source)
  for (const { pos, message } of source.syntaxErrors) collector.at(pos, message)
  const raw = asRecord(source.data)
  if (source.syntaxErrors.length === 0) checkShape(source.data ?? {}, raw, collector)
  return { settings: buildSettings(raw), collector, source, text }
}

function checkShape(data: unknown, raw: Raw, collector: ProblemCollector): void {
  const validate = shapeValidator(PROJECT_FILE_SCHEMA)
  if (!validate(data)) {
    for (const issue of describeSchemaErrors(validate.errors ?? [], data, { rootName: PROJECT_FILE })) {
      collector.error(issue.path, issue.message, { key: issue.key })
    }
  }
  if (typeof raw.projectId === 'string' && !PROJECT_ID.test(raw.projectId)) {
    collector.error(['projectId'], `projectId "${raw.projectId}" may only use a-z, 0-9, "-" and "_", and must start with a letter or digit`)
  }
  const timezones: [(string | number)[], unknown][] = [[['timezone'], raw.timezone]]
  const notify = asRecord(raw.notify)
  const channels = asRecord(notify.channels)
  const rules = [['alerts', notify.alerts], ['digests', notify.digests]] as const
  for (const [list, entries] of rules) {
    if (!Array.isArray(entries)) continue
    entries.forEach((entry, index) => {
      const rule = asRecord(entry)
      const at = ['notify', list, index]
      if (typeof rule.channel === 'string' && !(rule.channel in channels)) {
        const known = Object.keys(channels)
        collector.error([...at, 'channel'], `channel "${rule.channel}" is not defined under notify.channels${known.length ? ` (defined: ${known.join(', ')})` : ''}`)
      }
      if (list === 'digests' && typeof rule.cron === 'string') {
        const problem = checkCronExpression(rule.cron)
        if (problem) collector.error([...at, 'cron'], `digest ${problem}`)
      }
      if (list === 'digests') timezones.push([[...at, 'timezone'], rule.timezone])
    })
  }
  for (const [path, timezone] of timezones) {
    if (typeof timezone === 'string' && !isValidTimezone(timezone)) {
      collector.error(path, `"${timezone}" is not a known timezone; use an IANA name like Europe/Berlin or UTC`)
    }
  }
}

function buildSettings(raw: Raw): ProjectSettings {
  const timezone = typeof raw.timezone === 'string' && isValidTimezone(raw.timezone) ? raw.timezone : 'UTC'
  return {
    projectId: typeof raw.projectId === 'string' ? raw.projectId : '',
    name: typeof raw.name === 'string' ? raw.name : '',
    flows: stringOr(raw.flows, 'flows'),
    timezone,
    database: stringOr(raw.database, 'embedded'),
    secrets: stringOr(raw.secrets, '.env'),
    limits: buildLimits(asRecord(raw.limits)),
    history: { keep: historyKeep(asRecord(raw.history).keep) },
    notify: buildNotify(asRecord(raw.notify), timezone),
  }
}

function buildLimits(raw: Raw): ProjectLimits {
  const limits: ProjectLimits = { ...DEFAULT_LIMITS }
  for (const name of Object.keys(limits) as (keyof ProjectLimits)[]) {
    const value = raw[name]
    if (typeof value === 'number' && Number.isInteger(value) && value >= 0) limits[name] = value
  }
  return limits
}

function historyKeep(value: unknown): HistoryKeep {
  return value === 'failed' || value === 'none' ? value : 'all'
}

function buildNotify(raw: Raw, projectTimezone: string): NotifySettings {
  const channels: Record<string, NotifyChannel> = {}
  for (const [name, value] of Object.entries(asRecord(raw.channels))) {
    const channel = asRecord(value)
    if (channel.type === 'webhook' && typeof channel.url === 'string') {
      const timeoutMs = typeof channel.timeoutMs === 'number' && channel.timeoutMs > 0 ? channel.timeoutMs : DEFAULT_WEBHOOK_TIMEOUT_MS
      channels[name] = { type: 'webhook', url: channel.url, timeoutMs }
    } else if (channel.type === 'file' && typeof channel.path === 'string') {
      channels[name] = { type: 'file', path: channel.path }
    }
  }
  const entries = (value: unknown) => (Array.isArray(value) ? value.map(asRecord) : [])
  return {
    channels,
    alerts: entries(raw.alerts).map((rule) => ({ flows: ruleFlows(rule.flows), channel: String(rule.channel ?? '') })),
    digests: entries(raw.digests).map((rule) => ({
      flows: ruleFlows(rule.flows),
      cron: String(rule.cron ?? ''),
      channel: String(rule.channel ?? ''),
      timezone: typeof rule.timezone === 'string' && isValidTimezone(rule.timezone) ? rule.timezone : projectTimezone,
    })),
  }
}
