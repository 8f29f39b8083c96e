// The one error catalog (src/errors.ts): every code has an HTTP status, an exit code and a message,
// and every code is thrown or read somewhere in src/ (docs/reference/errors.md lists each as it is:
// test/docs/reference.test.ts checks that table).
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ERROR_CATALOG, FlowctlError, hasErrorCode, httpError, type ErrorCode } from '../../src/errors.js'

const ROOT = join(import.meta.dirname, '..', '..')
const CODES = Object.keys(ERROR_CATALOG) as ErrorCode[]

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return entry.name === 'generated' ? [] : sourceFiles(path)
    return entry.name.endsWith('.ts') ? [path] : []
  })
}

describe('the error catalog', () => {
  it.each(CODES)('%s has an HTTP status, an exit code and a message, and FlowctlError carries them', (code) => {
    const kind = ERROR_CATALOG[code]
    expect(kind.httpStatus).toBeGreaterThanOrEqual(400)
    expect(kind.httpStatus).toBeLessThan(600)
    // SPEC §2: 1 a failed run or check, 2 a usage error (0 is success, never an error's).
    expect([1, 2]).toContain(kind.exitCode)
    expect(kind.message.trim()).not.toBe('')
    const error = new FlowctlError(code)
    expect(error).toMatchObject({ code, httpStatus: kind.httpStatus, exitCode: kind.exitCode, message: kind.message, errors: [kind.message] })
  })

  it('keeps the message (for logs and the CLI) apart from what an HTTP client is told', () => {
    const outage = new FlowctlError('STORE_UNAVAILABLE', 'cannot reach PostgreSQL at db.internal:5432 (ECONNREFUSED)')
    expect(outage.errors).toEqual(['store unavailable'])
    const refused = httpError('METHOD_NOT_ALLOWED', undefined, { headers: { allow: 'POST, OPTIONS' } })
    expect(refused).toMatchObject({ httpStatus: 405, errors: ['method not allowed'], headers: { allow: 'POST, OPTIONS' } })
    const invalid = httpError('INPUT_INVALID', ['body/qty: must be >= 1', 'body/sku: is required'])
    expect(invalid).toMatchObject({ message: 'body/qty: must be >= 1', errors: ['body/qty: must be >= 1', 'body/sku: is required'] })
  })

  it('finds a code in the cause chain', () => {
    const wrapped = new Error('write failed', { cause: new FlowctlError('STORE_UNAVAILABLE') })
    expect(hasErrorCode(wrapped, 'STORE_UNAVAILABLE')).toBe(true)
    expect(hasErrorCode(wrapped, 'RUN_NOT_FOUND')).toBe(false)
    expect(hasErrorCode(new Error('plain'), 'STORE_UNAVAILABLE')).toBe(false)
  })

  it('has no code that nothing in src/ throws or reads', () => {
    const text = sourceFiles(join(ROOT, 'src'))
      .filter((file) => !file.endsWith(join('src', 'errors.ts')))
      .map((file) => readFileSync(file, 'utf8'))
      .join('\n')
    const unused = CODES.filter((code) => !new RegExp(`['.]${code}\\b`).test(text))
    expect(unused).toEqual([])
  })
})

describe('FlowctlError', () => {
  it('captures no stack frames (h3 formats the stack of every error it catches) and leaves the global limit as it was', () => {
    const limit = Error.stackTraceLimit
    const error = httpError('AUTH_REQUIRED', undefined, { headers: { 'www-authenticate': 'Bearer' } })
    expect(error.stack).toBe('FlowctlError: invalid token')
    expect(Error.stackTraceLimit).toBe(limit)
    expect(String(new Error('other').stack).split('\n').length).toBeGreaterThan(1)
  })
})
