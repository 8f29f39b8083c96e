// `flowctl test --reporter junit`: JUnit XML that the Jenkins xunit plugin's `junit-10.xsd` accepts
// (SPEC §20), which GitHub Actions reporters and GitLab read as well: a suite per test file, a case
// per test case, failures with their explanation, and a broken test file as a case with an <error>.
// Written by hand: the schema allows no `file` on testcase and no `skipped` on testsuites, which
// general-purpose builders add.
import type { Problem } from '../model/project.js'
import { failureLines } from './report.js'
import type { CaseResult } from './run-case.js'

interface Suite {
  tests: number
  failures: number
  errors: number
  ms: number
  xml: string
}

/** The report of a pass that ran: one testsuite per test file. */
export function junitReport(results: CaseResult[], projectName: string): string {
  const byFile = new Map<string, CaseResult[]>()
  for (const result of results) byFile.set(result.file, [...(byFile.get(result.file) ?? []), result])
  const suites = [...byFile].map(([file, cases]) =>
    suite(file, {
      tests: cases.length,
      failures: cases.filter((result) => !result.ok).length,
      errors: 0,
      ms: sum(cases.map((result) => result.durationMs)),
      xml: cases.map((result) => passedOrFailed(file, result)).join(''),
    }),
  )
  return document(projectName, suites)
}

/**
 * The report of a pass that could not run (exit 2): each broken file is a testsuite holding one
 * testcase with an <error> listing its problems (file:line:column), so CI shows why nothing ran.
 */
export function junitBrokenReport(problems: Problem[], reason: string, projectName: string): string {
  const byFile = new Map<string, string[]>()
  for (const p of problems) byFile.set(p.file, [...(byFile.get(p.file) ?? []), `${p.file}:${p.line}:${p.column}: ${p.message}`])
  if (byFile.size === 0) byFile.set('flowctl test', [reason])
  const suites = [...byFile].map(([file, lines]) => {
    const message = lines.length === 1 ? lines[0]! : `${lines[0]!} (and ${lines.length - 1} more)`
    const error = `<error type="broken" message="${attr(message)}">${escape(`${reason}\n${lines.join('\n')}`)}</error>`
    return suite(file, { tests: 1, failures: 0, errors: 1, ms: 0, xml: testcase(file, 'load', 0, error) })
  })
  return document(projectName, suites)
}

function passedOrFailed(file: string, result: CaseResult): string {
  if (result.ok) return testcase(result.flow, result.name, result.durationMs, '')
  const lines = failureLines(result)
  const failure = `<failure type="expectation" message="${attr(lines[0] ?? 'failed')}">${escape(`${file}:${result.line}\n${lines.join('\n')}`)}</failure>`
  return testcase(result.flow, result.name, result.durationMs, failure)
}

function testcase(className: string, name: string, ms: number, inner: string): string {
  const open = `    <testcase classname="${attr(className)}" name="${attr(name)}" time="${seconds(ms)}"`
  return inner ? `${open}>\n      ${inner}\n    </testcase>\n` : `${open}/>\n`
}

function suite(name: string, counts: Suite): Suite {
  const { tests, failures, errors, ms, xml } = counts
  const open = `  <testsuite name="${attr(name)}" tests="${tests}" failures="${failures}" errors="${errors}" skipped="0" time="${seconds(ms)}">\n`
  return { ...counts, xml: `${open}${xml}  </testsuite>\n` }
}

function document(name: string, suites: Suite[]): string {
  const total = (key: 'tests' | 'failures' | 'errors' | 'ms') => sum(suites.map((s) => s[key]))
  return (
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    `<testsuites name="${attr(name)}" tests="${total('tests')}" failures="${total('failures')}" errors="${total('errors')}" time="${seconds(total('ms'))}">\n` +
    suites.map((s) => s.xml).join('') +
    '</testsuites>\n'
  )
}

/** Seconds rounded to the millisecond, without float noise (`0.003`, never `0.0029100000000000003`). */
function seconds(ms: number): string {
  return (Math.round(ms) / 1000).toFixed(3)
}

function sum(values: number[]): number {
  return values.reduce((a, b) => a + b, 0)
}

/** Element text; characters XML 1.0 cannot hold at all are dropped. */
function escape(value: string): string {
  return value
    .replace(/[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
}

/** Attribute text: as element text, with line breaks kept as references (a parser would turn them into spaces). */
function attr(value: string): string {
  return escape(value).replace(/\n/g, '&#10;').replace(/\r/g, '&#13;').replace(/\t/g, '&#9;')
}
