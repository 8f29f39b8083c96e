// bin/flowctl.js turns V8's optimising compiler off for every command but `serve`: a command on an
// ordinary project ends before optimised code pays for its compiles (~15 ms of CPU on one flow).
// A load of thousands of flow files is the exception: without it, `flowctl validate` of 10,000 flows
// took 1.5× the CPU (bench/load-cpu.js). Counted per file checked, so a small project never pays.
import { setFlagsFromString } from 'node:v8'

/** Flow files checked in this process before the optimising compiler is turned back on. */
const OPTIMISE_AFTER_FILES = 500

let checked = 0

export function countCheckedFlowFile(): void {
  if (++checked === OPTIMISE_AFTER_FILES) setFlagsFromString('--opt')
}
