// The fast reader (js-yaml) must give exactly what yaml, the reference, gives for every file it
// accepts: the same data and the same node positions. Files it refuses go to yaml unchanged.
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { readPlainYaml } from '../../src/project/plain-yaml.js'
import { checkFlowFile, checkSource } from '../../src/project/flow-file.js'
import { parseYamlSource, positionAt, type PositionOptions, type SourcePath, type YamlSource } from '../../src/project/yaml-source.js'

function yamlFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return name === 'node_modules' ? [] : yamlFiles(path)
    return /\.ya?ml$/.test(name) ? [path] : []
  })
}

const corpus = [...yamlFiles('fixtures'), ...yamlFiles('templates')]

/** The reference reading, with Infinity/NaN kept apart from null in the comparison. */
const reference = (text: string) => parseYamlSource(text)

/** Every path into `data`, and one missing key or index below each map and list (problems point at those too). */
function allPaths(data: unknown, path: (string | number)[] = []): (string | number)[][] {
  if (data === null || typeof data !== 'object') return [path]
  const children = Array.isArray(data) ? [...data.keys()] : Object.keys(data)
  const below = children.flatMap((child) => allPaths((data as Record<string | number, unknown>)[child], [...path, child]))
  return [path, ...below, [...path, Array.isArray(data) ? data.length : 'missing-key', 'deeper']]
}

const POSITION_OPTIONS: PositionOptions[] = [{}, { key: true }, { within: 0 }, { within: 2 }]

/**
 * Compares the fast reader's positions (from js-yaml's events) with yaml's Document on every path and
 * option; returns how many the events answered without the Document.
 */
function expectSamePositions(fast: YamlSource, ref: YamlSource, label: string): number {
  let answered = 0
  for (const path of allPaths(ref.data)) {
    for (const options of POSITION_OPTIONS) {
      if (fast.knownOffset(path as SourcePath, options) !== undefined) answered++
      expect(positionAt(fast, path, options), `${label} ${path.join('.')} ${JSON.stringify(options)}`).toEqual(positionAt(ref, path, options))
    }
  }
  return answered
}

/** A small seeded generator, so a failure can be replayed. */
function seeded(seed: number) {
  return () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31
    return seed / 2 ** 31
  }
}

describe('readPlainYaml', () => {
  it('reads most flow files of the fixtures itself', () => {
    const read = corpus.filter((file) => readPlainYaml(readFileSync(file, 'utf8')) !== null)
    expect(corpus.length).toBeGreaterThan(100)
    expect(read.length).toBeGreaterThan(corpus.length / 2)
  })

  it.each(corpus)('%s: same data and node positions as yaml, or left to yaml', (file) => {
    const text = readFileSync(file, 'utf8')
    const fast = readPlainYaml(text)
    if (!fast) return
    const ref = reference(text)
    expect(ref.syntaxErrors).toEqual([])
    expect(fast.data).toEqual(ref.data)
    expectSamePositions(fast, ref, file)
  })

  it("answers almost every position of the fixtures from its events, without yaml's Document", () => {
    let asked = 0
    let answered = 0
    for (const file of corpus) {
      const text = readFileSync(file, 'utf8')
      const fast = readPlainYaml(text)
      if (!fast) continue
      asked += allPaths(fast.data).length * POSITION_OPTIONS.length
      answered += expectSamePositions(fast, reference(text), file)
    }
    expect(answered / asked).toBeGreaterThan(0.9)
  })

  it.each(corpus)('%s: the same problems, at the same places, as when yaml reads it', (file) => {
    const text = readFileSync(file, 'utf8')
    const fast = readPlainYaml(text)
    if (!fast) return
    const context = { timezone: 'UTC', secrets: new Map([['KNOWN', 'x']]), secretsFile: '.env' }
    const name = `flows/${file.split('/').pop()}`
    expect(checkSource(name, text, fast, context).problems).toEqual(checkSource(name, text, reference(text), context).problems)
  })

  it('agrees with yaml on generated documents it accepts (or refuses them)', () => {
    const fragments = [
      'a: &x 1',
      'b: *x',
      'c: !!str 1',
      'd: !!float 1',
      'e: !foo x',
      '- &y [1]',
      '- *y',
      'a',
      'b: 1',
      'c: |',
      'd: >-',
      '  x',
      '  y z',
      '    w',
      '',
      '- q',
      '- r: s',
      '  t: "u\\n v"',
      "  'p''q'",
      'n: |2+',
      '  - 1',
      '  - "2"',
      'e: [1, "2", {f: g}]',
      'h: {i: [j]}',
      '# c',
      'z: x # c',
      'l: 0o17',
      'm: 0x1A',
      'p: -.5',
      'q: 1e3',
      'q: 1e400',
      'r: true',
      's: ~',
      't:',
      'u: "',
      "v: '",
      'w: a\\b',
      'y: "a\\"b"',
      '__proto__: 1',
      'k: \r',
      'k:\tv',
      '---',
      'A: ...',
      'C: --- x',
      'D: [',
      '}',
      '  ? a',
      '  : b',
      ': v',
      '~: v',
      'null: v',
      'F: 1:2',
      'G: https://x?a=1&b=2',
      'H: "*/15 * * * *"',
      'J: 1_0',
      'K: +1',
      'L: .5e1',
      'M: "\\u00e9\\U0001F600"',
      "O: 'a\n  b'",
      'P: a\n  b',
      '%YAML 1.2',
      // Anchors and aliases: on scalars, maps and lists, merge keys (a plain "<<" key in YAML 1.2),
      // an alias as a whole list item or map value, as a key, inside its own anchor, redefined anchors.
      'e: &x "q"',
      'f: &m',
      '  k: v',
      '  <<: *m',
      '<<: *x',
      '- *m',
      '- &n',
      '  id: *x',
      'g: [*x, &z {h: *y}, *z]',
      '*x : 1',
      '&k i: *k',
      'j: &w [*w]',
      'k: &x',
      'nodes:',
      '  - &n {id: a}',
      '  - *n',
      'l: Tom & Jerry *x',
    ]
    const random = seeded(21)
    let accepted = 0
    let withAliases = 0
    for (let i = 0; i < 8000; i++) {
      const lines = Array.from({ length: 1 + Math.floor(random() * 6) }, () => fragments[Math.floor(random() * fragments.length)])
      const text = lines.join(random() < 0.3 ? '\r\n' : '\n') + (random() < 0.5 ? '\n' : '')
      const fast = readPlainYaml(text)
      if (!fast) continue
      accepted++
      if (/(?:^|[\s,[])\*[a-z]/m.test(text)) withAliases++
      const ref = reference(text)
      expect(ref.syntaxErrors, JSON.stringify(text)).toEqual([])
      expect(fast.data, JSON.stringify(text)).toEqual(ref.data)
      expectSamePositions(fast, ref, JSON.stringify(text))
    }
    expect(accepted).toBeGreaterThan(800)
    expect(withAliases).toBeGreaterThan(100)
  })

  it('leaves tags, tabs, null keys, unknown or self-referring aliases and aliases as keys to yaml', () => {
    const texts = ['a: !!str 1\n', 'a:\tb\n', '~: v\n', ': v\n', 'a: 1e400\n', '\uFEFFa: 1\n', '', 'a: *x\n', 'a: &x [*x]\n', 'a: &x 1\nb:\n  *x : 2\n']
    for (const text of texts) expect(readPlainYaml(text), JSON.stringify(text)).toBeNull()
  })

  it('reads anchors, aliases and merge keys itself, with the data and positions yaml gives', () => {
    // The shape of a flow that shares settings: an anchored node, a "<<" key (a plain key in YAML
    // 1.2, as yaml reads it), an alias as a whole list item and as a value.
    const text = [
      'name: Shared',
      'defaults: &defaults',
      '  retries: 2',
      'nodes:',
      '  - &start',
      '    id: start',
      '    type: start',
      '    next: &done done',
      '  - <<: *defaults',
      '    id: *done',
      '    type: end',
      '  - *start',
      '',
    ].join('\n')
    const fast = readPlainYaml(text)
    const ref = reference(text)
    expect(fast).not.toBeNull()
    expect(fast!.data).toEqual(ref.data)
    expect((ref.data as { nodes: Record<string, unknown>[] }).nodes[1]).toEqual({ '<<': { retries: 2 }, id: 'done', type: 'end' })
    expect(positionAt(fast!, ['nodes', 2])).toEqual({ line: 12, column: 5 })
    expect(positionAt(fast!, ['nodes', 2, 'id'])).toEqual({ line: 12, column: 5 })
    expect(positionAt(fast!, ['nodes', 1, 'id'])).toEqual({ line: 10, column: 9 })
    expect(expectSamePositions(fast!, ref, 'shared')).toBeGreaterThan(0)
    // Its problems (the "<<" key, the start node twice through the alias) at the same places.
    const context = { timezone: 'UTC', secrets: new Map<string, string>(), secretsFile: '.env' }
    const problems = checkSource('flows/shared.yaml', text, fast!, context).problems
    expect(problems.length).toBeGreaterThan(1)
    expect(problems).toEqual(checkSource('flows/shared.yaml', text, reference(text), context).problems)
  })

  it("expands aliases exactly where yaml does: up to its limit, past which the file is yaml's to refuse", () => {
    // yaml counts 1 + the aliases of an anchor, times what the anchored node holds: 999 aliases of a
    // scalar make 1,000 (allowed), 1,000 make 1,001 (an alias bomb).
    const uses = (n: number) => `a: &a 1\nb: [${Array(n).fill('*a').join(', ')}]\n`
    expect(readPlainYaml(uses(999))?.data).toEqual(reference(uses(999)).data)
    expect(reference(uses(1000)).syntaxErrors[0]?.message).toMatch(/aliases expand too much/)
    expect(readPlainYaml(uses(1000))).toBeNull()
    // Random anchor graphs: each level anchors a list or map of aliases to the levels before it.
    const random = seeded(7)
    const pick = <T>(items: T[]): T => items[Math.floor(random() * items.length)]!
    let refused = 0
    let expanded = 0
    for (let i = 0; i < 600; i++) {
      const lines = [`a0: &a0 ${pick(['1', '[]', '{}', '[x, y]', '{k: v}', ''])}`]
      const levels = 1 + Math.floor(random() * 5)
      for (let level = 1; level <= levels; level++) {
        const aliases = Array.from({ length: Math.floor(random() * 12) }, () => `*a${Math.floor(random() * level)}`)
        const block = aliases.map((alias) => `\n  - ${alias}`).join('')
        lines.push(
          pick([
            `a${level}: &a${level} [${aliases.join(', ')}]`,
            `a${level}: &a${level} {${aliases.map((alias, k) => `k${k}: ${alias}`).join(', ')}}`,
            `a${level}: &a${level}${block || ' []'}`,
          ]),
        )
      }
      for (let use = Math.floor(random() * 40); use > 0; use--) lines.push(`u${use}: *a${Math.floor(random() * (levels + 1))}`)
      const text = lines.join('\n') + '\n'
      const ref = reference(text)
      const fast = readPlainYaml(text)
      if (ref.syntaxErrors.length > 0) {
        refused++
        expect(ref.syntaxErrors[0]!.message, text).toMatch(/aliases expand too much/)
        expect(fast, text).toBeNull()
      } else {
        expanded++
        expect(fast, text).not.toBeNull()
        expect(fast!.data, text).toEqual(ref.data)
      }
    }
    expect(refused).toBeGreaterThan(50)
    expect(expanded).toBeGreaterThan(50)
  })
})

describe('checkFlowFile with the fast reader', () => {
  const context = { timezone: 'UTC', secrets: new Map<string, string>(), secretsFile: '.env' }

  it('keeps no Document of a loaded flow and still points cross-file problems at the right place', () => {
    const text = 'name: Hello\nnodes:\n  - id: start\n    type: start\n    next: done\n  - id: done\n    type: end\n'
    const result = checkFlowFile('flows/hello.yaml', text, context)
    expect(result.problems).toEqual([])
    expect(result.flow?.nodes.map((n) => n.pos)).toEqual([
      { line: 3, column: 5 },
      { line: 6, column: 5 },
    ])
    // Asked again after the load (as the cross-file checks do), the position comes from a fresh parse.
    expect(positionAt(result.collector.source!, ['name'])).toEqual({ line: 1, column: 7 })
  })

  it('reports a file with problems from its own reading, positions included', () => {
    const text = 'name: Broken\nnodes:\n  - id: start\n    type: start\n    next: nowhere\n'
    const result = checkFlowFile('flows/broken.yaml', text, context)
    expect(result.flow).toBeNull()
    expect(result.problems.map((p) => `${p.line}:${p.column} ${p.message}`)).toEqual([expect.stringMatching(/^5:11 .*nowhere/)])
  })
})

describe('YamlSource.dropParsed', () => {
  it.each(corpus.slice(0, 40))('%s: the data and positions read again after dropping are the ones read first', (file) => {
    const text = readFileSync(file, 'utf8')
    const source = readPlainYaml(text) ?? parseYamlSource(text)
    const data = JSON.stringify(source.data)
    const paths = [[], ['name'], ['nodes', 0], ['nodes', 0, 'id'], ['nodes', 1, 'type']] as const
    const positions = paths.map((path) => positionAt(source, path))
    source.dropParsed()
    expect(JSON.stringify(source.data)).toBe(data)
    expect(paths.map((path) => positionAt(source, path))).toEqual(positions)
  })
})
