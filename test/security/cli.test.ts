// Hostile files and flags against the real `flowctl` binary: a file given as the project folder,
// a YAML alias bomb in one flow file, and --trust-proxy values.
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { cleanupTempDirs, copyFixture, flowctl, startServe } from '../helpers.js'

afterAll(cleanupTempDirs)

/** 9 levels of 9 aliases each: 387 million strings once expanded ("billion laughs"). */
function aliasBomb(): string {
  const lines = ['name: Bomb', 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
  let previous = 'a'
  for (const name of 'bcdefghi') {
    lines.push(`${name}: &${name} [${Array(9).fill(`*${previous}`).join(',')}]`)
    previous = name
  }
  return lines.join('\n') + '\n'
}

describe('--project naming a file', () => {
  it.each([['validate'], ['run', 'quote'], ['history'], ['tick'], ['test'], ['export-openapi'], ['serve', '--port', '0']])(
    '%s prints a clear message and exits 2',
    async (...args) => {
      const dir = await copyFixture('example')
      const result = await flowctl([...args, '--project', join(dir, 'flowctl.yaml')])
      expect(result.exitCode).toBe(2)
      expect(result.stderr).toContain('is a file, not a project folder')
      expect(result.stderr).not.toMatch(/ENOTDIR/)
    },
  )

  it('init into a file exits 2', async () => {
    const dir = await copyFixture('example')
    const result = await flowctl(['init', join(dir, 'flowctl.yaml')])
    expect(result.exitCode).toBe(2)
    expect(result.stderr).toContain('is a file, not a folder')
  })
})

describe('a YAML alias bomb in one flow file', () => {
  it('validate --json reports it for that file only, with its position', async () => {
    const dir = await copyFixture('example')
    await writeFile(join(dir, 'flows', 'bomb.yaml'), aliasBomb())
    const result = await flowctl(['validate', '--json', '--project', dir])
    expect(result.exitCode).toBe(1)
    const report = JSON.parse(result.stdout)
    const problems = report.problems.filter((p: { severity?: string; file: string }) => p.file === 'flows/bomb.yaml')
    expect(problems).toHaveLength(1)
    expect(problems[0]).toMatchObject({ line: 3, column: 8 })
    expect(problems[0].message).toMatch(/aliases expand too much/)
    expect(report.problems.filter((p: { file: string }) => p.file !== 'flows/bomb.yaml')).toEqual([])
  })

  it('serve keeps serving the other flows', async () => {
    const dir = await copyFixture('example')
    await writeFile(join(dir, 'flows', 'bomb.yaml'), aliasBomb())
    const { child: server, base } = await startServe([dir, '--no-watch'])
    try {
      const response = await fetch(`${base}/api/run/shop/order-status/open`)
      expect(response.status).toBe(200)
    } finally {
      server.kill('SIGTERM')
      const result = await server
      expect(String(result.stderr)).toContain('flows/bomb.yaml')
    }
  })
})

describe('serve --trust-proxy', () => {
  it('rejects a value that is neither hops nor addresses (exit 2)', async () => {
    const dir = await copyFixture('example')
    const result = await flowctl(['serve', dir, '--trust-proxy', 'not-an-address', '--port', '0'])
    expect(result.exitCode).toBe(2)
    expect(result.stderr).toContain('--trust-proxy expects')
  })
})
