// The results table: every row is a flowctl figure, a baseline figure measured in the same run,
// their ratio and the target. Written as Markdown and printed.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { cpus, loadavg } from 'node:os'
import { fileURLToPath } from 'node:url'
import { join } from 'node:path'
import { BENCH_DIR, DURATION, TMP } from './paths.js'
import { stopAll } from './proc.js'

/**
 * row(benchmark, flowctl, baseline, ratio, target, met): `met` is true/false, or null when the row
 * is informational (no target).
 */
export function row(benchmark, flowctl, baseline, ratio, target, met) {
  return { benchmark, flowctl, baseline, ratio, target, met }
}

export const fmtRatio = (r) => (Number.isFinite(r) ? `${r.toFixed(2)}×` : '—')
export const fmtMs = (ms) => (ms >= 100 ? `${ms.toFixed(0)} ms` : `${ms.toFixed(1)} ms`)

export function formatTable(sections) {
  const lines = [
    '# flowctl benchmarks',
    '',
    `Run ${new Date().toISOString()} on ${cpus().length}× ${cpus()[0]?.model ?? 'cpu'}, Node ${process.version}, ` +
      `autocannon ${DURATION} s per run, 50 connections, load average at the end ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' / ')} (1/5/15 min). ` +
      'Every baseline was measured in the same run on the same machine; the server CPU µs per request rows depend least on other load.',
    '',
    '| benchmark | flowctl | baseline | ratio | target | met? |',
    '|---|---|---|---|---|---|',
  ]
  for (const section of sections) {
    for (const r of section.rows) {
      const met = r.met === null ? 'info' : r.met ? 'yes' : '**no**'
      lines.push(`| ${r.benchmark} | ${r.flowctl} | ${r.baseline} | ${r.ratio} | ${r.target} | ${met} |`)
    }
  }
  const notes = sections.flatMap((s) => s.notes.map((n) => `- ${s.name}: ${n}`))
  if (notes.length) lines.push('', '## Notes', '', ...notes)
  return lines.join('\n') + '\n'
}

/**
 * The hand-written sections of an earlier results file (every `## ` section but the generated
 * `## Notes`): what each stop measured and decided, kept below a new table.
 */
export function writtenSections(text) {
  const parts = text.split(/^(?=## )/m).slice(1)
  return parts.filter((part) => !part.startsWith('## Notes\n')).join('')
}

/** Writes the table to `file` (keeping its hand-written sections) and prints it. */
export function writeResults(sections, file = join(BENCH_DIR, 'results.md')) {
  const table = formatTable(sections)
  const kept = existsSync(file) ? writtenSections(readFileSync(file, 'utf8')) : ''
  const text = kept ? `${table}\n${kept}` : table
  mkdirSync(TMP, { recursive: true })
  writeFileSync(file, text)
  console.log('\n' + table)
  console.log(`written to ${file}`)
}

/**
 * Runs one benchmark when its file is the entry script: prints its own table and writes it to
 * bench/.tmp/results-<name>.md (bench/results.md belongs to run-all.js).
 */
export async function runIfMain(metaUrl, name, run) {
  if (process.argv[1] !== fileURLToPath(metaUrl)) return
  try {
    const section = await run()
    writeResults([section], join(TMP, `results-${name}.md`))
  } catch (error) {
    console.error(error)
    process.exitCode = 1
  } finally {
    await stopAll()
  }
}
