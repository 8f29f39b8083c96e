// docs/tutorial.md, run as a reader would: every shell command in order, in a fresh temp folder,
// against the repository's bin/flowctl.js (`flowctl` and `npx flowctl` map to it), with `serve` started
// on a port of its own where the tutorial starts it (the text says 3000; commands after it are sent to
// the real port), and each command's output checked against the `text` block shown under it.
import { execa } from 'execa'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { dirname, join, resolve } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { BIN, ROOT, cleanupTempDirs, makeTempDir, startServe, type StartedServe } from '../helpers.js'
import { matchOutput, tutorialSteps, type Command, type ShellStep } from './tutorial-steps.js'

afterAll(cleanupTempDirs)

const TUTORIAL = join(ROOT, 'docs', 'tutorial.md')
const SHOWN_BASE = 'http://127.0.0.1:3000'

interface Session {
  cwd: string
  serve: StartedServe | null
  captured: Map<string, string>
}

/** The command as the test runs it: placeholders filled in, flowctl the repository's, the real port. */
function prepare(text: string, session: Session): string {
  let command = text.replace(/<([A-Za-z]+)>/g, (whole, name: string) => session.captured.get(name) ?? whole)
  if (session.serve) command = command.replaceAll(SHOWN_BASE, session.serve.base)
  return command.replace(/(^|[\s;&|(])(?:npx )?flowctl(?=\s|$)/g, `$1node ${JSON.stringify(BIN)}`)
}

/** Runs one command; resolves to what it printed (stdout, then stderr), with the real port shown as 3000. */
async function runCommand(command: Command, session: Session, where: string): Promise<string> {
  const cd = /^cd\s+(\S+)$/.exec(command.text)
  if (cd) {
    session.cwd = resolve(session.cwd, cd[1]!)
    return ''
  }
  const serve = /^(?:npx )?flowctl serve(?:\s+(.*))?$/.exec(command.text)
  if (serve) {
    expect(session.serve, `${where}: serve is started once`).toBeNull()
    session.serve = await startServe(serve[1] ? serve[1].split(/\s+/) : [], { cwd: session.cwd })
    return session.serve.stdout().replaceAll(session.serve.base, SHOWN_BASE)
  }
  const result = await execa('bash', ['-c', prepare(command.text, session)], {
    cwd: session.cwd,
    env: { NO_COLOR: '1' },
    reject: false,
    timeout: 60_000,
  })
  const output = `${String(result.stdout)}\n${String(result.stderr)}`
  expect(result.exitCode, `${where}: exit code of \`${command.text}\`; it printed:\n${output}`).toBe(command.exitCode)
  return session.serve ? output.replaceAll(session.serve.base, SHOWN_BASE) : output
}

async function runShellStep(step: ShellStep, session: Session): Promise<void> {
  const where = `docs/tutorial.md:${step.line}`
  const outputs: string[] = []
  for (const command of step.commands) outputs.push(await runCommand(command, session, where))
  if (!step.expected) return
  const output = outputs.join('\n')
  const missing = matchOutput(step.expected, output, session.captured)
  expect(missing, `${where}: lines shown in the tutorial that the commands did not print; they printed:\n${output}`).toEqual([])
}

describe('docs/tutorial.md', () => {
  it('goes from init through a validated POST with auth, documents and flow tests to serve and a replay', async () => {
    const steps = tutorialSteps(await readFile(TUTORIAL, 'utf8'))
    const commands = steps.flatMap((step) => (step.kind === 'shell' ? step.commands.map((command) => command.text) : []))
    // The path the tutorial promises, in this order.
    const milestones = [/^flowctl init /, /^flowctl validate$/, /^flowctl documents /, /^flowctl test/, /^flowctl serve/, /^curl /, /^flowctl run --replay /]
    let from = 0
    for (const milestone of milestones) {
      const at = commands.findIndex((command, index) => index >= from && milestone.test(command))
      expect(at, `a command matching ${String(milestone)} after command ${from}`).toBeGreaterThanOrEqual(0)
      from = at + 1
    }
    expect(steps.filter((step) => step.kind === 'file').length).toBeGreaterThanOrEqual(3)

    const session: Session = { cwd: await makeTempDir('flowctl-tutorial-'), serve: null, captured: new Map() }
    try {
      for (const step of steps) {
        if (step.kind === 'file') {
          const path = resolve(session.cwd, step.path)
          await mkdir(dirname(path), { recursive: true })
          await writeFile(path, step.content)
        } else {
          await runShellStep(step, session)
        }
      }
      expect(session.serve, 'the tutorial starts serve').not.toBeNull()
      expect(session.captured.get('runId'), 'the run id read from history and replayed').toMatch(/^[0-9a-z]{10,}$/)
    } finally {
      if (session.serve) {
        session.serve.child.kill('SIGTERM')
        await session.serve.child.catch(() => undefined)
      }
    }
  }, 180_000)
})

describe('how the tutorial is read', () => {
  it('takes files, commands with their exit codes, and the output shown under them', () => {
    const steps = tutorialSteps(
      ['```yaml', '# file: flows/a.yaml', 'name: A', '```', '```sh', 'flowctl run a \\', '  --json   # exit 1', 'cd x', '```', '```text', 'ok', '```'].join(
        '\n',
      ),
    )
    expect(steps).toEqual([
      { kind: 'file', path: 'flows/a.yaml', content: '# file: flows/a.yaml\nname: A\n', line: 1 },
      {
        kind: 'shell',
        commands: [
          { text: 'flowctl run a   --json', exitCode: 1 },
          { text: 'cd x', exitCode: 0 },
        ],
        expected: ['ok'],
        line: 5,
      },
    ])
  })

  it('matches shown lines in order, with … as any text and <name> captured once, then required', () => {
    const captured = new Map<string, string>()
    const output = 'STARTED  RUN ID\n2026-01-01  0abc  create-order  POST\n201  run 9x, a replay of 0abc (create-order)'
    expect(matchOutput(['…  <runId>  create-order  POST', '201  run …, a replay of <runId> (create-order)'], output, captured)).toEqual([])
    expect(captured.get('runId')).toBe('0abc')
    expect(matchOutput(['a replay of <runId>'], 'a replay of 0xyz', captured)).toEqual(['a replay of <runId>'])
    expect(matchOutput(['second', 'first'], 'first\nsecond', new Map())).toEqual(['first'])
    expect(matchOutput(['body.qty: 2'], 'body.qty: 20x', new Map())).toEqual([])
    expect(matchOutput(['(1 ms)'], '(12 ms)', new Map())).toEqual(['(1 ms)'])
  })
})
