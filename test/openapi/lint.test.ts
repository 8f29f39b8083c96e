// The exported documents pass the linters users run on them (SPEC §11): Redocly CLI with its
// recommended rules and Spectral with spectral:oas, 0 errors each. Both run from devDependencies;
// every proxy variable points at a closed port, so a linter that tried the network would fail here.
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { formatOpenApi } from '../../src/openapi/format.js'
import { generateOpenApi } from '../../src/openapi/generate.js'
import { loadProject } from '../../src/project/load.js'
import { cleanupTempDirs, makeTempDir, ROOT } from '../helpers.js'

const BIN = join(ROOT, 'node_modules', '.bin')
const CONFIG = join(import.meta.dirname, 'lint')
const OFFLINE = {
  REDOCLY_TELEMETRY: 'off',
  REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true',
  REDOCLY_SUPPRESS_NOTIFICATIONS: 'true',
  HTTP_PROXY: 'http://127.0.0.1:9',
  HTTPS_PROXY: 'http://127.0.0.1:9',
  http_proxy: 'http://127.0.0.1:9',
  https_proxy: 'http://127.0.0.1:9',
  NO_COLOR: '1',
}

afterAll(cleanupTempDirs)

async function exported(fixture: string, format: 'json' | 'yaml'): Promise<string> {
  const project = await loadProject(join(ROOT, 'fixtures', fixture), { env: {} })
  expect(project.problems.filter((p) => p.severity === 'error')).toEqual([])
  const file = join(await makeTempDir('flowctl-lint-'), `${fixture}.${format}`)
  await writeFile(file, formatOpenApi(generateOpenApi(project, { serverUrl: 'https://api.shop.test' }), format))
  return file
}

async function run(command: string, args: string[]): Promise<{ exitCode: number | undefined; stdout: string; stderr: string }> {
  const { execa } = await import('execa')
  const result = await execa(join(BIN, command), args, { reject: false, env: OFFLINE, timeout: 120_000 })
  return { exitCode: result.exitCode, stdout: String(result.stdout), stderr: String(result.stderr) }
}

describe.each([
  ['fixtures/example', 'example', 'json'],
  ['fixtures/webhooks (every schema keyword, every auth type)', 'webhooks', 'yaml'],
  ['fixtures/async-jobs (an async Start answering 202)', 'async-jobs', 'json'],
] as const)('the exported document of %s', (_name, fixture, format) => {
  it('passes Redocly CLI lint (recommended) with 0 errors', async () => {
    const file = await exported(fixture, format)
    const result = await run('redocly', ['lint', file, '--config', join(CONFIG, 'redocly.yaml'), '--format', 'json'])
    const report = JSON.parse(result.stdout.slice(result.stdout.indexOf('{'))) as {
      totals: { errors: number; warnings: number }
      problems: { ruleId: string; severity: string; message: string }[]
    }
    expect(report.problems.filter((p) => p.severity === 'error')).toEqual([])
    expect(report.totals.errors).toBe(0)
    // The rules that failed before SPEC §11 stay quiet, warnings included.
    expect(report.problems.map((p) => p.ruleId)).not.toEqual(expect.arrayContaining(['security-defined']))
    expect(report.problems.map((p) => p.ruleId)).not.toEqual(expect.arrayContaining(['nullable-type-sibling']))
    expect(result.exitCode).toBe(0)
  }, 120_000)

  it('passes Spectral (spectral:oas) with 0 errors', async () => {
    const file = await exported(fixture, format)
    const result = await run('spectral', ['lint', file, '--ruleset', join(CONFIG, 'spectral.yaml'), '--format', 'json', '--fail-severity', 'error'])
    const results = JSON.parse(result.stdout.slice(result.stdout.indexOf('['))) as { code: string; severity: number; message: string }[]
    expect(results.filter((r) => r.severity === 0)).toEqual([])
    expect(result.exitCode).toBe(0)
  }, 120_000)
})

describe('the linters are not vacuous', () => {
  it('Redocly reports the errors the issue saw before the fixes', async () => {
    const project = await loadProject(join(ROOT, 'fixtures', 'example'), { env: {} })
    const doc = generateOpenApi(project, { serverUrl: 'https://api.shop.test' }) as unknown as {
      paths: Record<string, Record<string, Record<string, unknown>>>
    }
    const operation = doc.paths['/api/run/shop/quote']!.post!
    delete operation.security
    ;(operation.responses as Record<string, unknown>)['200'] = { description: 'x', content: { 'application/json': { schema: { nullable: true } } } }
    const file = join(await makeTempDir('flowctl-lint-'), 'broken.json')
    await writeFile(file, JSON.stringify(doc))
    const result = await run('redocly', ['lint', file, '--config', join(CONFIG, 'redocly.yaml'), '--format', 'json'])
    const report = JSON.parse(result.stdout.slice(result.stdout.indexOf('{'))) as { problems: { ruleId: string; severity: string }[] }
    const errors = report.problems.filter((p) => p.severity === 'error').map((p) => p.ruleId)
    expect(errors).toEqual(expect.arrayContaining(['security-defined', 'nullable-type-sibling']))
    expect(result.exitCode).not.toBe(0)
  }, 120_000)
})
