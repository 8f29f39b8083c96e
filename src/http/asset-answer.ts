// The answer of a built file the server holds in memory (the editor's bundle, Swagger UI's files).
// The bytes go out as they are: h3 hands a Uint8Array to Node's socket, where a web Response would
// copy it. Each carries a validator (ETag from its size and modification time), so a browser that
// has the file asks whether it changed and gets a 304 without a body (h3's handleCacheHeaders).
import type { Stats } from 'node:fs'
import { handleCacheHeaders, HTTPResponse, type H3Event } from 'h3'

export interface HeldAsset {
  content: Buffer
  etag: string
}

/** A weak validator (not a hash of the bytes): the file's size and modification time, in microseconds. */
export function statTag({ size, mtimeMs }: Pick<Stats, 'size' | 'mtimeMs'>): string {
  return `W/"${size.toString(16)}-${Math.round(mtimeMs * 1000).toString(16)}"`
}

/**
 * Status, headers and body of `asset`; a 304 with no body when the request's `If-None-Match` names
 * its tag. `cacheControls` are the Cache-Control directives (`public` is added unless given).
 */
export function answerAsset(event: H3Event, asset: HeldAsset, type: string, cacheControls: string[]): Buffer | HTTPResponse {
  event.res.headers.set('content-type', type)
  event.res.headers.set('x-content-type-options', 'nosniff')
  if (handleCacheHeaders(event, { etag: asset.etag, cacheControls })) return new HTTPResponse(null, { status: 304 })
  return asset.content
}
