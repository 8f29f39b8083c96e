// Issue 19 findings on the CLI side, with the real binary: exit codes of serve, the users file
// serve reads, user token rotation, and start-up hints.
import { createServer } from 'node:net'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { writeFile } from 'node:fs/promises'
import { cleanupTempDirs, copyFixture, flowctl, makeTempDir, startServe } from '../helpers.js'

afterAll(cleanupTempDirs)

/** Starts `serve`, waits for it, returns its banner (stdout + stderr so far) and stops it. */
async function serveBanner(args: string[], options: { cwd?: string; env?: Record<string, string> } = {}) {
  const { child: server, base, output } = await startServe(args, options)
  try {
    await new Promise((r) => setTimeout(r, 200))
    return { out: output(), base }
  } finally {
    server.kill('SIGTERM')
    await server
  }
}

describe('serve exit codes', () => {
  it('a busy port is a plain message and exit 1 (not a usage error)', async () => {
    const project = await copyFixture('example')
    const blocker = createServer()
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r))
    const port = (blocker.address() as { port: number }).port
    try {
      const result = await flowctl(['serve', project, '--port', String(port)])
      expect(result.exitCode).toBe(1)
      expect(result.stderr).toContain(`error: port ${port} on 127.0.0.1 is already in use`)
      expect(result.stderr).toContain('--port N')
      expect(result.stderr).not.toContain('Unable to find an available port')
    } finally {
      blocker.close()
    }
  })

  it('a missing project gives the same exit code and one message for run, validate and serve', async () => {
    const empty = await makeTempDir()
    const missing = join(empty, 'nonexistent')
    const results = [
      await flowctl(['run', 'hello', '--project', missing]),
      await flowctl(['validate', '--project', missing]),
      await flowctl(['serve', missing]),
      await flowctl(['serve'], { cwd: empty }),
    ]
    for (const result of results) {
      expect(result.exitCode).toBe(2)
      expect(result.stderr).toMatch(/^error: no flowctl\.yaml in \S+; is this a flowctl project\? \(flowctl init creates one\)$/)
    }
  })
})

describe('users', () => {
  it("serve's banner names the users file, and a project's own .flowctl/users.yaml signs users in", async () => {
    const project = await copyFixture('example')
    const elsewhere = await makeTempDir()
    const added = await flowctl(['users', 'add', 'ada', '--grant', 'shop=viewer', '--json'], { cwd: project })
    expect(added.exitCode).toBe(0)
    expect(added.stderr).toBe('')
    const { token } = JSON.parse(added.stdout)
    // serve started from another folder still reads the project's own users file.
    const { child: server, base, stdout } = await startServe([project], { cwd: elsewhere })
    try {
      const response = await fetch(`${base}/api/openapi/shop`, { headers: { authorization: `Bearer ${token}` } })
      expect(response.status).toBe(200)
      expect(stdout()).toContain(`Users    ${join(project, '.flowctl', 'users.yaml')} (1 user)`)
    } finally {
      server.kill('SIGTERM')
      await server
    }
  })

  it('the banner says where to add users when there are none', async () => {
    const project = await copyFixture('example')
    const { out } = await serveBanner([project], { cwd: project })
    expect(out).toContain(`Users    none yet: ${join(project, '.flowctl', 'users.yaml')} (add one with flowctl users add NAME --grant PROJECT_ID=viewer)`)
  })

  it('warns about a grant on a project that is not here', async () => {
    const project = await copyFixture('example')
    const added = await flowctl(['users', 'add', 'bob', '--grant', 'nosuchproject=viewer'], { cwd: project })
    expect(added.exitCode).toBe(0)
    expect(added.stderr).toContain('warning: granted a role on project "nosuchproject", but the project in this folder is "shop"; check the spelling')
    const granted = await flowctl(['users', 'grant', 'bob', 'shop=viewer'], { cwd: project })
    expect(granted.stderr).toBe('')
    const outside = await flowctl(['users', 'grant', 'bob', 'shop=viewer', '--users', join(project, '.flowctl', 'users.yaml')], { cwd: await makeTempDir() })
    expect(outside.stderr).toContain('there is no flowctl project in')
  })

  it('users rotate gives a new token and the old one stops working', async () => {
    const project = await copyFixture('example')
    const { token: oldToken } = JSON.parse((await flowctl(['users', 'add', 'cy', '--grant', 'shop=viewer', '--json'], { cwd: project })).stdout)
    const rotated = await flowctl(['users', 'rotate', 'cy', '--json'], { cwd: project })
    expect(rotated.exitCode).toBe(0)
    const { name, token } = JSON.parse(rotated.stdout)
    expect(name).toBe('cy')
    expect(token).not.toBe(oldToken)
    expect(JSON.parse((await flowctl(['users', 'list', '--json'], { cwd: project })).stdout)).toEqual([
      { name: 'cy', grants: { shop: 'viewer' }, createdAt: expect.any(String) },
    ])
    const { child: server, base } = await startServe([project], { cwd: project })
    try {
      const ask = (t: string) => fetch(`${base}/api/openapi/shop`, { headers: { authorization: `Bearer ${t}` } })
      expect((await ask(token)).status).toBe(200)
      expect((await ask(oldToken)).status).toBe(401)
    } finally {
      server.kill('SIGTERM')
      await server
    }
    expect((await flowctl(['users', 'rotate', 'nobody'], { cwd: project })).exitCode).toBe(2)
  })
})

describe('start-up hints', () => {
  it('says that the tick endpoint is off without CRON_SECRET, and that schedules need a ticker', async () => {
    const project = await copyFixture('example')
    const { out } = await serveBanner([project])
    expect(out).toContain(
      'note: POST /api/cron/tick is disabled because CRON_SECRET is not set, and schedules exist: nothing runs them; use serve --cron, flowctl tick from crontab, or set CRON_SECRET for an external timer',
    )
    const withSecret = await serveBanner([project], { env: { CRON_SECRET: 'a-long-secret' } })
    expect(withSecret.out).not.toContain('note:')
    const withCron = await serveBanner([project, '--cron'])
    expect(withCron.out).not.toContain('note:')
  })
})

describe('validate output', () => {
  it('prints the problems on standard output, so a pipe (validate | less) shows them', async () => {
    const project = await copyFixture('broken/unknown-node-type')
    const result = await flowctl(['validate', '--project', project])
    expect(result.exitCode).toBe(1)
    expect(result.stdout).toMatch(/^flows\/\S+:\d+:\d+: /m)
    expect(result.stdout).toMatch(/failed \(1 error/)
    expect(result.stderr).toBe('')
  })
})

describe('history table', () => {
  it('has a header row and stays aligned with a long slug', async () => {
    const project = await copyFixture('example')
    const longName = 'A Flow With A Rather Long Name For The Column'
    await writeFile(
      join(project, 'flows', 'long.yaml'),
      `name: ${longName}\nnodes:\n  - { id: start, type: start, name: Start, method: get, next: done }\n  - { id: done, type: end, name: Done, body: { ok: true } }\n`,
    )
    expect((await flowctl(['run', 'a-flow-with-a-rather-long-name-for-the-column', '--project', project])).exitCode).toBe(0)
    expect((await flowctl(['run', 'quote', '--project', project, '--body', '{"items":[{"sku":"X","price":2.5}]}'])).exitCode).toBe(0)
    const result = await flowctl(['history', '--project', project])
    expect(result.exitCode).toBe(0)
    const lines = result.stdout.trimEnd().split('\n')
    expect(lines).toHaveLength(3)
    expect(lines[0]).toMatch(/^STARTED\s+RUN ID\s+FLOW\s+METHOD\s+STATUS\s+HTTP\s+MS\s+ERROR$/)
    // Every column starts at the same place in every row.
    const method = lines[0]!.indexOf('METHOD')
    for (const line of lines.slice(1)) expect(line.slice(method, method + 4)).toBe('CLI ')
    expect(lines[2]).toContain('a-flow-with-a-rather-long-name-for-the-column')
  })
})
