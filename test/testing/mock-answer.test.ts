// A mock's answer (src/testing/run-case.ts) is a plain object, not a Response (which would load
// Node's fetch): what an http node reads of it must be what it reads of the Response the mock
// describes.
import { describe, expect, it } from 'vitest'
import { mockResponse } from '../../src/testing/run-case.js'

type Mock = Parameters<typeof mockResponse>[0]

/** What the old code built: the real thing. */
function realResponse(mock: Mock): Response {
  const headers = new Headers(mock.headers)
  let text: string | null = null
  if (mock.body !== undefined && ![204, 205, 304].includes(mock.status)) {
    text = typeof mock.body === 'string' ? mock.body : JSON.stringify(mock.body)
    if (!headers.has('content-type')) headers.set('content-type', typeof mock.body === 'string' ? 'text/plain; charset=utf-8' : 'application/json')
  }
  return new Response(text, { status: mock.status, headers })
}

/** Everything src/nodes/http.ts reads of an answer. */
async function asNodeSees(
  answer: Pick<Response, 'status' | 'statusText' | 'text'> & { headers: { get(name: string): string | null } & Iterable<[string, string]> },
) {
  return {
    status: answer.status,
    statusText: answer.statusText,
    text: await answer.text(),
    contentType: answer.headers.get('content-type'),
    mixedCaseGet: answer.headers.get('X-Request-Id'),
    headers: Object.fromEntries(answer.headers),
  }
}

describe('mock answers', () => {
  it.each<[string, Mock]>([
    ['JSON body', { status: 200, headers: {}, body: { ok: true, items: [1, 2] } }],
    ['text body', { status: 201, headers: {}, body: 'created' }],
    ['no body', { status: 200, headers: {}, body: undefined }],
    ['204 drops the body', { status: 204, headers: {}, body: { ignored: true } }],
    ['own content-type kept', { status: 200, headers: { 'Content-Type': 'application/problem+json' }, body: { title: 'x' } }],
    ['names in any case, values trimmed, sorted', { status: 503, headers: { 'X-Request-Id': ' abc ', Zeta: 'z', alpha: 'a\t' }, body: 'busy' }],
    ['one name twice in different case is joined', { status: 200, headers: { 'x-a': '1', 'X-A': '2' }, body: undefined }],
  ])('%s: the http node reads what it reads of the Response', async (_name, mock) => {
    expect(await asNodeSees(mockResponse(mock))).toEqual(await asNodeSees(realResponse(mock)))
  })

  it.each([
    ['an invalid header name', { 'bad name': 'x' }],
    ['a header value with a line break', { 'x-a': 'one\ntwo' }],
  ])('%s throws a TypeError, as new Headers does', (_name, headers) => {
    const mock: Mock = { status: 200, headers, body: undefined }
    expect(() => realResponse(mock)).toThrow(TypeError)
    expect(() => mockResponse(mock)).toThrow(TypeError)
  })
})
