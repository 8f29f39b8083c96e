// `flowctl test --reporter junit`: JUnit XML, as CI systems (GitHub Actions reporters, GitLab,
// Jenkins) read it: a suite per test file, a case per test case, failures with their explanation.
import { createRequire } from 'node:module'
import type { Builder } from 'junit-report-builder'
import { failureLines } from './report.js'
import type { CaseResult } from './run-case.js'

// CommonJS; loaded only when a JUnit report is asked for.
const require = createRequire(import.meta.url)

export function junitReport(results: CaseResult[], projectName: string): string {
  const builder = (require('junit-report-builder') as Builder).newBuilder().name(projectName)
  const byFile = new Map<string, CaseResult[]>()
  for (const result of results) byFile.set(result.file, [...(byFile.get(result.file) ?? []), result])
  for (const [file, cases] of byFile) {
    const suite = builder.testSuite().name(file)
    for (const result of cases) {
      const testCase = suite
        .testCase()
        .className(result.flow)
        .name(result.name)
        .file(file)
        .time(result.durationMs / 1000)
      if (!result.ok) {
        const lines = failureLines(result)
        testCase.failure(lines[0] ?? 'failed', 'expectation').stacktrace(`${file}:${result.line}\n${lines.join('\n')}`)
      }
    }
  }
  return builder.build()
}
