// Security schemes of a document: one per distinct kind of Start auth, with deterministic names.
import type { AuthSettings, HmacScheme } from '../model/project.js'
import { DEFAULT_API_KEY_HEADER } from '../nodes/start/settings.js'
import type { SecurityScheme } from './types.js'

const SCHEME_DESCRIPTIONS: Record<HmacScheme, string> = {
  stripe: 'Stripe\'s signature: t=<unix time>,v1=<HMAC-SHA256 hex of "<t>.<raw body>">; each signature is accepted once.',
  slack: 'Slack\'s signature: v0=<HMAC-SHA256 hex of "v0:<t>:<raw body>">, with the time in X-Slack-Request-Timestamp; each signature is accepted once.',
}

/** Collects the schemes operations use; names stay the same whichever order flows come in. */
export class SecuritySchemes {
  private readonly schemes = new Map<string, SecurityScheme>()

  /** The scheme name for a Start's auth, registering the scheme on first use. */
  nameFor(auth: AuthSettings): string {
    if (auth.type === 'bearer') return this.register('bearerAuth', { type: 'http', scheme: 'bearer' })
    if (auth.type === 'basic') return this.register('basicAuth', { type: 'http', scheme: 'basic' })
    if (auth.type === 'hmac') {
      // 3.0.3 has no signature scheme: an apiKey header, with how to compute it in the description.
      const prefix = auth.prefix ? `, prefixed with "${auth.prefix}"` : ''
      const description = auth.scheme
        ? SCHEME_DESCRIPTIONS[auth.scheme]
        : `HMAC-${auth.algorithm.toUpperCase()} of the raw request body with the shared secret, ${auth.encoding}-encoded${prefix}.`
      return this.register(`hmacAuth_${auth.header.replace(/[^A-Za-z0-9._-]/g, '_')}`, { type: 'apiKey', in: 'header', name: auth.header, description })
    }
    const { header } = auth
    if (header.toLowerCase() === DEFAULT_API_KEY_HEADER.toLowerCase()) {
      return this.register('apiKeyAuth', { type: 'apiKey', in: 'header', name: DEFAULT_API_KEY_HEADER })
    }
    // Component names allow [A-Za-z0-9._-]; header names may hold a few other characters.
    return this.register(`apiKeyAuth_${header.replace(/[^A-Za-z0-9._-]/g, '_')}`, { type: 'apiKey', in: 'header', name: header })
  }

  /** The schemes by name, sorted; undefined when no operation has auth. */
  toComponents(): Record<string, SecurityScheme> | undefined {
    if (this.schemes.size === 0) return undefined
    const names = [...this.schemes.keys()].sort()
    return Object.fromEntries(names.map((name) => [name, this.schemes.get(name)!]))
  }

  private register(base: string, scheme: SecurityScheme): string {
    const same = (other: SecurityScheme) =>
      other.type === 'apiKey' && scheme.type === 'apiKey'
        ? other.name.toLowerCase() === scheme.name.toLowerCase() && other.description === scheme.description
        : other.type === scheme.type
    for (let n = 1; ; n++) {
      const name = n === 1 ? base : `${base}_${n}`
      const existing = this.schemes.get(name)
      if (!existing) {
        this.schemes.set(name, scheme)
        return name
      }
      if (same(existing)) return name
    }
  }
}
