// SPEC §19 through the real `flowctl serve`: Stripe and Slack signatures with timestamps, each
// accepted once (a replay within the tolerance answers 401, like every auth failure, and is not a
// run), on SQLite and across two instances on PostgreSQL. GitHub's X-Hub-Signature-256 still works.
// Signatures are made here with node:crypto exactly as Stripe's and Slack's documentation describe.
import { createHmac } from 'node:crypto'
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cleanupTempDirs, makeTempDir, startServe, startServes, type StartedServe } from '../helpers.js'
import { createTestDatabase, PG_URL, pgSkipNotice } from '../pg-helpers.js'

const STRIPE_SECRET = 'whsec_e2e_Zx81'
const SLACK_SECRET = 'slack-e2e-signing-secret'
const GITHUB_SECRET = 'github e2e secret'

const hmacHex = (secret: string, text: string) => createHmac('sha256', secret).update(text, 'utf8').digest('hex')
const unixNow = () => Math.floor(Date.now() / 1000)

/** Stripe: `Stripe-Signature: t=<unix>,v1=<HMAC-SHA256 hex of "<t>.<raw body>">`. */
function stripeHeaders(body: string, t = unixNow(), secret = STRIPE_SECRET): Record<string, string> {
  return { 'content-type': 'application/json', 'stripe-signature': `t=${t},v1=${hmacHex(secret, `${t}.${body}`)}` }
}

/** Slack: `X-Slack-Signature: v0=<HMAC-SHA256 hex of "v0:<t>:<raw body>">` with `X-Slack-Request-Timestamp: <t>`. */
function slackHeaders(body: string, t = unixNow()): Record<string, string> {
  return {
    'content-type': 'application/x-www-form-urlencoded',
    'x-slack-request-timestamp': String(t),
    'x-slack-signature': `v0=${hmacHex(SLACK_SECRET, `v0:${t}:${body}`)}`,
  }
}

async function writeProject(dir: string): Promise<void> {
  await mkdir(join(dir, 'flows'))
  await writeFile(join(dir, 'flowctl.yaml'), 'projectId: hooks\nname: Hooks\nlimits: { runsPerMinutePerIp: 0 }\n')
  await writeFile(join(dir, '.env'), `STRIPE=${STRIPE_SECRET}\nSLACK=${SLACK_SECRET}\nGITHUB="${GITHUB_SECRET}"\n`)
  const flow = (name: string, start: string) =>
    `name: ${name}\nnodes:\n  - { id: start, type: start, name: Start, method: post, ${start}, next: done }\n  - { id: done, type: end, name: Done, body: { ok: true, got: "{{ start.id }}{{ start.text }}" } }\n`
  await writeFile(
    join(dir, 'flows', 'stripe.yaml'),
    flow('Stripe', 'auth: { type: hmac, scheme: stripe, secret: "${secrets.STRIPE}" }, inputs: { body: { type: object } }'),
  )
  await writeFile(
    join(dir, 'flows', 'slack.yaml'),
    flow('Slack', 'accept: [form], auth: { type: hmac, scheme: slack, secret: "${secrets.SLACK}", toleranceSeconds: 60 }, inputs: { body: { type: object } }'),
  )
  await writeFile(
    join(dir, 'flows', 'github.yaml'),
    flow('Github', 'auth: { type: hmac, header: X-Hub-Signature-256, prefix: "sha256=", secret: "${secrets.GITHUB}" }, inputs: { body: { type: object } }'),
  )
}

function post(serve: StartedServe, slug: string, body: string, headers: Record<string, string>) {
  return fetch(`${serve.base}/api/run/hooks/${slug}`, { method: 'POST', headers, body }).then(async (response) => ({
    status: response.status,
    challenge: response.headers.get('www-authenticate'),
    body: (await response.json()) as Record<string, unknown>,
  }))
}

async function runCount(serve: StartedServe, slug: string): Promise<number> {
  const response = await fetch(`${serve.base}/api/runs/hooks?flow=${slug}&limit=100`)
  const body = (await response.json()) as unknown
  const runs = Array.isArray(body) ? body : ((body as { runs?: unknown[] }).runs ?? [])
  return runs.length
}

const REFUSED = { status: 401, body: { ok: false, errors: ['invalid signature'] } }
const MISSING = { status: 401, body: { ok: false, errors: ['missing credential'] } }

afterAll(cleanupTempDirs)

describe('signed webhooks on the embedded store', () => {
  let serve: StartedServe
  beforeAll(async () => {
    const dir = await makeTempDir('flowctl-signed-')
    await writeProject(dir)
    serve = await startServe(['--quiet', '--no-watch'], { cwd: dir })
  }, 60_000)
  afterAll(async () => {
    serve?.child.kill('SIGTERM')
    await serve?.child.catch(() => undefined)
  })

  it('Stripe: a signed event runs once; the same request again is a 401 and no run', async () => {
    const body = JSON.stringify({ id: 'evt_1', type: 'payment_intent.succeeded' })
    const headers = stripeHeaders(body)
    expect(await post(serve, 'stripe', body, headers)).toMatchObject({ status: 200, body: { ok: true, got: 'evt_1' } })
    const replay = await post(serve, 'stripe', body, headers)
    expect(replay).toMatchObject(REFUSED)
    expect(replay.challenge).toBe('Signature header="Stripe-Signature"')
    // The header dressed differently (an extra v1, another order) carries the same signature: still a replay.
    const [t, v1] = headers['stripe-signature']!.split(',')
    expect(await post(serve, 'stripe', body, { ...headers, 'stripe-signature': `${v1},v1=${'0'.repeat(64)},${t}` })).toMatchObject(REFUSED)
    expect(await runCount(serve, 'stripe')).toBe(1)
    // Stripe's own retry is signed anew (a new timestamp): accepted.
    expect(await post(serve, 'stripe', body, stripeHeaders(body, unixNow() + 1))).toMatchObject({ status: 200 })
    expect(await runCount(serve, 'stripe')).toBe(2)
  })

  it('Stripe: old, future, wrongly signed or unsigned events are refused', async () => {
    const body = JSON.stringify({ id: 'evt_2' })
    expect(await post(serve, 'stripe', body, stripeHeaders(body, unixNow() - 301))).toMatchObject(REFUSED)
    expect(await post(serve, 'stripe', body, stripeHeaders(body, unixNow() + 301))).toMatchObject(REFUSED)
    expect(await post(serve, 'stripe', body, stripeHeaders(body, unixNow(), 'whsec_wrong'))).toMatchObject(REFUSED)
    expect(
      await post(serve, 'stripe', body, { ...stripeHeaders(body), 'stripe-signature': `t=${unixNow()},v1=${hmacHex(STRIPE_SECRET, body)}` }),
    ).toMatchObject(REFUSED)
    expect(await post(serve, 'stripe', `${body} `, stripeHeaders(body))).toMatchObject(REFUSED)
    expect(await post(serve, 'stripe', body, { 'content-type': 'application/json' })).toMatchObject(MISSING)
  })

  it('Slack: a signed slash command runs once; a replay is a 401; toleranceSeconds: 60 is honoured', async () => {
    const body = 'command=%2Fdeploy&text=prod&user_id=U2CERLKJA'
    const headers = slackHeaders(body)
    expect(await post(serve, 'slack', body, headers)).toMatchObject({ status: 200, body: { ok: true, got: 'prod' } })
    const replay = await post(serve, 'slack', body, headers)
    expect(replay).toMatchObject(REFUSED)
    expect(replay.challenge).toBe('Signature header="X-Slack-Signature"')
    expect(await post(serve, 'slack', body, slackHeaders(body, unixNow() - 90))).toMatchObject(REFUSED)
    expect(await runCount(serve, 'slack')).toBe(1)
  })

  it("GitHub's X-Hub-Signature-256 (no timestamp) still works", async () => {
    const body = JSON.stringify({ id: 'push_1' })
    const headers = { 'content-type': 'application/json', 'x-hub-signature-256': `sha256=${hmacHex(GITHUB_SECRET, body)}` }
    expect(await post(serve, 'github', body, headers)).toMatchObject({ status: 200, body: { ok: true, got: 'push_1' } })
    expect(await post(serve, 'github', body, { ...headers, 'x-hub-signature-256': `sha256=${'0'.repeat(64)}` })).toMatchObject(REFUSED)
  })
})

pgSkipNotice('signed webhooks across PostgreSQL instances')
// Skipped without FLOWCTL_TEST_DATABASE_URL (notice printed above).
describe.skipIf(!PG_URL)('signed webhooks across two instances on PostgreSQL', () => {
  let serves: StartedServe[] = []
  let db: { url: string; drop: () => Promise<void> }
  beforeAll(async () => {
    db = await createTestDatabase()
    const dir = await makeTempDir('flowctl-signed-pg-')
    await writeProject(dir)
    serves = await startServes(2, ['--quiet', '--no-watch'], { cwd: dir, env: { FLOWCTL_DATABASE_URL: db.url } })
  }, 60_000)
  afterAll(async () => {
    for (const serve of serves) serve.child.kill('SIGTERM')
    await Promise.all(serves.map((serve) => serve.child.catch(() => undefined)))
    await db?.drop()
  })

  it('a Stripe event accepted by one instance is a replay on the other', async () => {
    const [a, b] = serves as [StartedServe, StartedServe]
    const body = JSON.stringify({ id: 'evt_pg' })
    const headers = stripeHeaders(body)
    expect(await post(a, 'stripe', body, headers)).toMatchObject({ status: 200 })
    expect(await post(b, 'stripe', body, headers)).toMatchObject(REFUSED)
    expect(await post(a, 'stripe', body, headers)).toMatchObject(REFUSED)
    expect(await runCount(b, 'stripe')).toBe(1)
  })

  it('concurrent copies of one Slack request: exactly one runs', async () => {
    const body = 'text=race'
    const headers = slackHeaders(body)
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => post(serves[i % 2]!, 'slack', body, headers)))
    expect(answers.map((a) => a.status).sort()).toEqual([200, 401, 401, 401, 401, 401, 401, 401])
  })
})
