// Step 4 of the Run API: `limits.runsPerMinutePerIp` (429 with `Retry-After`), per instance or,
// with `rateLimitScope: cluster`, one budget in the store for every instance (SPEC §12; 503 when
// the store cannot be reached). `/api/result` counts in the same budget. Connection limits are the
// listener's (src/serve/listen.ts).
import type { H3Event } from 'h3'
import { httpError } from '../../errors.js'
import type { Project } from '../../model/project.js'
import { clientIp } from '../client.js'
import { clusterRateDecision } from '../cluster-rate-limit.js'
import type { RateDecision } from '../rate-limit.js'
import type { AppContext } from '../context.js'
import type { HeaderPairs } from '../respond.js'

/**
 * Undefined when decided at once (the instance limiter, the common case: no promise is made); a
 * promise for the cluster's budget. `headers`: what a refusal carries besides `Retry-After` (the
 * result route's CORS).
 */
export function checkRate(context: AppContext, event: H3Event, project: Project, headers?: HeaderPairs): Promise<void> | undefined {
  const projectId = project.settings.projectId
  const ip = clientIp(event, context.options)
  const perMinute = project.settings.limits.runsPerMinutePerIp
  if (project.settings.rateLimitScope === 'cluster') return checkClusterRate(context, projectId, ip, perMinute, headers)
  admit(context.rateLimiter.hit(projectId, ip, perMinute), headers)
  return undefined
}

/** `cluster`: one budget for every instance on the store (SPEC §12); null: the store is unreachable. */
async function checkClusterRate(context: AppContext, projectId: string, ip: string, perMinute: number, headers?: HeaderPairs): Promise<void> {
  admit(await clusterRateDecision(await context.workspace.storeFor(projectId), projectId, ip, perMinute), headers)
}

function admit(rate: RateDecision | null, headers: HeaderPairs | undefined): void {
  if (!rate) throw httpError('STORE_UNAVAILABLE', undefined, { headers })
  if (!rate.allowed) throw httpError('RATE_LIMITED', undefined, { headers: { ...headers, 'retry-after': String(rate.retryAfterSeconds) } })
}
