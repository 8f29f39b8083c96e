// Turns pg's connection errors into STORE_UNAVAILABLE messages that name the server but never the
// URL: the URL carries the password. Causes are not attached for the same reason (some Node errors
// keep the input URL on a property).
import { FlowctlError } from '../../errors.js'

/** `host:port` of a postgres:// URL, for messages (no user, no password, no database). */
export function describeServer(url: string): string {
  try {
    const parsed = new URL(url)
    return `${parsed.hostname || 'localhost'}:${parsed.port || '5432'}`
  } catch {
    return 'the configured server'
  }
}

const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE'])

function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code
  if (typeof code === 'string') return code
  // Node reports a refused dual-stack connect as an AggregateError whose parts carry the code.
  const parts = (error as { errors?: unknown[] } | null)?.errors
  return Array.isArray(parts) ? parts.map(errorCode).find((c) => c !== undefined) : undefined
}

/** True for errors that mean "the database cannot be reached right now" rather than a bad query. */
export function isConnectionError(error: unknown): boolean {
  const code = errorCode(error)
  if (code && (CONNECTION_CODES.has(code) || code.startsWith('08') || code.startsWith('57P'))) return true
  const message = error instanceof Error ? error.message : ''
  return /Connection terminated|timeout expired|Client has encountered a connection error/i.test(message)
}

/**
 * The role and database names of a URL, as they appear in PostgreSQL's messages (`role "x" does
 * not exist`). When the URL comes from a secret, they are parts of the secret: messages hide them.
 */
export function namesInUrl(url: string): string[] {
  try {
    const parsed = new URL(url)
    const names = [parsed.username, parsed.password, parsed.pathname.replace(/^\//, '')].map((part) => safeDecode(part))
    return [...new Set(names)].filter((name) => name.length > 0)
  } catch {
    return []
  }
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text)
  } catch {
    return text
  }
}

/** `message` with each hidden name shown as `***` (longest first, so one inside another goes too). */
export function hideNames(message: string, hidden: readonly string[]): string {
  let result = message
  for (const name of [...hidden].sort((a, b) => b.length - a.length)) result = result.split(name).join('***')
  return result
}

export function unavailableError(error: unknown, server: string, hidden: readonly string[] = []): FlowctlError {
  const code = errorCode(error)
  const serverMessage = hideNames(error instanceof Error ? error.message : String(error), hidden)
  if (code === '28P01' || code === '28000') return new FlowctlError('STORE_UNAVAILABLE', `PostgreSQL at ${server} refused the login (${serverMessage})`)
  if (code === '3D000') return new FlowctlError('STORE_UNAVAILABLE', `PostgreSQL at ${server}: ${serverMessage}`)
  if (/timeout/i.test(serverMessage)) return new FlowctlError('STORE_UNAVAILABLE', `cannot reach PostgreSQL at ${server} (connection timed out)`)
  return new FlowctlError('STORE_UNAVAILABLE', `cannot reach PostgreSQL at ${server} (${code ?? serverMessage})`)
}
