// The Workspace: snapshots swapped atomically on reload, the due index following reloads, and a
// failed store retried at most once per retry interval.
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { Workspace } from '../../src/serve/workspace.js'
import { loadProject, reloadProject } from '../../src/project/load.js'
import { openSqliteStore } from '../../src/store/sqlite/index.js'
import { cleanupTempDirs, copyFixture } from '../helpers.js'

afterAll(cleanupTempDirs)

describe('Workspace', () => {
  it('publishes and counts every run its store records (history.onRecorded), async finishes included', async () => {
    const project = await loadProject(await copyFixture('example'), { env: {} })
    const workspace = new Workspace(async () => openSqliteStore(':memory:'))
    const store = (await workspace.add(project)).store!
    const published: string[] = []
    workspace.events.subscribe((event) => void (event.type === 'run' && published.push(event.data.id)))
    const record = (id: string) => ({
      id,
      projectId: 'shop',
      flow: 'create-order',
      trigger: 'http' as const,
      method: 'POST',
      startedAt: new Date().toISOString(),
      durationMs: 3,
      status: 'success' as const,
      httpStatus: 201,
      ports: [],
      failedNodeId: null,
      error: null,
      scheduledFor: null,
      replayOf: null,
      resumedFrom: null,
    })
    await store.history.recordRun(record('run-sync'), 100)
    await store.queue.enqueue({ id: 'run-async', projectId: 'shop', flow: 'create-order', method: 'POST', input: '{}', receivedAt: new Date().toISOString() })
    const [claimed] = await store.queue.claim('shop', { limit: 1, leaseMs: 60_000, token: 'worker-1' })
    await store.queue.finish(record('run-async'), 100, undefined, { claimToken: claimed!.claimToken, response: '{"status":201,"body":null}' })
    expect(published).toEqual(['run-sync', 'run-async'])
    const metrics = workspace.metrics.familiesText([], () => true)
    expect(metrics).toMatch(/flowctl_runs_total\{[^}]*project="shop"[^}]*\} 2/)
    await workspace.close()
  })

  it('publishes a parked run when it parks (status waiting) and again when it ends; metrics count it once, ended', async () => {
    const project = await loadProject(await copyFixture('example'), { env: {} })
    const workspace = new Workspace(async () => openSqliteStore(':memory:'))
    const store = (await workspace.add(project)).store!
    const published: [string, string][] = []
    workspace.events.subscribe((event) => void (event.type === 'run' && published.push([event.data.id, event.data.status])))
    const base = { projectId: 'shop', flow: 'create-order', trigger: 'cron' as const, method: 'CRON', startedAt: new Date().toISOString(), ports: [] }
    const none = { failedNodeId: null, error: null, scheduledFor: null, replayOf: null, resumedFrom: null }
    const waiting = { ...base, ...none, id: 'run-parked', durationMs: 4, status: 'waiting' as const, httpStatus: null }
    const write = { id: 'run-parked', projectId: 'shop', flow: 'create-order', kind: 'sleep' as const, dueAt: Date.now() - 1, state: '{}', seq: 1 }
    await store.waits.park(write, waiting, 100, undefined, [])
    expect(published).toEqual([['run-parked', 'waiting']])
    const [claimed] = await store.waits.claimDue('shop', { limit: 1, leaseMs: 60_000, token: 'worker-1' })
    await store.waits.finish({ ...waiting, durationMs: 9, status: 'success', httpStatus: 201 }, undefined, claimed!.claimToken, '{}', [])
    expect(published).toEqual([
      ['run-parked', 'waiting'],
      ['run-parked', 'success'],
    ])
    // A run is counted when it ends: a park is no run of its own (flowctl_waiting_runs shows it meanwhile).
    const metrics = workspace.metrics.familiesText([], () => true)
    expect(metrics).toMatch(/flowctl_runs_total\{[^}]*status="success"[^}]*\} 1/)
    expect(metrics).not.toMatch(/status="waiting"/)
    expect(metrics).toMatch(/flowctl_run_duration_seconds_count\{[^}]*\} 1/)
    await workspace.close()
  })

  it('retries opening a failed store at most once per interval, then serves it', async () => {
    const project = await loadProject(await copyFixture('example'), { env: {} })
    let now = 1_000_000
    let attempts = 0
    let fail = true
    const workspace = new Workspace(
      async () => {
        attempts++
        if (fail) throw new Error('connect ECONNREFUSED postgres://flow:pw-1234@db:5432/x')
        return openSqliteStore(':memory:')
      },
      { retryMs: 5_000, now: () => now },
    )
    const entry = await workspace.add(project)
    expect(entry.store).toBeNull()
    expect(entry.storeError).toContain('postgres://***@db')
    expect(entry.storeError).not.toContain('pw-1234')
    expect(attempts).toBe(1)

    now += 1_000
    expect(await workspace.storeFor('shop')).toBeNull()
    expect(attempts).toBe(1) // too soon to retry
    fail = false
    now += 5_000
    const store = await workspace.storeFor('shop')
    expect(store).not.toBeNull()
    expect(attempts).toBe(2)
    expect(workspace.get('shop')).toMatchObject({ store, storeError: null })
    expect(await workspace.storeFor('shop')).toBe(store)
    expect(attempts).toBe(2)
    await workspace.close()
  })

  it('swaps in a reloaded project while earlier snapshots stay as they were, and re-indexes schedules', async () => {
    const dir = await copyFixture('example')
    const project = await loadProject(dir, { env: {} })
    const workspace = new Workspace(() => openSqliteStore(':memory:'))
    await workspace.add(project)
    const before = workspace.get('shop')!
    const nightly = new Date('2026-01-01T02:00:00Z') // 03:00 in Berlin
    expect(workspace.dueIndex.due(nightly).map((d) => d.flow.slug)).toEqual(['nightly-cleanup'])

    const file = join(dir, 'flows', 'every-minute.yaml')
    await writeFile(
      file,
      'name: Every Minute\nschedule: { cron: "* * * * *" }\nnodes:\n  - { id: start, type: start, name: Start, method: post, next: done }\n  - { id: done, type: end, name: Done, body: { ok: true } }\n',
    )
    workspace.replace(await reloadProject(project, [file]))

    const after = workspace.get('shop')!
    expect(after).not.toBe(before)
    expect(after.store).toBe(before.store)
    expect(before.project.flows.has('every-minute')).toBe(false)
    expect(after.project.flows.has('every-minute')).toBe(true)
    expect(workspace.dueIndex.due(new Date('2026-01-01T02:01:00Z')).map((d) => d.flow.slug)).toEqual(['every-minute'])
    await workspace.close()
  })

  it('refuses two projects with one projectId', async () => {
    const workspace = new Workspace(() => openSqliteStore(':memory:'))
    await workspace.add(await loadProject(await copyFixture('example'), { env: {} }))
    await expect(workspace.add(await loadProject(await copyFixture('example'), { env: {} }))).rejects.toThrow(/projectId "shop"/)
    await workspace.close()
  })
})
