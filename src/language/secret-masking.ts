// Masking secret values in text that leaves the engine (traces, history, logs, error bodies, alerts).
// A secret rarely travels as its literal value alone: a flow puts it in a JSON body, a query string,
// a form or a Basic `user:pass` header. So every secret is masked in each form it takes on the way
// out — literal, JSON-escaped, percent-encoded (upper- and lower-case hex), form-encoded, as the WHATWG
// URL parser writes it in each part of a URL, and base64 (standard and URL-safe) — and any base64 word whose decoded text holds a secret (the Basic form,
// whatever the user name) is masked whole. Every non-empty secret is masked, however short:
// `validate` warns about short ones, since they also mask ordinary text that happens to match.
import type { Secrets } from '../model/project.js'

const MASK = '***'

interface Masker {
  /** Every form of every secret, longest first, as one alternation. */
  forms: RegExp
  /** The same forms as a list: `includes` over each is faster than the alternation for a yes/no. */
  formList: string[]
  /** Base64 words shorter than this cannot decode to the shortest secret, so are not decoded. */
  minWord: number
  /** What a long base64 word must contain to decode to a form (`coresOf`); null when that cannot be told. */
  cores: Cores | null
}

interface Cores {
  standard: string[]
  urlSafe: string[]
}

const maskers = new WeakMap<Secrets, { size: number; masker: Masker | null }>()

/** The masker of a secrets map (null when it has no non-empty value). Maps are not changed after loading. */
function maskerOf(secrets: Secrets): Masker | null {
  const cached = maskers.get(secrets)
  if (cached && cached.size === secrets.size) return cached.masker
  const values = [...new Set(secrets.values())].filter((value) => value.length > 0)
  let masker: Masker | null = null
  if (values.length > 0) {
    const forms = new Set<string>()
    for (const value of values) for (const form of formsOf(value)) forms.add(form)
    const sorted = [...forms].sort((a, b) => b.length - a.length)
    const shortest = Math.min(...values.map((v) => Buffer.byteLength(v)))
    masker = {
      forms: new RegExp(sorted.map(escapeRegExp).join('|'), 'g'),
      formList: sorted,
      minWord: Math.max(2, Math.ceil((shortest * 4) / 3)),
      cores: coresOf(sorted),
    }
  }
  maskers.set(secrets, { size: secrets.size, masker })
  return masker
}

/**
 * The base64 text a word must contain if its decoded bytes hold the UTF-8 bytes of a form: for each
 * form and each place of its first byte in a 3-byte group, the 4-character groups made of the
 * form's bytes alone (the first group also holds bytes before the form, the last one bytes after
 * it). Null when a form is too short to fill a group at some place (under 5 bytes), or is not
 * well-formed UTF-16 (a lone surrogate: its UTF-8 bytes are those of U+FFFD, yet it can match half
 * of a pair in decoded text), since a word then cannot be ruled out without decoding it.
 */
function coresOf(forms: string[]): Cores | null {
  const cores = new Set<string>()
  for (const form of forms) {
    const bytes = Buffer.from(form, 'utf8')
    if (bytes.toString('utf8') !== form) return null
    for (let before = 0; before < 3; before++) {
      const base64 = Buffer.concat([Buffer.alloc(before), bytes]).toString('base64')
      const core = base64.slice(before > 0 ? 4 : 0, 4 * Math.floor((before + bytes.length) / 3))
      if (core.length === 0) return null
      cores.add(core)
    }
  }
  // A word holding a core holds every shorter core inside it: only the shortest need be looked for.
  const sorted = [...cores].sort((a, b) => a.length - b.length)
  const standard = sorted.filter((core, i) => !sorted.slice(0, i).some((shorter) => core.includes(shorter)))
  return { standard, urlSafe: standard.map((core) => core.replace(/\+/g, '-').replace(/\//g, '_')) }
}

/** The forms a secret takes in text: literal, JSON string, percent-encoded, form-encoded, base64. */
export function formsOf(value: string): string[] {
  const forms = [value, JSON.stringify(value).slice(1, -1), new URLSearchParams({ v: value }).toString().slice(2)]
  let percent: string | null = null
  try {
    percent = encodeURIComponent(value)
  } catch {
    // A lone surrogate cannot be percent-encoded: no text holds that form.
  }
  if (percent !== null)
    forms.push(
      percent,
      percent.replace(/%[0-9A-F]{2}/g, (hex) => hex.toLowerCase()),
    )
  const base64 = Buffer.from(value, 'utf8').toString('base64')
  forms.push(base64, base64.replace(/=+$/, ''), Buffer.from(value, 'utf8').toString('base64url'))
  forms.push(...urlFormsOf(value))
  return [...new Set(forms)].filter((form) => form.length > 0)
}

/**
 * What the WHATWG URL parser (`new URL()`, fetch) makes of a secret written into a URL as it is: each
 * part of a URL percent-encodes its own few characters and leaves the rest (a path keeps `'`, `|`
 * and `^`, a query encodes `'` but keeps `{}`, a user name encodes `@:/`; none touches `%`). So the
 * forms are taken from the parser itself, in the path, query, fragment and user info, set whole
 * or written after a prefix (then a `?` or `#` inside the secret starts the next part).
 */
function urlFormsOf(value: string): string[] {
  const forms: string[] = []
  const add = (make: () => string | null) => {
    try {
      const form = make()
      // The parser drops tabs and newlines and trims spaces: a shorter form would mask ordinary text.
      if (form !== null && form.length >= value.length) forms.push(form)
    } catch {
      // Text the parser refuses cannot come out of a URL.
    }
  }
  const base = () => new URL('http://h/')
  const after = (prefix: string) => () => {
    const href = new URL(prefix + value).href
    return href.startsWith(prefix) ? href.slice(prefix.length) : null
  }
  add(() => encodeURI(value))
  add(() => Object.assign(base(), { pathname: `/${value}` }).pathname.slice(1))
  add(() => Object.assign(base(), { search: `?${value}` }).search.slice(1))
  add(() => Object.assign(base(), { hash: `#${value}` }).hash.slice(1))
  add(() => Object.assign(base(), { username: value }).username)
  add(after('http://h/p/'))
  add(after('http://h/p?q='))
  return forms
}

// The end of a run of base64 characters: in texts longer than `LONG_TEXT`, runs longer than
// `LONG_RUN` are passed over by this native search (`longWordHoldsSecretSkipping`), not character
// by character.
const NOT_BASE64 = /[^A-Za-z0-9+/_-]/g
const LONG_RUN = 64
const LONG_TEXT = 4096

// Runs of base64 characters (either alphabet) with their padding. Greedy and without lookbehind:
// the scan is linear and cheap; words are filtered by length in code.
const BASE64_WORD = /[A-Za-z0-9+/_-]+={0,2}/g

/** `text` with every form of every secret, and every base64 word holding one, shown as `***`. */
export function maskText(text: string, secrets: Secrets): string {
  const masker = maskerOf(secrets)
  if (!masker || text.length === 0) return text
  return maskWith(text, masker)
}

/**
 * Whether JSON text (from JSON.stringify) holds a secret in a form `maskText` masks in its strings.
 * One scan of the text instead of one per string: most values hold none and are then kept as they
 * are. Each escape (`\n`, `\"`, `\u0000`…) stands for one character that is not base64, so it
 * ends a word: base64 words then start and end where they do in the strings themselves.
 */
export function jsonHoldsSecret(json: string, secrets: Secrets): boolean {
  const masker = maskerOf(secrets)
  if (!masker) return false
  for (const form of masker.formList) if (json.includes(form)) return true
  return json.length > LONG_TEXT ? longWordHoldsSecretSkipping(json, masker) : longWordHoldsSecret(json, masker)
}

/** One pass over JSON text: decodes only base64 words long enough to hold a secret. */
function longWordHoldsSecret(json: string, masker: Masker): boolean {
  let start = -1
  for (let i = 0; i <= json.length; i++) {
    const code = i < json.length ? json.charCodeAt(i) : 0
    if (isBase64Char(code)) {
      if (start < 0) start = i
      continue
    }
    if (start >= 0) {
      let end = i
      while (end < json.length && end - i < 2 && json.charCodeAt(end) === 61) end++ // `=` padding
      if (end - start >= masker.minWord && decodedHoldsSecret(json.slice(start, end), masker)) return true
      start = -1
    }
    if (code === 92) i += json.charCodeAt(i + 1) === 117 ? 5 : 1 // an escape: `\uXXXX` or `\n`, `\"`…
  }
  return false
}

/**
 * `longWordHoldsSecret` for long texts: a run of base64 characters past `LONG_RUN` is passed over by
 * a native search for its end. Kept apart so that the loop over ordinary run outputs (a few hundred
 * bytes, several a request) has no extra test per character: with it they cost 2.3% more
 * instructions a request.
 */
function longWordHoldsSecretSkipping(json: string, masker: Masker): boolean {
  let start = -1
  for (let i = 0; i <= json.length; i++) {
    const code = i < json.length ? json.charCodeAt(i) : 0
    if (isBase64Char(code)) {
      if (start < 0) start = i
      else if (i - start === LONG_RUN) {
        NOT_BASE64.lastIndex = i
        i = (NOT_BASE64.exec(json)?.index ?? json.length) - 1
      }
      continue
    }
    if (start >= 0) {
      let end = i
      while (end < json.length && end - i < 2 && json.charCodeAt(end) === 61) end++ // `=` padding
      if (end - start >= masker.minWord && decodedHoldsSecret(json.slice(start, end), masker)) return true
      start = -1
    }
    if (code === 92) i += json.charCodeAt(i + 1) === 117 ? 5 : 1 // an escape: `\uXXXX` or `\n`, `\"`…
  }
  return false
}

function isBase64Char(code: number): boolean {
  return (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || (code >= 48 && code <= 57) || code === 43 || code === 47 || code === 45 || code === 95
}

/** Whether there is any secret to mask at all (callers skip walking values when not). */
export function hasSecrets(secrets: Secrets): boolean {
  return maskerOf(secrets) !== null
}

function maskWith(text: string, masker: Masker): string {
  // Base64 words whose decoded text holds a secret (Basic `user:pass`, a token inside a larger value).
  let masked = text.replace(BASE64_WORD, (word) => (word.length >= masker.minWord && decodedHoldsSecret(word, masker) ? MASK : word))
  masked = masked.replace(masker.forms, MASK)
  return masked
}

/** Words at least this long are first looked through for the cores of the forms (`mayDecodeToForm`). */
const LONG_WORD = 1024

function decodedHoldsSecret(word: string, masker: Masker): boolean {
  if (word.length >= LONG_WORD && masker.cores && !mayDecodeToForm(word, masker.cores)) return false
  const bare = word.replace(/=+$/, '')
  if (bare.length % 4 === 1) return false
  const decoded = Buffer.from(bare, 'base64').toString('utf8')
  // Only words that decode to text: ordinary words decode to invalid UTF-8 or control bytes.
  // eslint-disable-next-line no-control-regex
  if (decoded.includes('\uFFFD') || /[\u0000-\u0008\u000E-\u001F]/.test(decoded)) return false
  masker.forms.lastIndex = 0
  const found = masker.forms.test(decoded)
  masker.forms.lastIndex = 0
  return found
}

/**
 * False only when `word` cannot decode to text holding a form. Below, the decoded text answers
 * true only when it has no U+FFFD, so its bytes were valid UTF-8 and the text is their exact,
 * well-formed reading. A well-formed form found in such text starts and ends on whole characters
 * (it neither starts with a low nor ends with a high surrogate), so the decoded bytes hold its UTF-8
 * bytes, at some offset k; the word then holds, at a 4-aligned place, the core of the form for
 * k mod 3, in the word's alphabet (words of one alphabet: Node decodes a mix of both, so a mixed
 * word is decoded). Forms with a lone surrogate, or too short for a core, leave `cores` null.
 */
function mayDecodeToForm(word: string, cores: Cores): boolean {
  const standard = word.includes('+') || word.includes('/')
  const urlSafe = word.includes('-') || word.includes('_')
  if (standard && urlSafe) return true
  for (const core of urlSafe ? cores.urlSafe : cores.standard) if (word.includes(core)) return true
  return false
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')
}
