// Plain-text explanations of a failed case, shared by the terminal output and the JUnit report.
import type { CaseResult } from './run-case.js'

/** The lines that explain why a case failed: each failure, its diff, then notes (the run's error). */
export function failureLines(result: CaseResult): string[] {
  const lines: string[] = []
  for (const failure of result.failures) {
    lines.push(failure.field === 'mocks' || failure.field === 'failedNodeId' ? failure.message : `${failure.field}: ${failure.message}`)
    if (failure.diff.length) {
      for (const mismatch of failure.mismatches) lines.push(`  ${mismatch.path}: ${mismatch.message}`)
      lines.push('  - expected', '  + received')
      for (const line of failure.diff) lines.push(`  ${line}`)
    }
  }
  for (const note of result.notes) lines.push(note)
  return lines
}
