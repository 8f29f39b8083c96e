// Step 4 of the Run API: `limits.runsPerMinutePerIp` (429 with `Retry-After`), per instance or,
// with `rateLimitScope: cluster`, one budget in the store for every instance (SPEC §12; 503 when
// the store cannot be reached). `/api/result` counts in the same budget. Connection limits are the
// listener's (src/serve/listen.ts).
import type { H3Event } from 'h3'
import { httpError } from '../../errors.js'
import type { Project } from '../../model/project.js'
import { clientIp } from '../client.js'
import { clusterRateDecision } from '../cluster-rate-limit.js'
import type { AppContext } from '../context.js'
import type { HeaderPairs } from '../respond.js'

/** `headers`: what a refusal carries besides `Retry-After` (the result route's CORS). */
export async function checkRate(context: AppContext, event: H3Event, project: Project, headers?: HeaderPairs): Promise<void> {
  const projectId = project.settings.projectId
  const ip = clientIp(event, context.options)
  const perMinute = project.settings.limits.runsPerMinutePerIp
  const rate =
    project.settings.rateLimitScope === 'cluster'
      ? await clusterRateDecision(await context.workspace.storeFor(projectId), projectId, ip, perMinute)
      : context.rateLimiter.hit(projectId, ip, perMinute)
  if (!rate) throw httpError('STORE_UNAVAILABLE', undefined, { headers })
  if (!rate.allowed) throw httpError('RATE_LIMITED', undefined, { headers: { ...headers, 'retry-after': String(rate.retryAfterSeconds) } })
}
