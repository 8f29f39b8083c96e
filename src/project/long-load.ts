// bin/flowctl.js turns V8's optimising compiler off for every command: a command on an ordinary
// project ends before optimised code pays for its compiles (~15 ms of CPU on one flow), and `serve`
// loads its projects with it off too (it turns it back on once it listens, src/cli/serve.ts).
// A load of thousands of flow files is the exception: without it, `flowctl validate` of 10,000 flows
// took 1.5× the CPU (bench/load-cpu.js). Counted per file, so a small project never pays.
import { setFlagsFromString } from 'node:v8'

/** Flow files checked in this process before the optimising compiler is turned back on. */
const OPTIMISE_AFTER_FILES = 500
/**
 * The same for `serve`: optimised code of the loader stays in memory for the life of the server
 * (with the compiler threads' own memory: ~6 MB of RSS with 1,000 flows), against ~2% more load CPU
 * at 1,000 flows (docs/performance.md). A larger project gets the compiler from the start of its
 * load (`startingFlowLoad`): the first 2,000 files of 10,000 without it cost ~15% more CPU.
 */
const SERVE_OPTIMISE_AFTER_FILES = 2000

let optimiseAfter = OPTIMISE_AFTER_FILES
let checked = 0
let optimising = false

function optimise(): void {
  if (optimising) return
  optimising = true
  setFlagsFromString('--opt')
}

/** `serve` loads up to SERVE_OPTIMISE_AFTER_FILES flow files before turning the compiler on. */
export function loadingForServe(): void {
  optimiseAfter = SERVE_OPTIMISE_AFTER_FILES
}

/** A load about to check `files` flow files: one that will reach the count gets the compiler now. */
export function startingFlowLoad(files: number): void {
  if (checked + files >= optimiseAfter) optimise()
}

export function countCheckedFlowFile(): void {
  if (++checked >= optimiseAfter) optimise()
}
