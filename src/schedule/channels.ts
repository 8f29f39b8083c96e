// Delivery of one outbox message through its channel (SPEC §8). A channel either delivers or throws;
// the caller records the (masked) error and the message is tried again on the next tick.
import { rename, writeFile } from 'node:fs/promises'
import { ensurePrivateFolder } from '../store/private-files.js'
import { join, resolve } from 'node:path'
import type { NotifyChannel, Project } from '../model/project.js'
import { maskSecrets, resolveSecretText } from '../language/secrets.js'
import type { OutboxMessage } from '../model/store.js'

const DEFAULT_WEBHOOK_TIMEOUT_MS = 10_000

/** Sends the message; throws an Error whose message is safe to store (secrets masked). */
export async function deliver(project: Project, message: OutboxMessage): Promise<void> {
  const channel = project.settings.notify.channels[message.channel]
  if (!channel) throw new Error(`channel "${message.channel}" is not defined in flowctl.yaml`)
  try {
    await sendThrough(project, channel, message)
  } catch (error) {
    throw new Error(maskSecrets(describe(error), project.secrets))
  }
}

async function sendThrough(project: Project, channel: NotifyChannel, message: OutboxMessage): Promise<void> {
  if (channel.type === 'webhook') await postWebhook(project, channel, message)
  else await writeMessageFile(resolve(project.dir, channel.path), message)
}

async function postWebhook(project: Project, channel: { url: string; timeoutMs: number }, message: OutboxMessage): Promise<void> {
  // Secrets are resolved at send time, so the stored message never holds them.
  const url = resolveSecretText(channel.url, project.secrets)
  if (url === null || url === '') throw new Error(`webhook URL of channel "${message.channel}" uses a secret that is not set`)
  const timeoutMs = channel.timeoutMs > 0 ? channel.timeoutMs : DEFAULT_WEBHOOK_TIMEOUT_MS
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(webhookPayload(message.payload)),
    signal: AbortSignal.timeout(timeoutMs),
  })
  // Drain the body so the connection can be reused or closed.
  await response.arrayBuffer().catch(() => undefined)
  if (!response.ok) throw new Error(`webhook of channel "${message.channel}" answered ${response.status}`)
}

/**
 * The payload as a chat webhook gets it: its `text` holds run errors and flow names that a caller
 * may shape, so `&`, `<` and `>` are escaped as Slack (and Mattermost, Rocket.Chat) expect. Then
 * `<!channel>`, `<@U123>` and disguised links `<http://evil|click>` show as typed instead of
 * pinging everyone or hiding a link. File channels keep the text as it is.
 */
function webhookPayload(payload: Record<string, unknown>): Record<string, unknown> {
  if (typeof payload.text !== 'string') return payload
  return { ...payload, text: escapeChatMarkup(payload.text) }
}

function escapeChatMarkup(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
}

/** `2026-11-21T09:00:00.000Z` → `20261121T090000000Z`: sorts by time, safe in every file system. */
function compactTime(iso: string): string {
  return iso.replace(/[-:.]/g, '')
}

/** One JSON file per message, written to a temp name and renamed so readers never see half a file. */
async function writeMessageFile(dir: string, message: OutboxMessage): Promise<void> {
  // The outbox usually sits in .flowctl/: created private as the store makes it (SPEC §19).
  ensurePrivateFolder(dir)
  const name = `${compactTime(message.createdAt)}-${message.id}.json`
  const temp = join(dir, `.${name}.${process.pid}.tmp`)
  const content = { id: message.id, projectId: message.projectId, channel: message.channel, createdAt: message.createdAt, ...message.payload }
  await writeFile(temp, `${JSON.stringify(content, null, 2)}\n`, 'utf8')
  await rename(temp, join(dir, name))
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error)
  if (error.name === 'TimeoutError') return 'webhook timed out'
  // fetch wraps network errors: the cause says what actually happened (ECONNREFUSED, …).
  const cause = (error as Error & { cause?: unknown }).cause
  if (cause instanceof Error && cause.message) return `${error.message}: ${cause.message}`
  return error.message
}
