// The reference pages in docs/reference/ against the code they describe: settings against the
// flowctl.yaml schema and DEFAULT_LIMITS, node kinds against the registry, HTTP routes against the
// routes src/http/app.ts registers, CLI flags against the commander definitions (through --help),
// error codes against src/errors.ts. Also: no internal words in user docs, and links that resolve.
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { PassThrough } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { main } from '../../src/cli/main.js'
import { ERROR_CATALOG, type ErrorCode } from '../../src/errors.js'
import { DEFAULT_LIMITS } from '../../src/model/project.js'
import { PROJECT_FILE_SCHEMA } from '../../src/model/shapes.js'
import { nodeKinds } from '../../src/nodes/registry.js'
import { ROOT } from '../helpers.js'

const DOCS = join(ROOT, 'docs')
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8')

/** The body rows of every markdown table in `text`, as trimmed cells (`\|` stays inside a cell). */
function tableRows(text: string): string[][] {
  return text
    .split('\n')
    .filter((line) => line.startsWith('|') && !/^\|[-| :]+\|$/.test(line))
    .map((line) =>
      line
        .slice(1, -1)
        .split(/(?<!\\)\|/)
        .map((cell) => cell.trim()),
    )
}

/** The name in a row's first cell when it is one backticked word: `` `limits.eachItems` `` → limits.eachItems. */
const firstCode = (row: string[]) => /^`([^`]+)`$/.exec(row[0] ?? '')?.[1]

type SchemaNode = { type?: unknown; properties?: Record<string, SchemaNode>; default?: unknown }

describe('docs/reference/errors.md', () => {
  it('has one row per code of the catalog, with its HTTP status and exit code', () => {
    const rows = new Map(tableRows(read('docs/reference/errors.md')).flatMap((row) => (firstCode(row) ? [[firstCode(row)!, row]] : [])))
    for (const code of Object.keys(ERROR_CATALOG) as ErrorCode[]) {
      const row = rows.get(code)
      expect(row, `row of ${code}`).toBeDefined()
      expect(row![1], `HTTP status of ${code}`).toBe(String(ERROR_CATALOG[code].httpStatus))
      expect(row![2], `exit code of ${code}`).toBe(String(ERROR_CATALOG[code].exitCode))
    }
    expect([...rows.keys()].filter((code) => !(code in ERROR_CATALOG))).toEqual([])
  })
})

describe('docs/reference/settings.md', () => {
  /** Every setting of flowctl.yaml: top-level keys, and the fields of those that are plain objects. */
  function settingsOfSchema(): Map<string, SchemaNode> {
    const settings = new Map<string, SchemaNode>()
    for (const [key, schema] of Object.entries(PROJECT_FILE_SCHEMA.properties as Record<string, SchemaNode>)) {
      if (schema.type === 'object' && schema.properties) {
        for (const [field, child] of Object.entries(schema.properties)) settings.set(`${key}.${field}`, child)
      } else settings.set(key, schema)
    }
    return settings
  }
  const rows = new Map(tableRows(read('docs/reference/settings.md')).flatMap((row) => (firstCode(row) ? [[firstCode(row)!, row]] : [])))

  it('has a row for every setting of flowctl.yaml, and none for a setting that does not exist', () => {
    const settings = settingsOfSchema()
    expect([...settings.keys()].filter((name) => !rows.has(name))).toEqual([])
    // Environment variables (upper case) share the page, in their own table.
    expect([...rows.keys()].filter((name) => !settings.has(name) && !/^[A-Z][A-Z_<>]*$/.test(name))).toEqual([])
  })

  it('gives every limit the default flowctl uses (DEFAULT_LIMITS, else the schema default)', () => {
    const settings = settingsOfSchema()
    const defaults: Record<string, unknown> = { ...DEFAULT_LIMITS }
    for (const [name, schema] of settings) {
      const field = name.replace(/^limits\./, '')
      const expected = name.startsWith('limits.') && field in defaults ? defaults[field] : schema.default
      if (expected === undefined) continue
      const cell = rows.get(name)![1]!
      if (typeof expected === 'number') {
        const shown = /^[\d,]+/.exec(cell)?.[0]
        expect(Number(shown?.replaceAll(',', '')), `default of ${name}: ${cell}`).toBe(expected)
      } else {
        expect(cell, `default of ${name}`).toBe(`\`${String(expected)}\``)
      }
    }
  })
})

describe('docs/reference/node-kinds.md', () => {
  const rows = new Map(tableRows(read('docs/reference/node-kinds.md')).flatMap((row) => (firstCode(row) ? [[firstCode(row)!, row]] : [])))

  it('has one row per registered node kind', () => {
    expect([...rows.keys()].sort()).toEqual([...nodeKinds.keys()].sort())
  })

  it('names the ports of every kind in its row ("none" for a kind that ends the run)', () => {
    for (const [type, kind] of nodeKinds) {
      const ports = kind.ports(kind.parseSettings({}))
      const cell = rows.get(type)?.[2] ?? ''
      if (ports.length === 0) expect(cell, `ports of ${type}`).toBe('none')
      expect(
        ports.filter((port) => !cell.includes(port)),
        `ports of ${type} missing from its row`,
      ).toEqual([])
    }
  })

  it('names every setting of a kind in its row (retry and onError are said once, below the table)', () => {
    const common = new Set(['description', 'retry', 'onError'])
    for (const [type, kind] of nodeKinds) {
      const settings = Object.keys((kind.settingsSchema as SchemaNode).properties ?? {}).filter((name) => !common.has(name))
      const cell = rows.get(type)?.[1] ?? ''
      expect(
        settings.filter((name) => !cell.includes(`\`${name}\``)),
        `settings of ${type} missing from its row`,
      ).toEqual([])
    }
  })
})

describe('docs/reference/http.md', () => {
  it('lists every route the server registers, with its methods, and no other', () => {
    const source = read('src/http/app.ts')
    const registered = new Set<string>()
    // `app.get('/path', …)` and the route table's `routes.add('GET', '/path', …)`; OPTIONS answers are CORS preflights, not routes of their own.
    const calls = [
      ...[...source.matchAll(/app\.(get|post|all)\('([^']+)'/g)].map(([, method, path]) => [method!, path!] as const),
      ...[...source.matchAll(/routes\.add\('([A-Z]+)', '([^']+)'/g)].map(([, method, path]) => [method!.toLowerCase(), path!] as const),
    ]
    for (const [method, path] of calls) {
      if (path === '/**') continue // the not-found fallback
      const shown = path.replace(/:([A-Za-z]+)/g, '<$1>').replace(/\/\*\*$/, '/**')
      registered.add(`${method === 'all' ? 'ANY' : method.toUpperCase()} ${shown}`)
    }
    const documented = new Set<string>()
    for (const row of tableRows(read('docs/reference/http.md'))) {
      const path = /^`([^`]+)`$/.exec(row[1] ?? '')?.[1]
      if (!path || !path.startsWith('/')) continue
      for (const method of row[0]!.split(',')) {
        const name = method.trim().toUpperCase()
        // A catch-all route (`/api/run/**`) is documented with its parts: compare its prefix.
        const match = [...registered].find((route) => route.endsWith('/**') && `${name} ${path}`.startsWith(route.slice(0, -2)))
        documented.add(match ?? `${name} ${path}`)
      }
    }
    expect(
      [...registered].filter((route) => !documented.has(route)),
      'routes missing from docs',
    ).toEqual([])
    expect(
      [...documented].filter((route) => !registered.has(route)),
      'documented routes the server does not have',
    ).toEqual([])
  })
})

describe('docs/reference/cli.md', () => {
  async function help(path: string[]): Promise<string> {
    const stdout = new PassThrough()
    const chunks: string[] = []
    stdout.on('data', (chunk: Buffer) => chunks.push(chunk.toString('utf8')))
    const exitCode = await main([...path, '--help'], { stdout, stderr: new PassThrough(), env: { NO_COLOR: '1' } })
    expect(exitCode).toBe(0)
    return chunks.join('')
  }

  /** Every command path with its flags, read from commander's help (so hidden nothing, wrapped lines skipped). */
  async function commandFlags(path: string[] = []): Promise<Map<string, Set<string>>> {
    const text = await help(path)
    const section = (name: string) => text.split(`\n${name}:\n`)[1]?.split('\n\n')[0] ?? ''
    const flags = new Set([...section('Options').matchAll(/^ {2}(?:-[A-Za-z], )?(--[a-z-]+)/gm)].map((match) => match[1]!).filter((flag) => flag !== '--help'))
    const all = new Map([[['flowctl', ...path].join(' '), flags]])
    for (const [, name] of section('Commands').matchAll(/^ {2}([a-z-]+)/gm)) {
      if (name === 'help') continue
      for (const [key, value] of await commandFlags([...path, name!])) all.set(key, value)
    }
    return all
  }

  /** `## flowctl serve` → the flags in the first cells of that section's table. */
  function documentedFlags(): Map<string, Set<string>> {
    const documented = new Map<string, Set<string>>()
    for (const part of read('docs/reference/cli.md')
      .split(/^#{2,3} /m)
      .slice(1)) {
      const heading = part.slice(0, part.indexOf('\n')).trim()
      if (!heading.startsWith('flowctl')) continue
      const flags = tableRows(part).flatMap((row) => [...(row[0] ?? '').matchAll(/(--[a-z-]+)/g)].map((match) => match[1]!))
      documented.set(heading, new Set(flags))
    }
    return documented
  }

  it('documents every command and every flag it takes, and no flag it does not', async () => {
    const actual = await commandFlags()
    const documented = documentedFlags()
    expect([...actual.keys()].length).toBeGreaterThan(10)
    expect([...documented.keys()].sort()).toEqual([...actual.keys()].sort())
    for (const [command, flags] of actual) {
      expect([...(documented.get(command) ?? [])].sort(), `flags of ${command}`).toEqual([...flags].sort())
    }
  })
})

function markdownFiles(): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
      const path = join(dir, entry.name)
      if (entry.isDirectory()) return walk(path)
      return entry.name.endsWith('.md') ? [path] : []
    })
  return [join(ROOT, 'README.md'), ...walk(DOCS)]
}

describe('user docs', () => {
  it('say what the behaviour is, with no internal words (spec sections, issue numbers, bench stops)', () => {
    const internal = [/SPEC §/, /\bSPEC\b/, /\bissue /i, /\bstop [0-9]/i]
    const found = markdownFiles().flatMap((file) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .flatMap((line, index) => (internal.some((word) => word.test(line)) ? [`${relative(ROOT, file)}:${index + 1}: ${line.trim()}`] : [])),
    )
    expect(found).toEqual([])
  })

  it('link to files and headings that exist', () => {
    const slug = (heading: string) =>
      heading
        .trim()
        .toLowerCase()
        .replace(/[^\p{L}\p{N} _-]/gu, '')
        .replace(/ /g, '-')
    const anchorsOf = (file: string) => new Set([...readFileSync(file, 'utf8').matchAll(/^#+ (.+)$/gm)].map((match) => slug(match[1]!)))
    const broken: string[] = []
    for (const file of markdownFiles()) {
      const text = readFileSync(file, 'utf8').replace(/```[\s\S]*?```/g, '')
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target!)) continue
        const [path, anchor] = target!.split('#') as [string, string | undefined]
        const to = path === '' ? file : resolve(dirname(file), path)
        if (!existsSync(to)) broken.push(`${relative(ROOT, file)}: ${target}`)
        else if (anchor && to.endsWith('.md') && !anchorsOf(to).has(anchor)) broken.push(`${relative(ROOT, file)}: ${target} (no such heading)`)
      }
    }
    expect(broken).toEqual([])
  })

  it('keep the README a front door: at most 250 lines, with the set-up and test commands', () => {
    const readme = read('README.md')
    expect(readme.split('\n').length).toBeLessThanOrEqual(250)
    expect(readme).toContain('npm ci && npm start')
    expect(readme).toContain('npm test')
    expect(readme).toContain('http://127.0.0.1:3000')
  })
})
