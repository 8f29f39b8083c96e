// Reload baseline: the least a watching server must do. chokidar (flowctl's watcher library, default
// options) watches the flows folder; on a change the file is parsed with yaml and the End node's body is
// served by a plain h3 route. Usage: node reload-baseline.js PORT FLOWS_DIR
import { createServer } from 'node:http'
import { readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { H3 } from 'h3'
import { toNodeHandler } from 'h3/node'
import { watch } from 'chokidar'
import { parse } from 'yaml'

const [port, flowsDir] = [Number(process.argv[2]), process.argv[3]]
const bodies = new Map()

function load(file) {
  if (!file.endsWith('.yaml')) return
  try {
    const flow = parse(readFileSync(file, 'utf8'))
    const end = flow.nodes.find((n) => n.type === 'end')
    bodies.set(flow.name.toLowerCase().replace(/[^a-z0-9]+/g, '-'), end.body)
  } catch {
    /* a half-written file: keep the previous body */
  }
}

for (const name of readdirSync(flowsDir)) load(join(flowsDir, name))
watch(flowsDir, { ignoreInitial: true }).on('add', load).on('change', load)

const app = new H3()
app.get('/api/run/bench/:slug', (event) => bodies.get(event.context.params.slug) ?? new Response('{"ok":false}', { status: 404 }))
createServer(toNodeHandler(app)).listen(port, '127.0.0.1')
