// Prints "N passed, N failed" from vitest's JSON report. A test file that failed to load
// (no test inside it failed, but the file did) counts as one failure, so it cannot hide.
const fs = require('node:fs')
const file = process.argv[2]
if (!fs.existsSync(file)) {
  console.log('0 passed, 1 failed')
  process.exit(0)
}
const report = JSON.parse(fs.readFileSync(file, 'utf8'))
const brokenFiles = (report.testResults || []).filter(
  (result) => result.status === 'failed' && !(result.assertionResults || []).some((a) => a.status === 'failed'),
).length
console.log(`${report.numPassedTests} passed, ${report.numFailedTests + brokenFiles} failed`)
