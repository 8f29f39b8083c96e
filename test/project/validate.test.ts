// Every kind of load problem, one fixture each: the exact file, line and column, and what it says.
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { FlowctlError } from '../../src/errors.js'
import { loadProject } from '../../src/project/load.js'
import { validateProject } from '../../src/project/validate.js'

const BROKEN = join(import.meta.dirname, '..', '..', 'fixtures', 'broken')

type Expected = [file: string, line: number, column: number, message: string, severity?: 'error' | 'warning']

/** fixture → every problem it must produce (nothing more). */
const CASES: Record<string, Expected[]> = {
  // One message, at the bracket that is never closed (the parser gives up a line later).
  'yaml-syntax': [['flows/bad.yaml', 5, 13, 'YAML syntax error: this "{" is never closed; add "}" where it should end']],
  'yaml-cascade': [['flows/open.yaml', 3, 5, 'YAML syntax error: this "{" is never closed; add "}" where it should end']],
  'json-syntax': [['flows/broken.json', 6, 3, "JSON syntax error: Expected ',' or '}' after property value"]],
  'typo-node-type': [['flows/typo.yaml', 7, 11, 'node "done": "ned" is not a node type (did you mean "end"?); use one of: start, end, if']],
  'typo-setting': [['flows/setting.yaml', 8, 5, 'node "done": "stauts" is not a setting of an end node (did you mean "status"?)']],
  'mustache-secret': [['flows/secret.yaml', 8, 31, 'node "done": "{{ secrets.API_TOKEN }}" is not how a secret is written; use "${secrets.API_TOKEN}"']],
  'enum-input-type': [
    [
      'flows/inputs.yaml',
      7,
      61,
      'properties.verbose.type must be one of: array, boolean, integer, null, number, object, string (not "bool") (did you mean "boolean"?)',
    ],
  ],
  // .hello-copy.yaml and ._hello.yaml are not flows: nothing to report.
  'hidden-files': [],
  'unknown-top-key': [['flows/extra.yaml', 2, 1, '"owner" is not a setting of a flow file']],
  'unknown-node-type': [['flows/kind.yaml', 11, 11, 'node "mail": "email" is not a node type; use one of: start, end, if']],
  'unknown-setting': [['flows/check.yaml', 11, 5, 'node "check": "nxt" is not a setting of an if node']],
  'wrong-setting-type': [['flows/call.yaml', 11, 16, 'node "call": timeoutMs must be a whole number']],
  'bad-condition': [['flows/cond.yaml', 12, 26, 'node "check": condition.all[0].op must be one of: eq, ne, gt']],
  'bad-auth': [['flows/auth.yaml', 6, 11, 'node "start": auth needs "token"']],
  'missing-node-id': [['flows/noid.yaml', 10, 5, 'node #3 needs an "id"']],
  'duplicate-node-id': [['flows/dupid.yaml', 10, 9, 'node id "done" is used twice (first at line 7)']],
  'duplicate-ref-name': [['flows/dupref.yaml', 14, 11, 'node "b": its reference name "big_order" is already used by node "a"']],
  'no-start': [['flows/nostart.yaml', 2, 1, 'this flow has no start node']],
  'two-starts': [['flows/twostarts.yaml', 11, 11, 'node "start2": a flow has exactly one start node, and node "start" is already one']],
  'next-shape': [['flows/shape.yaml', 6, 11, 'node "start": next must be one node id']],
  'unknown-port': [['flows/port.yaml', 11, 38, 'node "check": "maybe" is not a port of this if node; its ports are: true, false']],
  'end-with-next': [['flows/endnext.yaml', 10, 5, 'node "done": an end node ends the run, so it has no next']],
  'missing-target': [
    ['flows/target.yaml', 6, 11, 'node "start": next points to "dnoe", which is not a node id of this flow (did you mean "done"?)'],
    ['flows/target.yaml', 7, 9, 'node "done" cannot be reached from the start node'],
  ],
  'unreachable-node': [['flows/island.yaml', 10, 9, 'node "island" cannot be reached from the start node']],
  'malformed-reference': [['flows/malformed.yaml', 10, 20, '"{{ start.items[0] }}" is not a valid reference']],
  'unknown-root': [['flows/root.yaml', 10, 17, 'node "done": "{{ reslt.insertedId }}" refers to "reslt", which is not a node of this flow']],
  'not-upstream': [['flows/upstream.yaml', 10, 22, '"{{ second.total }}" refers to "second" (node "second"), which does not run before this node']],
  'unknown-run-field': [['flows/runfield.yaml', 10, 19, 'refers to run.finishedAt, but run has only id, startedAt, trigger, scheduledFor']],
  'undefined-secret': [['flows/secret.yaml', 6, 34, 'secret "MISSING_TOKEN" is not defined in .env', 'warning']],
  'duplicate-input': [['flows/inputs.yaml', 8, 44, 'input "qty" is declared in both body and query']],
  'get-with-body': [['flows/getbody.yaml', 8, 7, 'a get start node cannot have body inputs']],
  'bad-method': [['flows/method.yaml', 6, 13, 'node "start": method must be one of: get, post, put, patch, delete (not "fetch")']],
  'bad-cron': [['flows/cron.yaml', 3, 9, 'schedule cron "0 3 * *" has 4 fields']],
  'bad-cron-dialect': [
    ['flows/step.yaml', 3, 9, 'schedule cron "5/15 * * * *" has "5/15" in the minute field: a step needs a range; write 5-59/15'],
    ['flows/weekday.yaml', 2, 19, 'schedule cron "0 9 15W * ?" uses "W" (nearest weekday) in the day-of-month field, which is not supported'],
  ],
  'bad-catch-up': [
    ['flows/catchup.yaml', 4, 12, 'schedule.catchUp must be one of: none, latest, all (not "always")'],
    ['flows/catchup.yaml', 5, 19, 'schedule.catchUpMinutes must be <= 1440'],
  ],
  'bad-schedule-timezone': [['flows/tz.yaml', 4, 13, 'schedule timezone "Mars/Olympus" is not a known timezone']],
  'bad-schedule-input': [['flows/input.yaml', 4, 17, 'schedule.input.qty must be a whole number']],
  'duplicate-slug': [
    ['flows/a.yaml', 1, 7, 'the flow slug "create-order" is used by both flows/a.yaml and flows/b.yaml'],
    ['flows/b.yaml', 1, 7, 'the flow slug "create-order" is used by both flows/a.yaml and flows/b.yaml'],
  ],
  'empty-slug': [['flows/empty.yaml', 1, 7, 'the flow name "!!!" gives an empty slug']],
  'no-end': [['flows/noend.yaml', 11, 5, 'port "false" has no next node; this path ends without an End node; the run answers 204', 'warning']],
  cycle: [['flows/loop.yaml', 11, 32, 'node "check": next leads back to "check", which makes a loop', 'warning']],
  'json-flow': [['flows/json.json', 5, 62, 'node "done": status must be a whole number']],
  'bad-project-id': [['flowctl.yaml', 1, 12, 'projectId "Shop!" may only use a-z, 0-9']],
  'missing-project-name': [['flowctl.yaml', 1, 1, 'flowctl.yaml needs "name"']],
  'unknown-setting-project': [['flowctl.yaml', 4, 3, '"runsPerMinute" is not allowed in limits']],
  'bad-project-timezone': [['flowctl.yaml', 3, 11, '"Berlin/Mitte" is not a known timezone']],
  'unknown-channel': [['flowctl.yaml', 7, 32, 'channel "opps" is not defined under notify.channels (defined: ops)']],
  'bad-digest': [
    ['flowctl.yaml', 8, 13, 'digest cron "every day" has 2 fields'],
    ['flowctl.yaml', 10, 17, '"Nowhere/City" is not a known timezone'],
  ],
  'unknown-filter-operator': [
    ['flows/list.yaml', 11, 25, 'node "list": filter: "$regex" is not a filter operator; use one of: $eq $ne $gt $gte $lt $lte $in $nin $exists $not'],
  ],
  'delete-without-target': [
    ['flows/wipe.yaml', 11, 13, 'node "wipe": delete needs a documentId or a filter with at least one condition (it would delete every document'],
  ],
  'bad-filter-path': [['flows/path.yaml', 12, 7, 'node "list": filter: "items.0.sku": "0" would be an array position, which filters do not support']],
  'bad-filter-value': [
    ['flows/exists.yaml', 11, 36, 'node "list": filter: $exists must be true or false'],
    ['flows/exists.yaml', 11, 58, 'node "list": filter: $in needs a list of values, or one {{ reference }} to a list'],
  ],
  'bad-sort': [
    ['flows/sort.yaml', 11, 24, 'node "list": sort.createdAt must be one of: 1, -1 (not "desc")'],
    ['flows/sort.yaml', 12, 12, 'node "list": limit must be <= 1000'],
  ],
  'update-set-id': [['flows/rename.yaml', 12, 12, 'node "rename": set: _id is the document\'s id and cannot be changed']],
  'bad-index-field': [['flowctl.yaml', 4, 21, 'index of tickets: "owner..id" is not a field path']],
  'unknown-rule-flow': [['flowctl.yaml', 7, 17, 'there is no flow with the slug "creat-order"', 'warning']],
  // SPEC §11
  'cors-wildcard-credentials': [['flowctl.yaml', 3, 1, 'cors: "*" (any origin) is allowed only without credentials']],
  'start-cors-credentials': [['flows/me.yaml', 7, 5, 'node "start": cors: "*" (any origin) is allowed only without credentials']],
  'text-with-json': [['flows/note.yaml', 6, 13, 'node "start": accept: text cannot be combined with json or form']],
  'text-object-body': [['flows/note.yaml', 8, 21, "with accept: [text] the body is the request's text, so inputs.body must be a schema of type string"]],
  'bad-hmac': [['flows/hook.yaml', 6, 62, 'node "start": auth.algorithm must be one of: sha256, sha1, sha512 (not "md5")']],
  'open-schedule': [['flows/nightly.yaml', 2, 1, 'this flow runs on a schedule and anyone can also call it over HTTP', 'warning']],
  'duplicate-operation-id': [
    ['flows/a.yaml', 6, 18, 'the OpenAPI operationId "createThing" is used by both flows/a.yaml and flows/b.yaml', 'warning'],
    ['flows/b.yaml', 6, 18, 'the OpenAPI operationId "createThing" is used by both flows/a.yaml and flows/b.yaml', 'warning'],
  ],
  // SPEC §20: one warning per shared name, at its first file; http: false flows and named Starts share nothing.
  'shared-operation-names': [
    [
      'flows/create-order.yaml',
      3,
      5,
      '2 operations would share the OpenAPI operationId "start_post" (flows/create-order.yaml and flows/create-ticket.yaml), so each gets its flow\'s slug appended ("start_post_create_order"); set operationId on their start nodes',
      'warning',
    ],
    [
      'flows/create-order.yaml',
      3,
      5,
      '2 OpenAPI operations share the summary "Start" (flows/create-order.yaml and flows/create-ticket.yaml); set summary on their start nodes',
      'warning',
    ],
  ],
  'expression-syntax': [['flows/total.yaml', 10, 35, 'node "done": "{{= start.qty * }}": expression syntax error: Unexpected end of expression']],
  'expression-unknown-root': [
    ['flows/total.yaml', 10, 30, '"{{= $sum(basket.items.price) }}" refers to "basket", which is not a node of this flow (known names: run, start, done)'],
    ['flows/total.yaml', 10, 70, '"{{= done.total }}" refers to "done" (node "done"), which does not run before this node'],
  ],
  'expression-forbidden': [
    ['flows/forbidden.yaml', 11, 22, '$eval is not allowed in expressions'],
    ['flows/forbidden.yaml', 12, 45, 'regular expressions are not allowed in expressions'],
    ['flows/forbidden.yaml', 13, 20, 'uses a secret; secrets cannot be read by expressions'],
  ],
  'on-error-target': [
    ['flows/fetch.yaml', 11, 14, 'node "call": onError points to "fallbak", which is not a node id of this flow'],
    ['flows/fetch.yaml', 13, 9, 'node "fallback" cannot be reached from the start node'],
  ],
  'bad-retry': [
    ['flows/retry.yaml', 6, 5, 'node "start": "retry" is not a setting of a start node'],
    ['flows/retry.yaml', 12, 24, 'node "call": retry.attempts must be <= 10'],
  ],
  'call-unknown-flow': [['flows/caller.yaml', 10, 11, 'node "sub": there is no flow with the slug "quoet" to call (flows: caller, quote)']],
  'call-recursion': [
    ['flows/b.yaml', 4, 75, 'node "each" makes the flows call each other (a → b → a); a flow may not call itself'],
    ['flows/self.yaml', 4, 49, 'node "again" calls its own flow'],
  ],
  'call-too-deep': [
    ['flows/level-0.yaml', 4, 45, 'node "sub": calling "level-1" nests flow calls 9 deep; calls nest at most 8 deep'],
    // The nine flows that load all keep the seed's operationId and the Start's name (SPEC §20).
    [
      'flows/level-1.yaml',
      3,
      5,
      '9 operations would share the OpenAPI operationId "start_post" (flows/level-1.yaml, flows/level-2.yaml, flows/level-3.yaml and 6 more)',
      'warning',
    ],
    ['flows/level-1.yaml', 3, 5, '9 OpenAPI operations share the summary "Start"', 'warning'],
  ],
  'bad-each-concurrency': [['flows/each.yaml', 12, 18, 'node "each": concurrency must be <= 16']],
  'url-template-host': [['flows/fetch.yaml', 10, 10, 'node "call": url has a {{ }} value in its scheme, host or port']],
}

describe('validateProject on fixtures/broken', () => {
  it('has a case for every fixture', () => {
    expect(readdirSync(BROKEN).sort()).toEqual(Object.keys(CASES).sort())
  })

  for (const [fixture, expected] of Object.entries(CASES)) {
    it(fixture, async () => {
      const result = await validateProject(join(BROKEN, fixture), { env: {} })
      expect(result.problems).toHaveLength(expected.length)
      expected.forEach(([file, line, column, message, severity = 'error'], index) => {
        const problem = result.problems[index]
        expect(problem).toMatchObject({ file, line, column, severity })
        expect(problem?.message).toContain(message)
      })
      expect(result.ok).toBe(expected.every(([, , , , severity]) => severity === 'warning'))
    })
  }
})

describe('loadProject with problems', () => {
  it('leaves flows with errors out and keeps flows with warnings', async () => {
    const broken = await loadProject(join(BROKEN, 'unknown-setting'), { env: {} })
    expect(broken.flows.size).toBe(0)
    expect(broken.problems).toHaveLength(1)
    const warned = await loadProject(join(BROKEN, 'no-end'), { env: {} })
    expect([...warned.flows.keys()]).toEqual(['no-end'])
    expect(warned.flows.get('no-end')?.nodesById.get('check')?.next).toEqual({ true: 'done' })
  })

  it('leaves out both flows of a slug collision', async () => {
    const project = await loadProject(join(BROKEN, 'duplicate-slug'), { env: {} })
    expect(project.flows.size).toBe(0)
  })

  it('throws PROJECT_INVALID with positioned problems when flowctl.yaml is invalid', async () => {
    const error = await loadProject(join(BROKEN, 'bad-project-id'), { env: {} }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(FlowctlError)
    expect((error as FlowctlError).code).toBe('PROJECT_INVALID')
    expect((error as FlowctlError).problems[0]).toMatchObject({ file: 'flowctl.yaml', line: 1, column: 12 })
  })

  it('throws PROJECT_NOT_FOUND without flowctl.yaml', async () => {
    const error = await validateProject(join(BROKEN, 'no-such-project')).catch((e: unknown) => e)
    expect((error as FlowctlError).code).toBe('PROJECT_NOT_FOUND')
  })
})
