// What every route handler shares: the workspace, the options of createApp and the counters.
import type { RejectionCounter } from './rejections.js'
import type { RateLimiter } from './rate-limit.js'
import type { UsersCache } from './sign-in.js'
import type { Workspace } from '../serve/workspace.js'
import type { ClientOptions } from './client.js'

export interface AppOptions extends ClientOptions {
  /** No request log. */
  quiet: boolean
  /** The users file of the workspace (signed-in readers of /api/openapi, /api/runs, /status). */
  usersFile: string
  /** The served projects' own users files (`<project>/.flowctl/users.yaml`), read besides usersFile. */
  projectUsersFiles?: string[]
  /** Where request log lines and unexpected errors go (default: standard error). */
  log?: (line: string) => void
  /** The tick secret (env CRON_SECRET); unset = every tick request is rejected. */
  cronSecret?: string
  /** Aborted when the server shuts down: runs still going are cancelled. */
  signal?: AbortSignal
  /** Told when an async run was queued (the serve process's AsyncRunner looks for work at once). */
  asyncQueued?: (projectId: string) => void
  /** Told when a parked run got its callback (the serve process's WaitRunner resumes it at once). */
  runResumed?: (projectId: string) => void
}

export interface AppContext {
  workspace: Workspace
  options: AppOptions
  rateLimiter: RateLimiter
  /** Failed CRON_SECRET guesses per client IP (the tick answers 429 past the limit). */
  tickFailures: RateLimiter
  rejections: RejectionCounter
  users: UsersCache
  /** Logs a line unless quiet (unexpected errors are logged even when quiet). */
  log: (line: string, always?: boolean) => void
}
