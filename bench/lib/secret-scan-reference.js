// The secret scan of JSON text as it was before the native scan and the base64 pre-check
// (src/language/secret-masking.ts): the baseline of bench/secret-scan.js. `formsOf` is unchanged.

/** The masker of a secrets map, built as `maskerOf` builds it. */
export function referenceMasker(secrets, formsOf) {
  const values = [...new Set(secrets.values())].filter((value) => value.length > 0)
  if (values.length === 0) return null
  const forms = new Set()
  for (const value of values) for (const form of formsOf(value)) forms.add(form)
  const sorted = [...forms].sort((a, b) => b.length - a.length)
  const shortest = Math.min(...values.map((v) => Buffer.byteLength(v)))
  const escape = (text) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')
  return { forms: new RegExp(sorted.map(escape).join('|'), 'g'), formList: sorted, minWord: Math.max(2, Math.ceil((shortest * 4) / 3)) }
}

export function referenceJsonHoldsSecret(json, masker) {
  if (!masker) return false
  for (const form of masker.formList) if (json.includes(form)) return true
  let start = -1
  for (let i = 0; i <= json.length; i++) {
    const code = i < json.length ? json.charCodeAt(i) : 0
    if (isBase64Char(code)) {
      if (start < 0) start = i
      continue
    }
    if (start >= 0) {
      let end = i
      while (end < json.length && end - i < 2 && json.charCodeAt(end) === 61) end++
      if (end - start >= masker.minWord && decodedHoldsSecret(json.slice(start, end), masker)) return true
      start = -1
    }
    if (code === 92) i += json.charCodeAt(i + 1) === 117 ? 5 : 1
  }
  return false
}

function isBase64Char(code) {
  return (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || (code >= 48 && code <= 57) || code === 43 || code === 47 || code === 45 || code === 95
}

function decodedHoldsSecret(word, masker) {
  const bare = word.replace(/=+$/, '')
  if (bare.length % 4 === 1) return false
  const decoded = Buffer.from(bare, 'base64').toString('utf8')
  // eslint-disable-next-line no-control-regex
  if (decoded.includes('\uFFFD') || /[\u0000-\u0008\u000E-\u001F]/.test(decoded)) return false
  masker.forms.lastIndex = 0
  const found = masker.forms.test(decoded)
  masker.forms.lastIndex = 0
  return found
}
