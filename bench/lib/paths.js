// Fixed locations used by every benchmark.
import { fileURLToPath } from 'node:url'
import { dirname, join } from 'node:path'

export const BENCH_DIR = dirname(dirname(fileURLToPath(import.meta.url)))
export const ROOT = dirname(BENCH_DIR)
export const TMP = join(BENCH_DIR, '.tmp')
// FLOWCTL_BENCH_BIN points the benchmarks at another build (e.g. a patched copy) of the launcher.
export const FLOWCTL = process.env.FLOWCTL_BENCH_BIN ?? join(ROOT, 'bin', 'flowctl.js')
export const DURATION = Number(process.env.BENCH_DURATION ?? 5)
