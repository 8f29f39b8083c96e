// Text order by UTF-16 code units: what `Array.prototype.sort()` does without a comparator, and what
// SQLite's and PostgreSQL's "C" collation give for ASCII. Unlike `localeCompare`, it is the same on
// every machine and locale, so lists that users see, diff or test against never change order.

/** -1, 0 or 1: `a` before, equal to, or after `b` by code units. */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}
