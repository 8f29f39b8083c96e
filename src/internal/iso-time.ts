// ISO times (`2024-05-01T09:00:07.250Z`) as Date.prototype.toISOString writes them, without calling
// it for every run: V8 formats through its C++ printf, ~7,000 instructions a call, and a recorded run
// needs three (its start, its record, its documents' creation). The current minute's prefix is
// kept and the seconds and milliseconds written here; any other time goes to toISOString.
// Equivalence with toISOString, and with canonicalIso's parse: test/internal/iso-time.test.ts.

const MINUTE_MS = 60_000
/** 10000-01-01T00:00:00.000Z: from here on toISOString writes a six-digit year. */
const YEAR_10000_MS = 253_402_300_800_000

let minuteStart = Number.NaN
/** `YYYY-MM-DDTHH:MM:` of the minute that starts at `minuteStart`. */
let minutePrefix = ''

function twoDigits(n: number): string {
  return n < 10 ? `0${n}` : `${n}`
}

function threeDigits(n: number): string {
  return n < 10 ? `00${n}` : n < 100 ? `0${n}` : `${n}`
}

/** `new Date(ms).toISOString()`. */
export function isoTime(ms: number): string {
  let intoMinute = ms - minuteStart
  if (!(intoMinute >= 0 && intoMinute < MINUTE_MS) || !Number.isInteger(ms)) {
    if (!Number.isInteger(ms) || ms < 0 || ms >= YEAR_10000_MS) return new Date(ms).toISOString()
    minuteStart = ms - (ms % MINUTE_MS)
    minutePrefix = new Date(minuteStart).toISOString().slice(0, 17)
    intoMinute = ms - minuteStart
  }
  const seconds = Math.floor(intoMinute / 1000)
  return `${minutePrefix}${twoDigits(seconds)}.${threeDigits(intoMinute - seconds * 1000)}Z`
}

/**
 * Whether `text` is already a time of the current minute in the form isoTime writes (then it is its
 * own canonical form, and parsing it again would give it back).
 */
export function isCanonicalOfThisMinute(text: string): boolean {
  if (text.length !== 24 || minutePrefix === '' || !text.startsWith(minutePrefix)) return false
  const tens = text.charCodeAt(17)
  return (
    tens >= 48 &&
    tens <= 53 &&
    isDigit(text, 18) &&
    text.charCodeAt(19) === 46 &&
    isDigit(text, 20) &&
    isDigit(text, 21) &&
    isDigit(text, 22) &&
    text.charCodeAt(23) === 90
  )
}

function isDigit(text: string, at: number): boolean {
  const code = text.charCodeAt(at)
  return code >= 48 && code <= 57
}
