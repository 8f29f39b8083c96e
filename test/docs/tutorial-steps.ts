// Reads docs/tutorial.md into the steps a reader follows: files to write (a fenced block whose first
// line is `# file: PATH`), shell commands (fenced `sh` blocks, one command per line, `\` joins lines,
// a trailing `# exit N` gives the exit code expected, 0 otherwise), and what they print (a fenced
// `text` block right after an `sh` block).

export interface FileStep {
  kind: 'file'
  path: string
  content: string
  line: number
}

export interface Command {
  text: string
  exitCode: number
}

export interface ShellStep {
  kind: 'shell'
  commands: Command[]
  /** The lines of the `text` block that follows, if any: each must match a line of the output, in order. */
  expected: string[] | null
  line: number
}

export type TutorialStep = FileStep | ShellStep

interface Fence {
  info: string
  body: string[]
  line: number
}

function fences(markdown: string): Fence[] {
  const found: Fence[] = []
  const lines = markdown.split('\n')
  for (let index = 0; index < lines.length; index++) {
    const open = /^```(\S*)/.exec(lines[index]!)
    if (!open) continue
    const body: string[] = []
    let end = index + 1
    while (end < lines.length && !lines[end]!.startsWith('```')) body.push(lines[end++]!)
    found.push({ info: open[1]!, body, line: index + 1 })
    index = end
  }
  return found
}

function commandsOf(body: string[]): Command[] {
  const joined: string[] = []
  let pending = ''
  for (const raw of body) {
    if (raw.endsWith('\\')) {
      pending += raw.slice(0, -1)
      continue
    }
    joined.push(pending + raw)
    pending = ''
  }
  return joined
    .map((text) => text.trim())
    .filter((text) => text !== '' && !text.startsWith('#'))
    .map((text) => {
      const exit = /\s+#\s*exit (\d+)\s*$/.exec(text)
      return { text: exit ? text.slice(0, exit.index) : text, exitCode: exit ? Number(exit[1]) : 0 }
    })
}

export function tutorialSteps(markdown: string): TutorialStep[] {
  const steps: TutorialStep[] = []
  for (const fence of fences(markdown)) {
    const file = /^#\s*file:\s*(\S+)\s*$/.exec(fence.body[0] ?? '')
    const last = steps.at(-1)
    if (file) steps.push({ kind: 'file', path: file[1]!, content: `${fence.body.join('\n')}\n`, line: fence.line })
    else if (fence.info === 'sh') steps.push({ kind: 'shell', commands: commandsOf(fence.body), expected: null, line: fence.line })
    else if (fence.info === 'text' && last?.kind === 'shell' && last.expected === null) last.expected = fence.body.filter((line) => line.trim() !== '')
  }
  return steps
}

/**
 * An expected line as a pattern: `…` is any text, `<name>` a word (captured the first time, then the
 * captured word itself), runs of spaces any run of spaces; everything else literal.
 */
export function linePattern(expected: string, captured: ReadonlyMap<string, string>): { pattern: RegExp; names: string[] } {
  const names: string[] = []
  const parts = expected
    .trim()
    .split(/(…|<[A-Za-z]+>|\s+)/)
    .filter((part) => part !== '')
  const source = parts
    .map((part) => {
      if (part === '…') return '.*'
      if (/^\s+$/.test(part)) return '\\s+'
      const name = /^<([A-Za-z]+)>$/.exec(part)?.[1]
      if (name && captured.has(name)) return escape(captured.get(name)!)
      if (name && !names.includes(name)) {
        names.push(name)
        return '(\\S+)'
      }
      return escape(part)
    })
    .join('')
  return { pattern: new RegExp(source), names }
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

/**
 * Checks that every expected line matches an output line, in order, and records the words captured
 * by `<name>`. Returns the expected lines that found no match.
 */
export function matchOutput(expected: string[], output: string, captured: Map<string, string>): string[] {
  const lines = output.split('\n')
  const missing: string[] = []
  let from = 0
  for (const line of expected) {
    const { pattern, names } = linePattern(line, captured)
    const at = lines.findIndex((candidate, index) => index >= from && pattern.test(candidate))
    if (at < 0) {
      missing.push(line)
      continue
    }
    const match = pattern.exec(lines[at]!)!
    names.forEach((name, index) => captured.set(name, match[index + 1]!))
    from = at + 1
  }
  return missing
}
