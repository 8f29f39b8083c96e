// PostgreSQL cannot hold a NUL character in text, nor the `\u0000` escape or a lone surrogate's
// escape in jsonb. Run inputs holding them are refused at validation (src/flow/unstorable-text.ts);
// text made elsewhere (failure reasons, upstream answers) is stored escaped, so no record is lost.

/** The text with NUL characters written as `\u0000`, for columns that cannot hold them (failure reasons). */
export function escapeNul(text: string): string {
  return text.includes('\u0000') ? text.replaceAll('\u0000', '\\u0000') : text
}

/**
 * JSON text (from JSON.stringify) that PostgreSQL's jsonb accepts: the `\u0000` escape and escapes of
 * lone surrogates (the only ones JSON.stringify writes) become escaped backslashes, so the value is
 * kept as visible text (`\u0000`) instead of the write failing.
 */
export function jsonbSafe(json: string): string {
  if (!json.includes('\\u')) return json
  return json.replace(/(?<!\\)((?:\\\\)*)\\u(0000|d[89a-f][0-9a-f]{2})/gi, '$1\\\\u$2')
}
