// Catalog errors capture no stack frames (a refused request is an answer, not a bug, and a flood of
// them should stay cheap), except under --debug: then an error that ends a command shows where it
// came from, as any unexpected error does.
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { FlowctlError, keepCatalogErrorFrames } from '../../src/errors.js'
import { cleanupTempDirs, makeTempDir, ROOT } from '../helpers.js'

const FRAME = /\n\s+at .+:\d+:\d+/

function flowctl(args: string[], cwd: string) {
  return spawnSync(process.execPath, [join(ROOT, 'bin', 'flowctl.js'), ...args], { cwd, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } })
}

afterEach(() => keepCatalogErrorFrames(false))
afterAll(cleanupTempDirs)

describe('stack frames of catalog errors', () => {
  it('are not captured by default, and are once --debug asks for them', () => {
    expect(new FlowctlError('FLOW_NOT_FOUND').stack).not.toMatch(FRAME)
    keepCatalogErrorFrames(true)
    expect(new FlowctlError('FLOW_NOT_FOUND').stack).toMatch(/FlowctlError: .*\n\s+at .*debug-stack\.test\.ts:\d+:\d+/)
    keepCatalogErrorFrames(false)
    expect(new FlowctlError('FLOW_NOT_FOUND').stack).not.toMatch(FRAME)
  })

  it('flowctl --debug prints the frames of the error that ended the command; without --debug, none', async () => {
    const dir = await makeTempDir('flowctl-debug-')
    const plain = flowctl(['validate'], dir)
    expect(plain.status).toBe(2)
    expect(plain.stderr).toContain('error: ')
    expect(plain.stderr).not.toMatch(FRAME)
    const debug = flowctl(['validate', '--debug'], dir)
    expect(debug.status).toBe(plain.status)
    // The frames name the bundled modules (dist/bin) that threw it.
    expect(debug.stderr).toMatch(/FlowctlError: [^\n]+(\n\s+at [^\n]+dist\/bin\/[^\n]+:\d+:\d+)+/)
  })
})
