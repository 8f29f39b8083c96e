// `run` and `tick` on a real terminal (tmux): a terminal that reports 0 columns once made ora clear
// lines forever. Both commands must finish on 0 and 80 columns, and NO_COLOR output must hold no
// escape codes. Skips with a notice when tmux is absent (.ci/run installs it).
import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BIN, cleanupTempDirs, copyFixture, eventually, makeTempDir } from '../helpers.js'

const hasTmux = spawnSync('tmux', ['-V']).status === 0
if (!hasTmux) console.warn('notice: tmux not found; the terminal e2e suite is skipped (apt-get install -y tmux)')

const socket = `flowctl-test-${process.pid}`
const tmux = (...args: string[]) => execFileSync('tmux', ['-L', socket, ...args], { encoding: 'utf8' })

afterAll(async () => {
  if (hasTmux) spawnSync('tmux', ['-L', socket, 'kill-server'])
  await cleanupTempDirs()
})

describe.skipIf(!hasTmux)('run and tick on a terminal', () => {
  let project: string
  let logs: string
  beforeAll(async () => {
    project = await copyFixture('example')
    logs = await makeTempDir('flowctl-tmux-')
  })

  /** Runs `flowctl <args>` in a fresh tmux window of `columns` columns; resolves to its exit code and raw output. */
  async function onTerminal(name: string, columns: number, args: string, env: string) {
    const rawFile = join(logs, `${name}.raw`)
    const exitFile = join(logs, `${name}.exit`)
    // CI is unset so the spinner would run; stty sets the width the program sees.
    const script = `stty cols ${columns}; env -u CI ${env} node ${BIN} ${args}; echo $? > ${exitFile}`
    tmux('new-session', '-d', '-s', name, '-x', '100', '-y', '30', 'sh')
    tmux('pipe-pane', '-t', name, '-o', `cat >> ${rawFile}`)
    tmux('send-keys', '-t', name, script, 'Enter')
    const shellPid = Number(tmux('list-panes', '-t', name, '-F', '#{pane_pid}').trim())
    try {
      await eventually(async () => existsSync(exitFile) && readFileSync(exitFile, 'utf8').trim() !== '', 30_000, 100)
    } finally {
      // A hung command ignores the hang-up of kill-session: end the shell's children first.
      spawnSync('pkill', ['-KILL', '-P', String(shellPid)])
      tmux('kill-session', '-t', name)
    }
    const raw = readFileSync(rawFile, 'utf8')
    return { exitCode: Number(readFileSync(exitFile, 'utf8').trim()), output: raw.slice(raw.indexOf(`${BIN}`)) }
  }

  const body = `--body '{"items":[{"sku":"X","price":2.5}]}'`
  for (const columns of [0, 80]) {
    it(`run finishes on a ${columns}-column terminal`, async () => {
      const result = await onTerminal(`run${columns}`, columns, `run quote --project ${project} ${body}`, 'TERM=xterm-256color')
      expect(result.exitCode).toBe(0)
      expect(result.output).toContain('200')
      expect(result.output.length).toBeLessThan(100_000)
    }, 40_000)

    it(`tick finishes on a ${columns}-column terminal`, async () => {
      const result = await onTerminal(`tick${columns}`, columns, `tick --project ${project}`, 'TERM=xterm-256color')
      expect(result.exitCode).toBe(0)
      expect(result.output).toContain('tick ')
      expect(result.output.length).toBeLessThan(100_000)
    }, 40_000)

    it(`NO_COLOR output of run on ${columns} columns holds no escape codes`, async () => {
      const result = await onTerminal(`nocolor${columns}`, columns, `run quote --project ${project} ${body}`, 'NO_COLOR=1 TERM=xterm-256color')
      expect(result.exitCode).toBe(0)
      // What the program wrote after the echoed command line; the shell's own prompt has no escapes (sh).
      const afterCommand = result.output.slice(result.output.indexOf('\n'))
      expect(afterCommand).toContain('200')
      expect(afterCommand).not.toContain('\u001b')
    }, 40_000)
  }
})
