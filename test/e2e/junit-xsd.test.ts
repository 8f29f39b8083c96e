// SPEC §20: `flowctl test --reporter junit` writes XML that the Jenkins xunit plugin's junit-10.xsd
// (test/fixtures/junit-10.xsd, the plugin's published schema) accepts, checked with the real
// `xmllint --schema`; times are seconds rounded to the millisecond; a broken test file still writes
// the report, as a testcase with an <error>, and exits 2.
import { execFileSync, spawnSync } from 'node:child_process'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { cleanupTempDirs, copyFixture, flowctl } from '../helpers.js'

afterAll(cleanupTempDirs)

const XSD = fileURLToPath(new URL('../fixtures/junit-10.xsd', import.meta.url))

function hasXmllint(): boolean {
  try {
    execFileSync('xmllint', ['--version'], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}
const xmllint = hasXmllint()
if (!xmllint) console.warn('junit-xsd.test.ts: xmllint is not installed (apt-get install libxml2-utils); the XSD checks are skipped')

/** xmllint's verdict: exit code and its messages. */
function validate(file: string): { code: number | null; messages: string } {
  const run = spawnSync('xmllint', ['--noout', '--schema', XSD, file], { encoding: 'utf8' })
  return { code: run.status, messages: run.stderr }
}

const FAILING = `flow: order-total
cases:
  - name: wrong total <&> "quoted"
    input: { body: { items: [{ sku: A, qty: 2, price: 10 }] } }
    mocks:
      shipping: { status: 200, body: { cost: 4.5 } }
    expect:
      body: { total: 21, shipping: 4.5 }
`

describe.skipIf(!xmllint)('JUnit XML against the Jenkins xunit junit-10.xsd', () => {
  it('the schema itself rejects what the old report wrote (file on testcase, skipped on testsuites)', async () => {
    const dir = await copyFixture('testing')
    const bad = join(dir, 'bad.xml')
    await writeFile(
      bad,
      '<testsuites skipped="0"><testsuite name="a" tests="1" failures="0" errors="0"><testcase name="x" file="a.yaml"/></testsuite></testsuites>',
    )
    const verdict = validate(bad)
    expect(verdict.code).not.toBe(0)
    expect(verdict.messages).toContain("attribute 'skipped' is not allowed")
    expect(verdict.messages).toContain("attribute 'file' is not allowed")
  })

  it('a pass with a failing case: valid, times in seconds to the millisecond, failure explained', async () => {
    const dir = await copyFixture('testing')
    await writeFile(join(dir, 'tests', 'failing.test.yaml'), FAILING)
    const result = await flowctl(['test', '--project', dir, '--reporter', 'junit', '--out', 'junit.xml'], { cwd: dir })
    expect(result.exitCode, result.stderr).toBe(1)
    const file = join(dir, 'junit.xml')
    const verdict = validate(file)
    expect(verdict.messages).toContain('validates')
    expect(verdict.code).toBe(0)
    const xml = await readFile(file, 'utf8')
    const times = [...xml.matchAll(/ time="([^"]*)"/g)].map((match) => match[1])
    expect(times.length).toBeGreaterThan(4)
    for (const time of times) expect(time).toMatch(/^\d+\.\d{3}$/)
    expect(xml).toContain('name="wrong total &lt;&amp;&gt; &quot;quoted&quot;"')
    expect(xml).toContain('<failure type="expectation" message="body: does not match">')
    expect(xml).toMatch(/<testsuites name="Testing" tests="4" failures="1" errors="0" time="[\d.]+">/)
  })

  it('a broken test file: exit 2, the report is still written, the file is a testcase with an <error>', async () => {
    const dir = await copyFixture('testing')
    await writeFile(join(dir, 'tests', 'broken.test.yaml'), 'flow: order-total\ncases:\n  - name: no input\n    expect: { status: [oops }\n')
    const result = await flowctl(['test', '--project', dir, '--reporter', 'junit', '--out', 'reports/junit.xml'], { cwd: dir })
    expect(result.exitCode).toBe(2)
    const file = join(dir, 'reports', 'junit.xml')
    const verdict = validate(file)
    expect(verdict.messages).toContain('validates')
    expect(verdict.code).toBe(0)
    const xml = await readFile(file, 'utf8')
    expect(xml).toMatch(/<testsuite name="tests\/broken.test.yaml" tests="1" failures="0" errors="1"/)
    expect(xml).toMatch(
      /<testcase classname="tests\/broken.test.yaml" name="load" time="0.000">\n\s+<error type="broken" message="tests\/broken.test.yaml:\d+:\d+: /,
    )
    expect(xml).toMatch(/<testsuites name="Testing" tests="1" failures="0" errors="1"/)
  })
})
