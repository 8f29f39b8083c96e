// The record's values as both stores write them: the ports taken as JSON.stringify writes them.
import { describe, expect, it } from 'vitest'
import type { RunRecord } from '../../src/model/store.js'
import { runValues } from '../../src/store/rows.js'

const PORTS_COLUMN = 9 // RUN_COLUMNS: id, project_id, flow, trigger, method, started_at, duration_ms, status, http_status, ports

function record(ports: RunRecord['ports']): RunRecord {
  return {
    id: 'r1',
    projectId: 'p',
    flow: 'f',
    trigger: 'http',
    method: 'POST',
    startedAt: '2024-05-01T09:00:00.000Z',
    durationMs: 1,
    status: 'success',
    httpStatus: 200,
    ports,
    failedNodeId: null,
    error: null,
    scheduledFor: null,
    replayOf: null,
  } as RunRecord
}

describe('runValues', () => {
  it('writes the ports taken as JSON.stringify does, for names of any characters', () => {
    const names = ['out', 'true', 'Quote "q"', 'Back\\slash', 'Line\nbreak', '\u0001', 'Ünïcödé', '😀', 'lone \udc00', '']
    const ports = names.map((name, i) => ({ nodeId: `${name}-${i}`, port: name }))
    for (const list of [[], ports.slice(0, 1), ports, ports]) expect(runValues(record(list), undefined)[PORTS_COLUMN]).toBe(JSON.stringify(list))
  })
})
