// The flows API's edit of a flow file from the flow as data (SPEC §24): the difference is applied
// to the YAML Document and only the lines it changed are written. Every case compares line arrays:
// a one-setting change must be a one-line diff, and the file must read back as the flow sent.
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { diffArrays } from 'diff'
import { describe, expect, it } from 'vitest'
import { editFlowText, flowDataOf, renderFlowText, syntaxProblems } from '../../src/project/flow-edit/edit-text.js'
import { mergeEdit } from '../../src/project/flow-edit/merge-lines.js'
import { applyRenames, rewriteTemplate } from '../../src/project/flow-edit/rename.js'
import { loadProject, problemsWithText } from '../../src/project/load.js'
import { ROOT } from '../helpers.js'

type Plain = Record<string, any>

const FIXTURES = join(ROOT, 'test', 'fixtures', 'flow-edit')
const COMMENTED = readFileSync(join(FIXTURES, 'commented.yaml'), 'utf8')

/** The lines removed and added between two texts. */
function lineDiff(before: string, after: string): { removed: string[]; added: string[] } {
  const removed: string[] = []
  const added: string[] = []
  for (const change of diffArrays(before.split('\n'), after.split('\n'))) {
    if (change.removed) removed.push(...change.value)
    if (change.added) added.push(...change.value)
  }
  return { removed, added }
}

function dataOf(file: string, text: string): Plain {
  // Through JSON, as the API receives it (an alias's value is a copy, not the anchor's object).
  return JSON.parse(JSON.stringify(flowDataOf(file, text))) as Plain
}

/** Edits the data of `text` with `change` and returns the new text (checked to read back as the data sent). */
function edit(file: string, text: string, change: (flow: Plain) => void): string {
  const flow = dataOf(file, text)
  change(flow)
  const out = editFlowText(file, text, flow)
  expect(flowDataOf(file, out)).toEqual(flow)
  return out
}

describe('editFlowText on a commented file', () => {
  it.each([
    ['a boolean in a block map, its aligned comment in its column', (f: Plain) => (f.schedule.enabled = false), '  enabled: false             # default true'],
    [
      'a number in a flow map with a trailing comment',
      (f: Plain) => (f.nodes[0].inputs.body.properties.qty.maximum = 50),
      '          qty: { type: integer, minimum: 1, maximum: 50 }    # capped',
    ],
    ['a value in a flow map in a node', (f: Plain) => (f.nodes[1].condition.right = 20), '    condition: { left: "{{start.qty}}", op: gt, right: 20 }'],
    ['a single-quoted string keeps its quotes', (f: Plain) => (f.description = 'Takes orders.'), "description: 'Takes orders.'"],
    ['a double-quoted string keeps its quotes', (f: Plain) => (f.schedule.cron = '*/5 * * * *'), '  cron: "*/5 * * * *"        # every quarter hour'],
    ['a plain string that now reads as a boolean gets quotes', (f: Plain) => (f.nodes[3].type = 'true'), '    type: "true"'],
    ['an edge', (f: Plain) => (f.nodes[1].next.false = 'done'), '    next: { true: save, false: done }'],
  ])('%s: a one-line diff', (_label, change, line) => {
    const out = edit('flows/order.yaml', COMMENTED, change)
    const { removed, added } = lineDiff(COMMENTED, out)
    expect(removed).toHaveLength(1)
    expect(added).toEqual([line])
  })

  it('keeps every comment, blank line and the key order when settings are added and removed', () => {
    const out = edit('flows/order.yaml', COMMENTED, (f) => {
      f.nodes[2].retries = 2
      delete f.nodes[2].collection
    })
    const { removed, added } = lineDiff(COMMENTED, out)
    expect(removed).toEqual(['    collection: orders       # the collection'])
    expect(added).toEqual(['    retries: 2'])
    // The new key goes after the node's last key, the others keep their order.
    expect(out.indexOf('retries: 2')).toBeGreaterThan(out.indexOf('next: done'))
    for (const comment of COMMENTED.match(/#.*$/gm)!.filter((c) => !c.includes('the collection'))) expect(out).toContain(comment)
    expect(out.split('\n').filter((l) => l === '')).toHaveLength(COMMENTED.split('\n').filter((l) => l === '').length)
  })

  it('matches nodes by id: a node inserted, one removed and two swapped keep the comments of the others', () => {
    const inserted = edit('flows/order.yaml', COMMENTED, (f) => {
      f.nodes.splice(2, 0, { id: 'log', type: 'set', values: { seen: true }, next: 'save' })
      f.nodes[1].next.true = 'log'
    })
    const diff = lineDiff(COMMENTED, inserted)
    expect(diff.removed).toEqual(['    next: { true: save, false: save }'])
    // The new node is set apart by a blank line, as the nodes around it are.
    expect(diff.added).toEqual([
      '    next: { true: log, false: save }',
      '  - id: log',
      '    type: set',
      '    values:',
      '      seen: true',
      '    next: save',
      '',
    ])
    expect(inserted).toContain('    next: { true: log, false: save }\n\n  - id: log\n')

    const removed = edit('flows/order.yaml', COMMENTED, (f) => {
      f.nodes.splice(1, 1)
      f.nodes[0].next = 'save'
    })
    expect(lineDiff(COMMENTED, removed).added).toEqual(['    next: save'])
    expect(removed).not.toContain('# Branch on the size.')
    expect(removed).toContain('# The entry point.')

    const swapped = edit('flows/order.yaml', COMMENTED, (f) => {
      ;[f.nodes[2], f.nodes[3]] = [f.nodes[3], f.nodes[2]]
    })
    expect(swapped).toContain('collection: orders       # the collection')
    expect(swapped.indexOf('- id: done')).toBeLessThan(swapped.indexOf('- id: save'))
  })

  it('changes one item of a list that is not of nodes, and inserts into it in place', () => {
    const out = edit('flows/order.yaml', COMMENTED, (f) => f.nodes[0].inputs.body.required.splice(1, 0, 'note'))
    const { removed, added } = lineDiff(COMMENTED, out)
    // Lists unpadded and maps padded, as the file writes them.
    expect(removed).toEqual(['        required: [sku, qty]'])
    expect(added).toEqual(['        required: [sku, note, qty]'])
    expect(dataOf('f.yaml', out).nodes[0].inputs.body.required).toEqual(['sku', 'note', 'qty'])
  })

  it('pads nested maps and lists each as the file does', () => {
    const out = edit('flows/order.yaml', COMMENTED, (f) => {
      f.nodes[1].condition = {
        any: [
          { left: '{{start.qty}}', op: 'gt', right: 10 },
          { left: '{{start.sku}}', op: 'in', right: ['a', 'b'] },
        ],
      }
    })
    expect(lineDiff(COMMENTED, out).added).toEqual([
      '    condition: { any: [{ left: "{{start.qty}}", op: gt, right: 10 }, { left: "{{start.sku}}", op: in, right: [a, b] }] }',
    ])
  })

  it('changes nothing when the flow sent is the file’s own', () => {
    expect(editFlowText('flows/order.yaml', COMMENTED, flowDataOf('flows/order.yaml', COMMENTED))).toBe(COMMENTED)
  })
})

describe('editFlowText on other layouts', () => {
  it('flow-style nodes: a one-line diff, and a new node written in the same style', () => {
    const text = readFileSync(join(FIXTURES, 'flow-style.yaml'), 'utf8')
    const changed = edit('flows/greet.yaml', text, (f) => (f.nodes[1].body.message = 'bye'))
    expect(lineDiff(text, changed)).toEqual({
      removed: ["  - { id: done, type: end, name: Done, body: { message: 'hello', n: 1 } }"],
      added: ["  - { id: done, type: end, name: Done, body: { message: 'bye', n: 1 } }"],
    })
    const added = edit('flows/greet.yaml', text, (f) => {
      f.nodes.splice(1, 0, { id: 'mid', type: 'set', values: { a: 1 }, next: 'done' })
      f.nodes[0].next = 'mid'
    })
    expect(lineDiff(text, added).added).toEqual([
      // The comment stays in its column.
      '  - { id: start, type: start, name: Start, method: get, next: mid }     # entry',
      '  - { id: mid, type: set, values: { a: 1 }, next: done }',
      '',
    ])
  })

  it('block-style sequences written without indentation stay so', () => {
    const text = 'name: X\nnodes:\n- id: start\n  type: start\n  next: done\n- id: done\n  type: end\n  status: 200\n'
    const out = edit('flows/x.yaml', text, (f) => (f.nodes[1].status = 201))
    expect(lineDiff(text, out)).toEqual({ removed: ['  status: 200'], added: ['  status: 201'] })
  })

  it('a .json flow stays JSON in its indentation; what did not change keeps its lines', () => {
    const text = readFileSync(join(FIXTURES, 'plain.json'), 'utf8')
    const out = edit('flows/json-flow.json', text, (f) => (f.nodes[1].body.n = 2))
    expect(JSON.parse(out)).toEqual(dataOf('f.json', out))
    expect(out.split('\n').slice(0, 3)).toEqual(text.split('\n').slice(0, 3))
    expect(out).toContain('\n                "n": 2\n')
    expect(out.endsWith('}\n')).toBe(true)
  })

  it('keeps CRLF line ends', () => {
    const text = 'name: X   # c\r\nnodes:\r\n  - id: start\r\n    type: start\r\n'
    const out = edit('flows/x.yaml', text, (f) => (f.name = 'Y'))
    expect(out).toBe('name: Y   # c\r\nnodes:\r\n  - id: start\r\n    type: start\r\n')
  })

  it('a file that is not YAML any more is written anew from the flow', () => {
    const flow = { name: 'Fresh', nodes: [{ id: 'start', type: 'start' }] }
    const out = editFlowText('flows/x.yaml', 'name: [broken\n', flow)
    expect(syntaxProblems('flows/x.yaml', 'name: [broken\n')).not.toEqual([])
    expect(flowDataOf('flows/x.yaml', out)).toEqual(flow)
    expect(flowDataOf('flows/x.yaml', renderFlowText('flows/x.yaml', flow))).toEqual(flow)
  })

  it('anchors whose target changes: the value sent is what is written', () => {
    const text = 'name: A\ndefaults: &d { x: 1 }\nother: *d\n'
    const out = edit('flows/a.yaml', text, (f) => (f.defaults.x = 2))
    expect(flowDataOf('flows/a.yaml', out)).toEqual({ name: 'A', defaults: { x: 2 }, other: { x: 1 } })
  })
})

describe('every scalar of every example flow, changed alone, is a one-line diff', () => {
  const folder = join(ROOT, 'fixtures', 'example', 'flows')
  const files = readdirSync(folder).filter((name) => name.endsWith('.yaml'))
  it.each(files)('%s', (name) => {
    const text = readFileSync(join(folder, name), 'utf8')
    const leaves: (string | number)[][] = []
    const walk = (value: unknown, path: (string | number)[]) => {
      if (value !== null && typeof value === 'object') for (const [k, v] of Object.entries(value)) walk(v, [...path, Array.isArray(value) ? Number(k) : k])
      else leaves.push(path)
    }
    walk(flowDataOf(name, text), [])
    expect(leaves.length).toBeGreaterThan(10)
    for (const path of leaves) {
      const out = edit(name, text, (flow) => {
        const parent = path.slice(0, -1).reduce<any>((v, k) => v[k], flow)
        const key = path.at(-1)!
        const old = parent[key]
        parent[key] = typeof old === 'number' ? old + 1 : typeof old === 'boolean' ? !old : old === null ? 'x' : `${old}x`
      })
      const { removed, added } = lineDiff(text, out)
      expect([removed.length, added.length], `${name} ${path.join('.')}`).toEqual([1, 1])
    }
  })
})

describe('mergeEdit', () => {
  it('keeps lines the edit did not touch even where yaml lays them out differently', () => {
    const written = 'a:     1   # one\nb: [x,y]\nc: 3\n'
    const base = 'a: 1 # one\nb: [ x, y ]\nc: 3\n'
    const edited = 'a: 1 # one\nb: [ x, y ]\nc: 4\n'
    expect(mergeEdit(written, base, edited)).toBe('a:     1   # one\nb: [x,y]\nc: 4\n')
  })
})

describe('edits too large to diff', () => {
  it('mergeEdit gives up past its bound, and editFlowText still writes the flow sent', () => {
    const lines = (prefix: string) => Array.from({ length: 2500 }, (_, i) => `${prefix}${i}: ${i}`).join('\n') + '\n'
    expect(mergeEdit(lines('a'), lines('a'), lines('b'))).toBeNull()
    const text = `name: Big\nvalues:\n${lines('  a')}`
    const flow = dataOf('big.yaml', `name: Big\nvalues:\n${lines('  b')}`)
    expect(flowDataOf('big.yaml', editFlowText('big.yaml', text, flow))).toEqual(flow)
  })
})

describe('renaming a node', () => {
  const before = dataOf('f.yaml', COMMENTED)

  it('found from one id gone and one new with the same content: edges, references and expressions follow', () => {
    const after = structuredClone(before)
    after.nodes[2].id = 'store'
    const { flow: renamed, previousIds } = applyRenames(before, after, [])
    const flow = renamed as Plain
    expect(previousIds).toEqual(new Map([['store', 'save']]))
    expect(flow.nodes[1].next).toEqual({ true: 'store', false: 'store' })
    expect(flow.nodes[3].body).toEqual({ id: '{{store.insertedId}}', ok: true, total: "{{= store.insertedId & '-' & start.sku }}" })
    // A root that only starts like the old name is another node's.
    expect(flow.nodes[2].document.note).toBe('{{= save_x }}')
    const out = editFlowText('f.yaml', COMMENTED, flow, { previousIds })
    expect(lineDiff(COMMENTED, out).removed).toEqual([
      '    next: { true: save, false: save }',
      '  - id: save',
      '    body: { id: "{{save.insertedId}}", ok: true, total: "{{= save.insertedId & \'-\' & start.sku }}" }',
    ])
  })

  it('said explicitly, with the flow still using the old id', () => {
    const flow = applyRenames(before, structuredClone(before), [{ from: 'save', to: 'keep' }]).flow as Plain
    expect(flow.nodes.map((n: Plain) => n.id)).toEqual(['start', 'check', 'keep', 'done'])
    expect(flow.nodes[2].next).toBe('done')
    expect(flow.nodes[0].next).toBe('check')
    expect(flow.nodes[1].next).toEqual({ true: 'keep', false: 'keep' })
  })

  it('a node with a name keeps its reference name: only the edges follow its new id', () => {
    const after = structuredClone(before)
    after.nodes[1].id = 'branch'
    const flow = applyRenames(before, after, []).flow as Plain
    expect(flow.nodes[0].next).toBe('branch')
    expect(flow.nodes[1].condition).toEqual(before.nodes[1].condition)
  })

  it('refuses an explicit rename of a node that is not there', () => {
    expect(() => applyRenames(before, structuredClone(before), [{ from: 'nope', to: 'x' }])).toThrow(/no node "nope"/)
  })

  it('a changed name changes the reference name: {{ big_order.result }} follows, the id stays', () => {
    const flow = structuredClone(before)
    flow.nodes[3].body.big = '{{ big_order.result }}'
    const after = structuredClone(flow)
    after.nodes[1].name = 'Large Order'
    const renamed = applyRenames(flow, after, [])
    expect((renamed.flow as Plain).nodes[3].body.big).toBe('{{ large_order.result }}')
    expect((renamed.flow as Plain).nodes[1].id).toBe('check')
  })

  it.each([
    ['{{ save.x }} and {{save}}', '{{ store.x }} and {{store}}'],
    ['{{= $sum(save.items.price) + saved }}', '{{= $sum(store.items.price) + saved }}'],
    ['{{= "save.x" }} {{ start.save }}', '{{= "save.x" }} {{ start.save }}'],
    ['${secrets.save} {{ saver.x }}', '${secrets.save} {{ saver.x }}'],
    ['{{ broken', '{{ broken'],
  ])('rewriteTemplate(%j)', (text, expected) => {
    expect(rewriteTemplate(text, new Map([['save', 'store']]))).toBe(expected)
  })
})

describe('problemsWithText', () => {
  it('reports one file as validate would with that text: its own problems and those across files, nothing written', async () => {
    const project = await loadProject(join(ROOT, 'fixtures', 'example'))
    const clash = 'name: Create Order\nnodes:\n  - { id: start, type: start, method: get, operationId: clash, next: done }\n  - { id: done, type: end }\n'
    expect(await problemsWithText(project, 'flows/new-one.yaml', clash)).toEqual([
      expect.objectContaining({ file: 'flows/new-one.yaml', line: 1, column: 7, severity: 'error', message: expect.stringContaining('used by both') }),
    ])
    expect(await problemsWithText(project, 'flows/new-one.yaml', clash.replace('Create Order', 'New One'))).toEqual([])
    expect(await problemsWithText(project, 'flows/new-one.yaml', 'name: [oops\n')).toEqual([
      expect.objectContaining({ line: 1, message: expect.stringContaining('YAML syntax error') }),
    ])
  })
})
