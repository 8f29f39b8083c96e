// Ids made in this process: document ids and run ids (both sort by creation time, with random
// parts from one pool of CSPRNG bytes), and the names of temporary files written beside a file.
import { randomBytes, randomFillSync } from 'node:crypto'
import { basename, dirname, join } from 'node:path'

// randomBytes per id costs ~3.5 µs (a call into the CSPRNG each time); slicing a 4 KiB pool of
// random bytes costs ~0.2 µs. Each byte is used once. Measured: removed in stop 25, the Run API
// served ~0.87–0.92× the req/s of stop 24's head; put back, 1.03× (bench/results.md, Stop 25).
// The pool is refilled from the CSPRNG (randomFillSync), never from Math.random (SPEC §19).
const POOL_BYTES = 4096
const pool = randomFillSync(Buffer.alloc(POOL_BYTES))
let offset = 0

/** `count` unused bytes of the pool (refilled from the CSPRNG when they run out); returns their offset. */
function takeRandom(count: number): number {
  if (offset + count > POOL_BYTES) {
    randomFillSync(pool)
    offset = 0
  }
  const at = offset
  offset += count
  return at
}

const RANDOM_BYTES = 5
let second = -1
let secondHex = ''
// Like an ObjectId's counter: starts at a random value, +1 per id, so ids made by one process within
// one second still sort in creation order (documents without a sort come back in insertion order).
let counter = randomFillSync(Buffer.alloc(3)).readUIntBE(0, 3)

/**
 * A document id: 24 hex characters, the seconds since 1970 (8), a per-process counter (6), then
 * random (10), so ids sort by creation time like a MongoDB ObjectId. Time order matters for speed:
 * new keys land at the end of the primary-key index instead of on a random page each, which made
 * every group commit rewrite one index page per document.
 */
export function newDocumentId(now: number = Date.now()): string {
  const at = takeRandom(RANDOM_BYTES)
  const seconds = Math.floor(now / 1000)
  if (seconds !== second) {
    second = seconds
    secondHex = seconds.toString(16).padStart(8, '0')
  }
  counter = (counter + 1) & 0xffffff
  const id = secondHex + counter.toString(16).padStart(6, '0') + pool.toString('hex', at, at + RANDOM_BYTES)
  return id
}

/** Characters of a run id's random part: 32 of them, so each carries 5 bits of one random byte. */
const RUN_ID_ALPHABET = '0123456789abcdefghijklmnopqrstuv'
/** 20 characters of 5 bits: 100 random bits (SPEC §19 asks for at least 96). */
export const RUN_ID_RANDOM_CHARS = 20
/** Length of the time-sortable prefix: the millisecond (9 base-36 characters) and a counter (3). */
export const RUN_ID_PREFIX_CHARS = 12

/** Counter values that fit its 3 characters; past them it wraps (order within that millisecond is lost, uniqueness is not). */
const SEQUENCE_SPAN = 36 ** 3
let lastStamp = -1
let stampText = ''
let sequence = 0

/**
 * A run id (32 characters, `[0-9a-z]`): the millisecond in base 36 (fixed width) and a counter
 * within the millisecond, so ids sort by creation time, then 100 bits from the CSPRNG. The random
 * part owes nothing to the time or to other ids: knowing any number of run ids does not help
 * guess another (SPEC §19). 256 is a multiple of 32, so `byte & 31` picks each character evenly.
 */
export function newRunId(now: number = Date.now()): string {
  if (now === lastStamp) sequence = (sequence + 1) % SEQUENCE_SPAN
  else {
    sequence = 0
    lastStamp = now
    stampText = now.toString(36).padStart(9, '0')
  }
  const at = takeRandom(RUN_ID_RANDOM_CHARS)
  let random = ''
  for (let i = at; i < at + RUN_ID_RANDOM_CHARS; i++) random += RUN_ID_ALPHABET[pool[i]! & 31]
  return stampText + sequence.toString(36).padStart(3, '0') + random
}

/**
 * A hidden temporary file beside `path` (`.name.pid.random.tmp`): written, then renamed over `path`,
 * so readers never see half a file; the file watcher ignores hidden names.
 */
export function temporaryPathBeside(path: string): string {
  return join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`)
}
