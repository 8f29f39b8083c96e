// Start-up baseline of bench/startup-large.js: what any tool must do before it can serve a project,
// read every flow file and parse it with `yaml`, and nothing else. Usage: node parse-baseline.js FLOWS_DIR
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parse } from 'yaml'

const flowsDir = process.argv[2]
let nodes = 0
for (const name of readdirSync(flowsDir).sort()) {
  const flow = parse(readFileSync(join(flowsDir, name), 'utf8'))
  nodes += flow.nodes.length
}
const cpu = process.cpuUsage()
// The node count proves every file was parsed; the CPU time (ms) is the steadier figure on a loaded machine.
process.stdout.write(`${nodes} ${(cpu.user + cpu.system) / 1000}\n`)
