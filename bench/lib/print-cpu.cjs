// Preloaded (node --require) into a command whose CPU time a bench wants: at exit it writes
// "cpu-ms <user+system of every thread>" to standard error.
const { writeSync } = require('node:fs')
process.on('exit', () => {
  const { user, system } = process.cpuUsage()
  writeSync(2, `\ncpu-ms ${(user + system) / 1000}\n`)
})
