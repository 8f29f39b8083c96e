// "Did you mean" for names in flow files: the closest known name by edit distance (leven), when it is
// close enough to be a typo rather than a different word.
import leven from 'leven'

/** The candidate closest to `word`, or null when none is within a typo's distance. */
export function closestName(word: string, candidates: Iterable<string>): string | null {
  const lower = word.toLowerCase()
  // A third of the word's length, at least 1 and at most 3 edits: `iff`→`if`, `stauts`→`status`.
  const limit = Math.min(3, Math.max(1, Math.floor(word.length / 3)))
  let best: string | null = null
  let bestDistance = Infinity
  for (const candidate of candidates) {
    if (candidate === word) continue
    const distance = typoDistance(lower, candidate.toLowerCase())
    if (distance <= limit && distance < bestDistance) {
      best = candidate
      bestDistance = distance
    }
  }
  return best
}

/** ` (did you mean "x"?)`, or '' when nothing is close. */
export function didYouMean(word: string, candidates: Iterable<string>): string {
  const match = closestName(word, candidates)
  return match === null ? '' : ` (did you mean "${match}"?)`
}

/**
 * Edit distance, where swapped letters (`ned` for `end`) count as one edit and a word that is the
 * start of the candidate (`bool` for `boolean`) counts as one.
 */
function typoDistance(word: string, candidate: string): number {
  if (word.length >= 3 && candidate.startsWith(word)) return 1
  const distance = leven(word, candidate)
  if (distance > 1 && word.length === candidate.length && [...word].sort().join('') === [...candidate].sort().join(''))
    return Math.min(distance, 1 + Math.floor((distance - 2) / 2))
  return distance
}
