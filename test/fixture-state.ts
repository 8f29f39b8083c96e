// vitest globalSetup: `npm test` and `npm start` (which serves fixtures/example, its state in
// fixtures/example/.flowctl) run side by side (SPEC §21). A marker is put in that folder before the
// tests and must still be there, unchanged, after them: a test that removed or rewrote the folder
// (one used to delete it under the running server) fails the run. Tests work on copies without it
// (`copyFixture` in test/helpers.ts).
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'

const STATE_DIR = resolve(import.meta.dirname, '..', 'fixtures', 'example', '.flowctl')

export default function setup(): () => void {
  const marker = join(STATE_DIR, `npm-test-marker-${process.pid}`)
  const text = `written by npm test (process ${process.pid}) at ${new Date().toISOString()}; removed when it ends\n`
  const created = !existsSync(STATE_DIR)
  mkdirSync(STATE_DIR, { recursive: true })
  writeFileSync(marker, text)
  return () => {
    const intact = existsSync(marker) && readFileSync(marker, 'utf8') === text
    rmSync(marker, { force: true })
    if (created && existsSync(STATE_DIR) && readdirSync(STATE_DIR).length === 0) rmdirSync(STATE_DIR)
    if (intact) return
    // An error thrown here is printed but leaves vitest's exit code at 0: fail the run explicitly.
    process.exitCode = 1
    throw new Error('a test removed or changed fixtures/example/.flowctl (the state of npm start); tests must use copyFixture')
  }
}
