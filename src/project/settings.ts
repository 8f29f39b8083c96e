// flowctl.yaml: the project's settings, with defaults filled in and every problem positioned.
import { readFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { FlowctlError } from '../errors.js'
import { checkCronExpression, isValidTimezone } from '../language/cron.js'
import { parseFieldPath } from '../model/document-filter.js'
import { shapeValidator } from './ajv.js'
import { corsProblem, readCors } from '../model/cors.js'
import {
  DEFAULT_CORS,
  DEFAULT_LIMITS,
  type CorsSettings,
  type HistoryKeep,
  type NotifyChannel,
  type NotifySettings,
  type ProjectLimits,
  type ProjectSettings,
} from '../model/project.js'
import { describeSchemaErrors } from './schema-messages.js'
import { PROJECT_FILE_SCHEMA } from '../model/shapes.js'
import { parseYamlSource, ProblemCollector, type YamlSource } from './yaml-source.js'
import { isRecord } from '../internal/is-record.js'

export const PROJECT_FILE = 'flowctl.yaml'
const PROJECT_ID = /^[a-z0-9][a-z0-9_-]*$/
const DEFAULT_WEBHOOK_TIMEOUT_MS = 10_000
/** PostgreSQL schema of flowctl's tables unless `database.schema` says otherwise. */
export const DEFAULT_DATABASE_SCHEMA = 'flowctl'

export interface SettingsResult {
  settings: ProjectSettings
  /** Problems of flowctl.yaml (rule flow slugs are checked later, against the loaded flows). */
  collector: ProblemCollector
  source: YamlSource | null
  /** The file's text, to tell whether it changed on reload. */
  text: string
}

type Raw = Record<string, unknown>

const asRecord = (value: unknown): Raw => (isRecord(value) ? value : {})
const stringOr = (value: unknown, fallback: string): string => (typeof value === 'string' && value !== '' ? value : fallback)
const ruleFlows = (value: unknown): string[] =>
  typeof value === 'string' ? [value] : Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : []

export async function readProjectSettings(dir: string): Promise<SettingsResult> {
  let text: string
  try {
    text = await readFile(join(dir, PROJECT_FILE), 'utf8')
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT') {
      throw new FlowctlError('PROJECT_NOT_FOUND', `no ${PROJECT_FILE} in ${dir}; is this a flowctl project? (flowctl init creates one)`)
    }
    // `--project flowctl.yaml` or another file: name the folder that was meant.
    if (code === 'ENOTDIR') {
      throw new FlowctlError(
        'PROJECT_NOT_FOUND',
        `${dir} is a file, not a project folder; pass the folder that holds ${PROJECT_FILE} (e.g. --project ${dirname(dir)})`,
      )
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

/** The projectId of the project in `dir`, or null when there is none (or it cannot be read). */
export async function readProjectId(dir: string): Promise<string | null> {
  try {
    const { settings, collector } = await readProjectSettings(dir)
    return collector.hasErrors ? null : settings.projectId
  } catch {
    return null
  }
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
  const rules = [
    ['alerts', notify.alerts],
    ['digests', notify.digests],
  ] as const
  for (const [list, entries] of rules) {
    if (!Array.isArray(entries)) continue
    entries.forEach((entry, index) => {
      const rule = asRecord(entry)
      const at = ['notify', list, index]
      if (typeof rule.channel === 'string' && !(rule.channel in channels)) {
        const known = Object.keys(channels)
        collector.error(
          [...at, 'channel'],
          `channel "${rule.channel}" is not defined under notify.channels${known.length ? ` (defined: ${known.join(', ')})` : ''}`,
        )
      }
      if (list === 'digests' && typeof rule.cron === 'string') {
        const problem = checkCronExpression(rule.cron)
        if (problem) collector.error([...at, 'cron'], `digest ${problem}`)
      }
      if (list === 'digests') timezones.push([[...at, 'timezone'], rule.timezone])
    })
  }
  const cors = buildCors(raw.cors)
  const problem = corsProblem(cors ?? null)
  if (problem) collector.error(['cors'], problem, { key: true })
  for (const [collection, fields] of Object.entries(asRecord(raw.indexes))) {
    if (!Array.isArray(fields)) continue
    fields.forEach((field, index) => {
      const path = typeof field === 'string' && field !== '' ? parseFieldPath(field) : null
      if (typeof path === 'string') collector.error(['indexes', collection, index], `index of ${collection}: ${path}`)
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
    // `database: URL` or `database: { url, schema }`.
    database: stringOr(typeof raw.database === 'object' ? asRecord(raw.database).url : raw.database, 'embedded'),
    databaseSchema: stringOr(asRecord(raw.database).schema, DEFAULT_DATABASE_SCHEMA),
    secrets: stringOr(raw.secrets, '.env'),
    limits: buildLimits(asRecord(raw.limits)),
    history: { keep: historyKeep(asRecord(raw.history).keep) },
    notify: buildNotify(asRecord(raw.notify), timezone),
    indexes: buildIndexes(asRecord(raw.indexes)),
    trace: raw.trace === 'anyone' || raw.trace === 'never' ? raw.trace : 'loopback',
    ...corsSetting(raw.cors),
    ...otlpSetting(raw.telemetry),
    ...(asRecord(raw.limits).rateLimitScope === 'cluster' ? { rateLimitScope: 'cluster' as const } : {}),
  }
}

function otlpSetting(value: unknown): { otlpEndpoint?: string } {
  const endpoint = asRecord(asRecord(value).otlp).endpoint
  return typeof endpoint === 'string' && endpoint !== '' ? { otlpEndpoint: endpoint } : {}
}

function corsSetting(value: unknown): { cors?: CorsSettings } {
  const cors = buildCors(value)
  return cors ? { cors } : {}
}

function buildCors(value: unknown): CorsSettings | undefined {
  const fields = readCors(value)
  return fields ? { ...DEFAULT_CORS, ...fields } : undefined
}

function buildIndexes(raw: Raw): Record<string, string[]> {
  const indexes: Record<string, string[]> = {}
  for (const [collection, fields] of Object.entries(raw)) {
    if (!Array.isArray(fields)) continue
    const valid = fields.filter((field): field is string => typeof field === 'string' && typeof parseFieldPath(field) !== 'string')
    if (valid.length > 0) indexes[collection] = [...new Set(valid)]
  }
  return indexes
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
