// Which schedules are due at a minute, at a cost that grows with the schedules due rather than the
// schedules that exist.
//
// Schedules with the same cron and timezone form one group (10,000 schedules rarely have 10,000
// distinct crons, and computing a next run costs far more than a Map lookup). Every group sits in a
// bucket keyed by its next run (epoch ms of a minute) at or after the index's cursor. A tick at
// minute m >= cursor first re-buckets the groups of the skipped buckets [cursor, m) (ticks that never
// came), then answers bucket m; the cursor becomes m. Asking for m again is free, so concurrent ticks
// of one minute cost nothing extra; moving on re-buckets only the groups that were due. Two cases
// recompute every group (O(groups), like building the index): a minute before the cursor
// (`flowctl tick --at` in the past) and a jump of more than a day (walking that many empty buckets
// would cost more than recomputing).
//
// Exactness: a group is in bucket m iff m is its first run at or after the cursor by `nextCronRun`,
// which agrees minute for minute with `cronMatches` (see cron.ts); runs are chained from the cursor,
// so no minute between the cursor and m is skipped.
import type { CatchUp, Flow, Project } from '../model/project.js'
import { formatInZone, nextCronRun } from '../language/cron.js'
import { compareText } from '../internal/compare.js'

const MINUTE_MS = 60_000
const MAX_WALK_MINUTES = 24 * 60

export interface DueSchedule {
  project: Project
  flow: Flow
}

interface Entry extends DueSchedule {
  key: string
  group: Group
}

interface Group {
  key: string
  cron: string
  timezone: string
  members: Set<Entry>
  /** Epoch ms of the first run at or after the cursor; null when there is none. */
  nextRun: number | null
}

export class DueIndex {
  private readonly entries = new Map<string, Entry>()
  private readonly groups = new Map<string, Group>()
  private readonly keysByProject = new Map<string, Set<string>>()
  private readonly buckets = new Map<number, Set<Group>>()
  /** Minute (epoch ms) the next runs are computed from; null until the first `due`. */
  private cursor: number | null = null

  static fromProjects(projects: Iterable<Project>): DueIndex {
    const index = new DueIndex()
    for (const project of projects) index.updateProject(project)
    return index
  }

  /** Number of enabled schedules held. */
  get size(): number {
    return this.entries.size
  }

  /** Replaces every schedule of this project (used when it is reloaded). */
  updateProject(project: Project): void {
    const projectId = project.settings.projectId
    this.removeProject(projectId)
    const keys = new Set<string>()
    for (const flow of project.flows.values()) {
      const schedule = flow.schedule
      if (!schedule || !schedule.enabled) continue
      const key = `${projectId}\u0000${flow.slug}`
      keys.add(key)
      const group = this.groupFor(schedule.cron, schedule.timezone)
      const entry: Entry = { key, project, flow, group }
      group.members.add(entry)
      this.entries.set(key, entry)
    }
    this.keysByProject.set(projectId, keys)
  }

  removeProject(projectId: string): void {
    for (const key of this.keysByProject.get(projectId) ?? []) {
      const entry = this.entries.get(key)
      if (!entry) continue
      this.entries.delete(key)
      entry.group.members.delete(entry)
      if (entry.group.members.size === 0) {
        this.unbucket(entry.group)
        this.groups.delete(entry.group.key)
      }
    }
    this.keysByProject.delete(projectId)
  }

  /** The enabled schedules whose cron matches the minute of `at` in their timezone. */
  due(at: Date): DueSchedule[] {
    const minute = Math.floor(at.getTime() / MINUTE_MS) * MINUTE_MS
    if (this.cursor === null || minute < this.cursor || minute - this.cursor > MAX_WALK_MINUTES * MINUTE_MS) {
      this.recomputeAll(minute)
    } else {
      for (let skipped = this.cursor; skipped < minute; skipped += MINUTE_MS) {
        const bucket = this.buckets.get(skipped)
        if (!bucket) continue
        this.buckets.delete(skipped)
        for (const group of bucket) this.place(group, minute)
      }
      this.cursor = minute
    }
    const bucket = this.buckets.get(minute)
    if (!bucket) return []
    const due: DueSchedule[] = []
    for (const group of bucket) for (const { project, flow } of group.members) due.push({ project, flow })
    return due.sort((a, b) => compareText(a.project.settings.projectId, b.project.settings.projectId) || compareText(a.flow.slug, b.flow.slug))
  }

  private groupFor(cron: string, timezone: string): Group {
    const key = `${cron}\u0000${timezone}`
    let group = this.groups.get(key)
    if (!group) {
      group = { key, cron, timezone, members: new Set(), nextRun: null }
      this.groups.set(key, group)
      if (this.cursor !== null) this.place(group, this.cursor)
    }
    return group
  }

  private recomputeAll(minute: number): void {
    this.buckets.clear()
    this.cursor = minute
    for (const group of this.groups.values()) this.place(group, minute)
  }

  /** Buckets the group at its first run at or after `from` (it must not be in a bucket). */
  private place(group: Group, from: number): void {
    const next = nextCronRun(group.cron, group.timezone, new Date(from - MINUTE_MS))
    group.nextRun = next === null ? null : next.getTime()
    if (group.nextRun === null) return
    let bucket = this.buckets.get(group.nextRun)
    if (!bucket) {
      bucket = new Set()
      this.buckets.set(group.nextRun, bucket)
    }
    bucket.add(group)
  }

  private unbucket(group: Group): void {
    if (group.nextRun === null) return
    const bucket = this.buckets.get(group.nextRun)
    bucket?.delete(group)
    if (bucket && bucket.size === 0) this.buckets.delete(group.nextRun)
    group.nextRun = null
  }
}

export interface ScheduleListing {
  flow: string
  cron: string
  timezone: string
  enabled: boolean
  /** ISO time of the next run after `now`'s minute; null when disabled or never. */
  nextRun: string | null
  /** The same run as wall-clock time in the schedule's timezone (`2026-11-24 03:00 CET`). */
  nextRunLocal: string | null
  catchUp: CatchUp
  catchUpMinutes: number
}

/** The project's schedules for /status, by flow slug. */
export function listSchedules(project: Project, now: Date): ScheduleListing[] {
  const listing: ScheduleListing[] = []
  for (const flow of project.flows.values()) {
    const schedule = flow.schedule
    if (!schedule) continue
    const next = schedule.enabled ? nextCronRun(schedule.cron, schedule.timezone, now) : null
    listing.push({
      flow: flow.slug,
      cron: schedule.cron,
      timezone: schedule.timezone,
      enabled: schedule.enabled,
      nextRun: next ? next.toISOString() : null,
      nextRunLocal: next ? formatInZone(next, schedule.timezone) : null,
      catchUp: schedule.catchUp,
      catchUpMinutes: schedule.catchUpMinutes,
    })
  }
  return listing.sort((a, b) => compareText(a.flow, b.flow))
}
