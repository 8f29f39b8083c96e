// Small flows written into temp copies of fixtures/example by the HTTP tests.

export const TEST_ENV = [
  'ORDERS_TOKEN=dev-orders-token-change-me',
  'API_USER=alice',
  'API_PASS=wonderland',
  'API_KEY=key-0123456789',
  'EMPTY_TOKEN=',
  'MASKED=super-secret-value',
  '',
].join('\n')

export const EXTRA_FLOWS: Record<string, string> = {
  'no-end.yaml': `name: No End
nodes:
  - { id: start, type: start, name: Start, method: post, inputs: { body: { type: object, properties: { reason: { type: string } } } }, next: mark }
  - { id: mark, type: set, name: Mark, values: { reason: "{{start.reason}}" } }
`,
  'basic.yaml': `name: Basic
nodes:
  - { id: start, type: start, name: Start, method: get, auth: { type: basic, username: "\${secrets.API_USER}", password: "\${secrets.API_PASS}" }, next: done }
  - { id: done, type: end, name: Done, body: { ok: true } }
`,
  'keyed.yaml': `name: Keyed
nodes:
  - { id: start, type: start, name: Start, method: get, auth: { type: apiKey, key: "\${secrets.API_KEY}" }, next: done }
  - { id: done, type: end, name: Done, body: { ok: true } }
`,
  'custom-key.yaml': `name: Custom Key
nodes:
  - { id: start, type: start, name: Start, method: get, auth: { type: apiKey, key: "\${secrets.API_KEY}", header: X-Shop-Key }, next: done }
  - { id: done, type: end, name: Done, body: { ok: true } }
`,
  'unresolved.yaml': `name: Unresolved
nodes:
  - { id: start, type: start, name: Start, method: get, auth: { type: bearer, token: "\${secrets.NOT_SET_ANYWHERE}" }, next: done }
  - { id: done, type: end, name: Done, body: { ok: true } }
`,
  'empty-token.yaml': `name: Empty Token
nodes:
  - { id: start, type: start, name: Start, method: get, auth: { type: bearer, token: "\${secrets.EMPTY_TOKEN}" }, next: done }
  - { id: done, type: end, name: Done, body: { ok: true } }
`,
  'echo.yaml': `name: Echo
nodes:
  - id: start
    type: start
    name: Start
    method: put
    inputs:
      path: { type: object, properties: { first: { type: string }, second: { type: string } } }
      query: { type: object, properties: { tag: { type: array, items: { type: string } } } }
      headers: { type: object, properties: { x-tenant: { type: string } } }
      body: { type: object, properties: { name: { type: string } } }
    next: done
  - id: done
    type: end
    name: Done
    status: 202
    headers: { x-flow: echo, content-length: "999" }
    body: { first: "{{start.first}}", second: "{{start.second}}", tag: "{{start.tag}}", tenant: "{{start.x-tenant}}", name: "{{start.name}}" }
`,
  'masked.yaml': `name: Masked
nodes:
  - { id: start, type: start, name: Start, method: get, next: keep }
  - { id: keep, type: set, name: Keep, values: { secret: "\${secrets.MASKED}", note: "value \${secrets.MASKED} here" }, next: done }
  - { id: done, type: end, name: Done, body: { ok: true } }
`,
  'hello.yaml': `name: "<script>alert(1)</script> Hello"
nodes:
  - { id: start, type: start, name: Start, method: get, next: done }
  - { id: done, type: end, name: Done, body: { hello: world } }
`,
}
