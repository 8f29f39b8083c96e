// Node-RED 4.1.15 as the peer: installed at run time into bench/.tmp/node-red (never committed),
// with a settings.js and a flows.json equivalent to the bench order flow.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { TMP } from './paths.js'
import { freePort, startChild, waitForHttp } from './proc.js'

export const NODE_RED_VERSION = '4.1.15'
const DIR = join(TMP, 'node-red')

/** npm install node-red@4.1.15 into bench/.tmp/node-red unless that version is already there. */
export function installNodeRed(log = console.log) {
  const pkgFile = join(DIR, 'node_modules', 'node-red', 'package.json')
  if (existsSync(pkgFile) && JSON.parse(readFileSync(pkgFile, 'utf8')).version === NODE_RED_VERSION) return DIR
  mkdirSync(DIR, { recursive: true })
  // Its own package.json, so npm does not walk up to flowctl's.
  writeFileSync(join(DIR, 'package.json'), JSON.stringify({ name: 'flowctl-bench-node-red', private: true }) + '\n')
  log(`  installing node-red@${NODE_RED_VERSION} into ${DIR} …`)
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
  const result = spawnSync(npm, ['install', '--no-audit', '--no-fund', '--prefix', DIR, `node-red@${NODE_RED_VERSION}`], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  if (result.status !== 0) throw new Error(`npm install node-red failed (${result.status}): ${result.stderr.slice(-1000)}`)
  return DIR
}

/** http in (POST /order) → switch (qty > 10) → change (JSONata body, statusCode 201) → http response. */
export function orderFlows() {
  const body = '{"id": $formatBase($floor($random() * 281474976710656), 16), "ok": true}'
  return [
    { id: 'tab', type: 'tab', label: 'bench', disabled: false, info: '' },
    { id: 'in', type: 'http in', z: 'tab', name: 'order', url: '/order', method: 'post', upload: false, swaggerDoc: '', x: 100, y: 100, wires: [['check']] },
    {
      id: 'check',
      type: 'switch',
      z: 'tab',
      name: 'big order',
      property: 'payload.qty',
      propertyType: 'msg',
      rules: [{ t: 'gt', v: '10', vt: 'num' }, { t: 'else' }],
      checkall: 'true',
      repair: false,
      outputs: 2,
      x: 250,
      y: 100,
      wires: [['result'], ['result']],
    },
    {
      id: 'result',
      type: 'change',
      z: 'tab',
      name: 'result',
      rules: [
        { t: 'set', p: 'payload', pt: 'msg', to: body, tot: 'jsonata' },
        { t: 'set', p: 'statusCode', pt: 'msg', to: '201', tot: 'num' },
      ],
      action: '',
      property: '',
      from: '',
      to: '',
      reg: false,
      x: 400,
      y: 100,
      wires: [['out']],
    },
    { id: 'out', type: 'http response', z: 'tab', name: '', statusCode: '', headers: {}, x: 550, y: 100, wires: [] },
  ]
}

/** Starts Node-RED headless on a free port; resolves when POST /order answers 201. */
export async function startNodeRed() {
  const userDir = join(DIR, 'user')
  mkdirSync(userDir, { recursive: true })
  const port = await freePort()
  writeFileSync(join(userDir, 'flows.json'), JSON.stringify(orderFlows(), null, 2))
  writeFileSync(
    join(userDir, 'settings.js'),
    `module.exports = ${JSON.stringify(
      {
        uiPort: port,
        uiHost: '127.0.0.1',
        httpAdminRoot: false,
        credentialSecret: 'flowctl-bench',
        flowFile: 'flows.json',
        userDir,
        logging: { console: { level: 'warn', metrics: false, audit: false } },
        diagnostics: { enabled: false, ui: false },
        telemetry: { enabled: false },
        externalModules: { autoInstall: false },
      },
      null,
      2,
    )}\n`,
  )
  const child = startChild(
    process.execPath,
    [join(DIR, 'node_modules', 'node-red', 'red.js'), '--settings', join(userDir, 'settings.js'), '--userDir', userDir],
    { cwd: DIR, name: 'node-red' },
  )
  const url = `http://127.0.0.1:${port}`
  await waitForHttp(url + '/order', {
    child,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"sku":"A-1","qty":42}',
    accept: (status) => status === 201,
  })
  return { child, port, url }
}
