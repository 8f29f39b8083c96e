// Reads a V8 .cpuprofile and lists the functions and files with the most self time.
import { readFileSync } from 'node:fs'

/** node_modules/<package>, dist/<folder>, node:<module> or the native entry a file belongs to. */
function groupOf(file) {
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(file)
  if (pkg) return `node_modules/${pkg[1]}`
  const dist = /(?:^|\/)dist\/([^/]+)\//.exec(file)
  if (dist) return `dist/${dist[1]}/ (src/${dist[1]}/)`
  if (file.startsWith('node:internal/modules') || file.startsWith('node:internal/deps/cjs')) return 'node: module loading'
  if (file.startsWith('node:')) return 'node: other internals'
  return file
}

/**
 * Returns { totalMs, functions: [{ name, where, ms, pct }], files: [{ file, ms, pct }],
 * groups: [{ file, ms, pct }] (by package / dist folder) }, each sorted by ms.
 */
export function topSelfTime(file, { root = '' } = {}) {
  const profile = JSON.parse(readFileSync(file, 'utf8'))
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const selfUs = new Map()
  profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)))
  const functions = new Map()
  const files = new Map()
  const groups = new Map()
  let total = 0
  for (const [id, us] of selfUs) {
    const { functionName, url, lineNumber } = byId.get(id).callFrame
    const where = url ? `${url.replace('file://', '').replace(root, '')}:${lineNumber + 1}` : '(native)'
    const name = functionName || '(anonymous)'
    const key = `${name} ${where}`
    const entry = functions.get(key) ?? { name, where, ms: 0 }
    entry.ms += us / 1000
    functions.set(key, entry)
    const fileKey = url ? url.replace('file://', '').replace(root, '') : `(${name})`
    files.set(fileKey, (files.get(fileKey) ?? 0) + us / 1000)
    groups.set(groupOf(fileKey), (groups.get(groupOf(fileKey)) ?? 0) + us / 1000)
    total += us / 1000
  }
  const pct = (ms) => (100 * ms) / total
  return {
    totalMs: total,
    functions: [...functions.values()].sort((a, b) => b.ms - a.ms).map((f) => ({ ...f, pct: pct(f.ms) })),
    files: [...files].map(([file, ms]) => ({ file, ms, pct: pct(ms) })).sort((a, b) => b.ms - a.ms),
    groups: [...groups].map(([file, ms]) => ({ file, ms, pct: pct(ms) })).sort((a, b) => b.ms - a.ms),
  }
}
