// SPEC §21 (the first day), through the real binary: npm test beside npm start, CLI manners (a closed
// pipe, "did you mean", validate's count), test --watch through serve's watcher, the reference rule,
// the serve banner and the $schema links that init writes.
import { execa } from 'execa'
import { existsSync } from 'node:fs'
import { mkdir, readdir, readFile, rename, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BIN, cleanupTempDirs, copyFixture, EXAMPLE_FLOW_SLUGS, eventually, flowctl, makeTempDir, ROOT, spawnFlowctl, startServe } from '../helpers.js'
import { createTestDatabase, PG_URL, pgSkipNotice } from '../pg-helpers.js'

afterAll(cleanupTempDirs)

describe('npm test beside npm start', () => {
  it('copies of fixtures/example never carry its .flowctl/ (the state npm start serves)', async () => {
    // test/fixture-state.ts (vitest's globalSetup) keeps a marker in that folder for the whole run.
    expect(existsSync(join(ROOT, 'fixtures', 'example', '.flowctl'))).toBe(true)
    const copy = await copyFixture('example')
    expect(await readdir(copy)).not.toContain('.flowctl')
    expect(await readdir(join(copy, 'flows'))).toContain('quote.yaml')
  })
})

/** A project whose validate, test and history each print well over a pipe's 64 KiB buffer. */
async function noisyProject(): Promise<string> {
  const dir = await makeTempDir('flowctl-noisy-')
  await mkdir(join(dir, 'flows'))
  await mkdir(join(dir, 'tests'))
  await writeFile(join(dir, 'flowctl.yaml'), 'projectId: noisy\nname: Noisy\n')
  // A short secret is a warning on every flow that uses it: validate prints a line per flow and passes.
  await writeFile(join(dir, '.env'), 'SHORT=abc\n')
  for (let i = 1; i <= 400; i++) {
    // flow-1 has a schedule, only for backfill to fill history with (backfill refuses a disabled one).
    const schedule = i === 1 ? ['schedule: { cron: "* * * * *" }'] : []
    const flow = ['name: Flow ' + i, ...schedule, 'nodes:', '  - { id: start, type: start, name: Start, method: post, next: done }']
    flow.push(`  - { id: done, type: end, name: Done, body: { x: "\${secrets.SHORT}", n: ${i} } }`, '')
    await writeFile(join(dir, 'flows', `f${i}.yaml`), flow.join('\n'))
    const cases = [1, 2].map(
      (c) => `  - { name: "flow ${i} answers with its own number, whatever it is asked, in case ${c} of two", expect: { body: { n: ${i} } } }`,
    )
    await writeFile(join(dir, 'tests', `f${i}.test.yaml`), [`flow: flow-${i}`, 'cases:', ...cases, ''].join('\n'))
  }
  const backfill = await flowctl(['backfill', 'flow-1', '--from', '2026-01-01T00:00:00Z', '--to', '2026-01-01T16:00:00Z', '--project', dir])
  expect(backfill.exitCode, backfill.stderr).toBe(0)
  return dir
}

describe('a closed output pipe', () => {
  let project: string
  beforeAll(async () => {
    project = await noisyProject()
  }, 120_000)

  it.each([
    ['validate', ['validate']],
    ['test', ['test']],
    ['history', ['history', '--limit', '2000']],
    ['history --json', ['history', '--limit', '2000', '--json']],
  ])(
    'flowctl %s | head -1 stops quietly with its own exit status, 10 times',
    async (_name, args) => {
      const command = `node ${JSON.stringify(BIN)} ${args.join(' ')} --project ${JSON.stringify(project)} | head -1; exit \${PIPESTATUS[0]}`
      const runs = []
      for (let i = 0; i < 10; i++) runs.push(await execa('bash', ['-c', command], { env: { NO_COLOR: '1' }, reject: false }))
      for (const run of runs) {
        expect(run.stdout.split('\n')).toHaveLength(1)
        expect(run.stderr).toBe('')
        expect(run.exitCode).toBe(0)
      }
    },
    120_000,
  )
})

describe('flowctl run with an unknown slug', () => {
  it('suggests the closest slug, and opens no store', async () => {
    const project = await copyFixture('example')
    const result = await flowctl(['run', 'create-tiket', '--project', project])
    expect(result.exitCode).toBe(2)
    expect(result.stderr).toContain('flow "create-tiket" not found; did you mean "create-ticket"?')
    expect(result.stderr).not.toContain('    at ')
    const far = await flowctl(['run', 'zzz', '--project', project])
    expect(far.stderr).not.toContain('did you mean')
    expect(far.stderr).toContain(`(flows: ${EXAMPLE_FLOW_SLUGS.join(', ')})`)
    // A typo must not leave .flowctl/ behind in the folder (the store is opened once the flow is known).
    expect(await readdir(project)).not.toContain('.flowctl')
  })
})

describe('flowctl validate', () => {
  it('says how many flows it checked', async () => {
    const result = await flowctl(['validate', '--project', join(ROOT, 'fixtures', 'example')])
    expect(result.stdout).toContain(`${EXAMPLE_FLOW_SLUGS.length} flows checked: ok (0 errors, 0 warnings)`)
    const json = JSON.parse((await flowctl(['validate', '--project', join(ROOT, 'fixtures', 'example'), '--json'])).stdout)
    expect(Object.keys(json).sort()).toEqual(['ok', 'problems'])
  })
})

describe('the reference rule', () => {
  it('a node id where its reference name is meant says how to reference it, at file:line:column', async () => {
    const project = await copyFixture('example')
    const flow = [
      'name: Deadline',
      'nodes:',
      '  - { id: start, type: start, name: Start, method: post, next: sla }',
      '  - { id: sla, type: set, name: SLA Due, values: { at: "2026-01-01" }, next: done }',
      '  - id: done',
      '    type: end',
      '    name: Done',
      '    body:',
      '      due: "{{ sla.at }}"',
      '      later: "{{= sla.at & \'!\' }}"',
      '      fine: "{{ sla_due.at }}"',
      '',
    ]
    await writeFile(join(project, 'flows', 'deadline.yaml'), flow.join('\n'))
    const result = await flowctl(['validate', '--project', project])
    expect(result.exitCode).toBe(1)
    const message = '"sla" is the id of node "SLA Due"; reference it as "sla_due"'
    expect(result.stdout).toContain(`flows/deadline.yaml:9:12: node "done": "{{ sla.at }}": ${message}`)
    expect(result.stdout).toMatch(new RegExp(`flows/deadline\\.yaml:10:\\d+: node "done": "\\{\\{= sla\\.at & '!' \\}\\}": ${message}`))
    expect(result.stdout).not.toContain('not a node of this flow')
    expect(result.stdout).not.toContain('sla_due.at')
  })
})

describe('flowctl test --watch', () => {
  it('runs again each time a test file is replaced by rename (an editor’s safe write)', async () => {
    const dir = await copyFixture('testing')
    const child = spawnFlowctl(['test', '--watch', '--flow', 'checkout'], { cwd: dir })
    let stdout = ''
    child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
    const file = join(dir, 'tests', 'checkout.test.yaml')
    const original = await readFile(file, 'utf8')
    const passes = () => stdout.split('watching').length - 1
    try {
      await eventually(async () => passes() === 1, 20_000)
      expect(stdout).toContain('1 passed, 0 failed')
      for (const [round, total] of [
        [1, 7],
        [2, 6],
      ] as const) {
        const temp = join(dir, 'tests', `.checkout.test.yaml.tmp-${round}`)
        await writeFile(temp, original.replace('body: { total: 6 }', `body: { total: ${total} }`))
        await rename(temp, file)
        await eventually(async () => passes() === round + 1, 20_000)
      }
      expect(stdout.match(/change in tests\/checkout\.test\.yaml; running the tests again/g)).toHaveLength(2)
      expect(stdout).toContain('body.total: expected 7, got 6')
      expect(stdout.trimEnd().split('\n').slice(-3).join('\n')).toContain('1 passed, 0 failed')
    } finally {
      child.kill('SIGINT')
    }
    expect((await child).exitCode).toBe(0)
  })
})

describe('the serve banner', () => {
  it('names the dashboard and the SQLite file', async () => {
    const project = await copyFixture('example')
    const serve = await startServe(['--project', project])
    try {
      expect(serve.stdout()).toMatch(/^flowctl serving on http:\/\/\S+\n/)
      expect(serve.stdout()).toContain(`  Dashboard ${serve.base}/\n`)
      expect(serve.stdout()).toContain(`    Store    SQLite ${join(project, '.flowctl', 'flowctl.db')}\n`)
    } finally {
      serve.child.kill('SIGTERM')
      await serve.child
    }
  })

  it.runIf(PG_URL)('names the PostgreSQL host and database, never the password', async () => {
    const db = await createTestDatabase()
    const project = await copyFixture('example')
    const url = new URL(db.url)
    url.username = 'postgres'
    url.password = 'banner-secret-pw'
    const serve = await startServe(['--project', project], { env: { FLOWCTL_DATABASE_URL: url.toString() } })
    try {
      const database = url.pathname.slice(1)
      expect(serve.stdout()).toContain(`    Store    PostgreSQL ${url.hostname}:${url.port || '5432'}/${database} (schema flowctl)\n`)
      expect(serve.output()).not.toContain('banner-secret-pw')
    } finally {
      serve.child.kill('SIGTERM')
      await serve.child
      await db.drop()
    }
  })
  pgSkipNotice('serve banner (PostgreSQL)')
})

describe('$schema links written by init', () => {
  const linkIn = async (file: string) => /\$schema=(\S+)/.exec(await readFile(file, 'utf8'))?.[1] ?? ''

  it('are relative paths into node_modules when flowctl is a devDependency, with no warning', async () => {
    const repo = await makeTempDir('flowctl-repo-')
    await writeFile(join(repo, 'package.json'), JSON.stringify({ name: 'shop', private: true, devDependencies: { flowctl: '^0.1.0' } }))
    const result = await flowctl(['init', join(repo, 'api')])
    expect(result.exitCode).toBe(0)
    expect(result.stderr).toBe('')
    expect(await linkIn(join(repo, 'api', 'flows', 'hello.yaml'))).toBe('../../node_modules/flowctl/schema/flow.schema.json')
    expect(await linkIn(join(repo, 'api', 'tests', 'hello.test.yaml'))).toBe('../../node_modules/flowctl/schema/test.schema.json')
  })

  it('name this machine’s schemas otherwise, never a registry URL, and init warns', async () => {
    const dir = join(await makeTempDir(), 'alone')
    const result = await flowctl(['init', dir])
    expect(result.exitCode).toBe(0)
    expect(result.stderr).toContain("warning: the $schema links in flows/hello.yaml and tests/hello.test.yaml point to this machine's flowctl")
    for (const [file, schema] of [
      ['flows/hello.yaml', 'flow.schema.json'],
      ['tests/hello.test.yaml', 'test.schema.json'],
    ]) {
      const link = await linkIn(join(dir, file!))
      expect(link).toMatch(/^file:/)
      expect(fileURLToPath(link)).toBe(join(ROOT, 'schema', schema!))
    }
    const written = await Promise.all(['flows/hello.yaml', 'tests/hello.test.yaml', 'flowctl.yaml'].map((file) => readFile(join(dir, file), 'utf8')))
    expect(written.join('\n')).not.toMatch(/unpkg|jsdelivr|https?:\/\/[^\s]*schema/)
    const json = JSON.parse((await flowctl(['init', join(dir, '..', 'again'), '--json'])).stdout)
    expect(json.warnings).toHaveLength(1)
  })
})
