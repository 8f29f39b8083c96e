// SPEC §19: Stripe's and Slack's timestamped signatures, checked by checkRunAuth with a fixed clock,
// and the Start settings that choose them. Signatures are made here with node:crypto exactly as the
// senders' documentation describes (Stripe: "Verify webhook signatures manually"; Slack: "Verifying
// requests from Slack", whose worked example is the first case below).
import { createHmac } from 'node:crypto'
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { checkRunAuth } from '../../src/http/auth.js'
import type { AuthSettings } from '../../src/model/project.js'
import { loadProject } from '../../src/project/load.js'
import { cleanupTempDirs, makeTempDir } from '../helpers.js'

afterAll(cleanupTempDirs)

const bytes = (text: string) => new TextEncoder().encode(text)
const hmacHex = (secret: string, text: string) => createHmac('sha256', secret).update(text, 'utf8').digest('hex')

const STRIPE_SECRET = 'whsec_test_5ecret'
const SLACK_SECRET = '8f742231b10e8888abcd99yyyzzz85a5'
const secrets = new Map([
  ['STRIPE', STRIPE_SECRET],
  ['SLACK', SLACK_SECRET],
  ['EMPTY', ''],
])
const stripe: AuthSettings = {
  type: 'hmac',
  scheme: 'stripe',
  secret: '${secrets.STRIPE}',
  header: 'Stripe-Signature',
  algorithm: 'sha256',
  prefix: '',
  encoding: 'hex',
  toleranceSeconds: 300,
}
const slack: AuthSettings = { ...stripe, scheme: 'slack', secret: '${secrets.SLACK}', header: 'X-Slack-Signature' }

/** Stripe: signed_payload = `${t}.${body}`, HMAC-SHA256 hex with the endpoint's secret; header `t=..,v1=..`. */
function stripeHeader(body: string, t: number, secret = STRIPE_SECRET): string {
  return `t=${t},v1=${hmacHex(secret, `${t}.${body}`)}`
}

// Slack's documented example: this secret, timestamp and body give this signature.
const SLACK_DOC = {
  timestamp: 1531420618,
  body: 'token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c',
  signature: 'v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503',
}

describe('Slack signatures (v0)', () => {
  const now = SLACK_DOC.timestamp * 1000
  const headers = (signature = SLACK_DOC.signature, timestamp = String(SLACK_DOC.timestamp)) =>
    new Headers({ 'x-slack-signature': signature, 'x-slack-request-timestamp': timestamp })

  it("accepts Slack's documented example, and computing it the documented way gives the same signature", () => {
    expect(`v0=${hmacHex(SLACK_SECRET, `v0:${SLACK_DOC.timestamp}:${SLACK_DOC.body}`)}`).toBe(SLACK_DOC.signature)
    const decision = checkRunAuth(slack, headers(), secrets, bytes(SLACK_DOC.body), now)
    expect(decision).toMatchObject({ ok: true, once: { signature: expect.stringMatching(/^[0-9a-f]{64}$/) } })
    // The record is needed until the timestamp is past the tolerance.
    expect(decision.ok && decision.once!.expiresAt).toBeGreaterThanOrEqual((SLACK_DOC.timestamp + 300) * 1000)
  })

  it.each([
    ['a changed body', headers(), `${SLACK_DOC.body}&x=1`, now],
    ['a changed timestamp', headers(SLACK_DOC.signature, String(SLACK_DOC.timestamp + 1)), SLACK_DOC.body, now],
    ['no timestamp header', new Headers({ 'x-slack-signature': SLACK_DOC.signature }), SLACK_DOC.body, now],
    ['a signature without v0=', headers(SLACK_DOC.signature.slice(3)), SLACK_DOC.body, now],
    ['a timestamp 301 s old', headers(), SLACK_DOC.body, now + 301_000],
    ['a timestamp 301 s ahead', headers(), SLACK_DOC.body, now - 301_000],
  ])('refuses %s', (_, given, body, at) => {
    expect(checkRunAuth(slack, given, secrets, bytes(body), at)).toMatchObject({ ok: false, challenge: 'Signature header="X-Slack-Signature"' })
  })

  it('accepts a timestamp exactly at the tolerance, either way', () => {
    expect(checkRunAuth(slack, headers(), secrets, bytes(SLACK_DOC.body), now + 300_000).ok).toBe(true)
    expect(checkRunAuth(slack, headers(), secrets, bytes(SLACK_DOC.body), now - 300_000).ok).toBe(true)
  })
})

describe('Stripe signatures (t=, v1=)', () => {
  const t = 1_767_225_600
  const now = t * 1000 + 5_000
  const body = '{"id":"evt_1","type":"payment_intent.succeeded"}'
  const check = (header: string, text = body, at = now) => checkRunAuth(stripe, new Headers({ 'stripe-signature': header }), secrets, bytes(text), at)

  it('accepts a signature made as documented, with or without a v0 entry', () => {
    expect(check(stripeHeader(body, t)).ok).toBe(true)
    expect(check(`${stripeHeader(body, t)},v0=${'6'.repeat(64)}`).ok).toBe(true)
  })

  it('accepts when any of several v1 signatures matches (a secret being rolled)', () => {
    const rolled = `t=${t},v1=${hmacHex('whsec_old', `${t}.${body}`)},v1=${hmacHex(STRIPE_SECRET, `${t}.${body}`)}`
    expect(check(rolled).ok).toBe(true)
  })

  it('gives the same use record however the valid signature is dressed (a replay cannot change it)', () => {
    const plain = check(stripeHeader(body, t))
    const signature = hmacHex(STRIPE_SECRET, `${t}.${body}`)
    const dressed = check(`v1=${'0'.repeat(64)}, t=${t} ,v1=${signature.toUpperCase()}`)
    expect(plain.ok && dressed.ok).toBe(true)
    expect(plain.ok && dressed.ok && plain.once!.signature === dressed.once!.signature).toBe(true)
  })

  it.each([
    ['another secret', () => check(stripeHeader(body, t, 'whsec_other'))],
    ['a changed body', () => check(stripeHeader(body, t), `${body} `)],
    ['a timestamp other than the signed one', () => check(stripeHeader(body, t).replace(`t=${t}`, `t=${t + 1}`))],
    ['two timestamps', () => check(`t=${t + 1},${stripeHeader(body, t)}`)],
    ['no timestamp', () => check(`v1=${hmacHex(STRIPE_SECRET, `${t}.${body}`)}`)],
    ['only a v0 signature', () => check(`t=${t},v0=${hmacHex(STRIPE_SECRET, `${t}.${body}`)}`)],
    ['an old timestamp', () => check(stripeHeader(body, t), body, (t + 301) * 1000)],
    ['a timestamp from the future', () => check(stripeHeader(body, t), body, (t - 301) * 1000)],
    ['the body signed without the timestamp (plain hmac)', () => check(`t=${t},v1=${hmacHex(STRIPE_SECRET, body)}`)],
  ])('refuses %s', (_, decide) => {
    expect(decide()).toMatchObject({ ok: false, challenge: 'Signature header="Stripe-Signature"' })
  })

  it('fails closed on an empty secret: even a signature made with the empty secret is refused', () => {
    const empty: AuthSettings = { ...stripe, secret: '${secrets.EMPTY}' }
    const header = stripeHeader(body, t, '')
    expect(checkRunAuth(empty, new Headers({ 'stripe-signature': header }), secrets, bytes(body), now).ok).toBe(false)
  })
})

describe('hmac scheme settings', () => {
  async function problemsOf(auth: string): Promise<string[]> {
    const dir = await makeTempDir('flowctl-hmac-settings-')
    await mkdir(join(dir, 'flows'))
    await writeFile(join(dir, 'flowctl.yaml'), 'projectId: p\nname: P\n')
    await writeFile(
      join(dir, 'flows', 'hook.yaml'),
      `name: Hook\nnodes:\n  - { id: start, type: start, name: Start, method: post, auth: ${auth}, next: done }\n  - { id: done, type: end, name: Done }\n`,
    )
    const project = await loadProject(dir, { env: {} })
    return project.problems.filter((p) => p.severity === 'error').map((p) => p.message)
  }

  it('takes scheme: stripe | slack with toleranceSeconds, and reads them into the Start', async () => {
    expect(await problemsOf('{ type: hmac, scheme: stripe, secret: s }')).toEqual([])
    expect(await problemsOf('{ type: hmac, scheme: slack, secret: s, toleranceSeconds: 60 }')).toEqual([])
  })

  it.each([
    ['{ type: hmac, scheme: stripe, secret: s, header: X-Sig }', /auth\.header cannot be set with scheme: stripe/],
    ['{ type: hmac, scheme: slack, secret: s, prefix: "v0=" }', /auth\.prefix cannot be set with scheme: slack/],
    ['{ type: hmac, secret: s }', /needs header .* or a scheme/],
    ['{ type: hmac, secret: s, header: X-Sig, toleranceSeconds: 60 }', /toleranceSeconds needs a scheme/],
    ['{ type: hmac, scheme: paypal, secret: s }', /scheme/],
    ['{ type: hmac, scheme: stripe, secret: s, toleranceSeconds: 0 }', /toleranceSeconds/],
  ])('%s is a load problem', async (auth, message) => {
    const problems = await problemsOf(auth)
    expect(problems.join('\n')).toMatch(message)
  })
})
