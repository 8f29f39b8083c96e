// Signing in on the pages (SPEC §14 "others: a signed-in viewer reads"): a browser cannot add an
// Authorization header to a page it opens, so `/sign-in` takes a user token once and keeps it in
// an HttpOnly, SameSite=Strict cookie that the pages, /api/runs and /api/events accept as the token.
// /api/openapi keeps §5.2's rule (the header only). `POST /sign-out` forgets the cookie.
import type { H3Event } from 'h3'
import { ERROR_CATALOG, httpError } from '../../errors.js'
import { readRequestText } from '../body.js'
import { isCrossSite } from '../access.js'
import type { AppContext } from '../context.js'
import { html } from '../html.js'
import { errorPage } from '../pages/error-page.js'
import { pageResponse } from '../pages/layout.js'
import { TOKEN_COOKIE } from '../sign-in.js'

const MAX_FORM_BYTES = 4096

function signInPage(status: number, note = ''): Response {
  return pageResponse(status, {
    title: 'Sign in',
    body: html`<h1>Sign in</h1><section>
<p>Paste your user token (printed once by <code>flowctl users add NAME --grant PROJECT_ID=ROLE</code>). It is kept in a cookie of this browser only, until you sign out.</p>
${note ? html`<p class="bad">${note}</p>` : ''}
<form class="run-form" method="post" action="/sign-in"><label for="token">User token</label>
<input type="text" id="token" name="token" autocomplete="off" spellcheck="false" required>
<p><button type="submit">Sign in</button></p></form>
<p class="muted">On the server's own machine (localhost) no sign-in is needed.</p></section>`,
  })
}

export function signInPageHandler() {
  return (): Response => signInPage(200)
}

export function signInHandler(context: AppContext) {
  return async (event: H3Event): Promise<Response> => {
    if (isCrossSite(event)) return errorPage(httpError('FORBIDDEN', ["Sign in from this server's own page."]))
    const text = await readRequestText(event, MAX_FORM_BYTES)
    const token = text === null ? '' : (new URLSearchParams(text).get('token') ?? '').trim()
    const user = token ? await context.users.signIn(new Headers({ authorization: `Bearer ${token}` })) : null
    if (!user) {
      // The sign-in form again, with the status of the catalog's refusal.
      const status = ERROR_CATALOG.AUTH_REQUIRED.httpStatus
      context.rejections.count(null, status)
      return signInPage(status, 'That token belongs to no user of this server.')
    }
    const secure = event.url.protocol === 'https:' ? '; Secure' : ''
    return new Response(null, {
      status: 303,
      headers: { location: '/', 'set-cookie': `${TOKEN_COOKIE}=${encodeURIComponent(token)}; Path=/; HttpOnly; SameSite=Strict${secure}` },
    })
  }
}

export function signOutHandler() {
  return (): Response =>
    new Response(null, { status: 303, headers: { location: '/', 'set-cookie': `${TOKEN_COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0` } })
}
