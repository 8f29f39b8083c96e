// Secrets: the project's dotenv file, overridden by FLOWCTL_SECRET_<NAME> environment variables.
// Values are only ever substituted in memory; everything written out goes through `maskSecrets`
// (src/language/secrets.ts, with the other pure functions over secret references).
import { readFile } from 'node:fs/promises'
import type { Secrets } from '../model/project.js'

const ENV_PREFIX = 'FLOWCTL_SECRET_'

/** Parses dotenv text: `NAME=value`, `export NAME=value`, quotes, `#` comments. */
function parseDotenv(text: string): Map<string, string> {
  const values = new Map<string, string>()
  for (const rawLine of text.split(/\r?\n/)) {
    const line = rawLine.trim()
    if (line === '' || line.startsWith('#')) continue
    const match = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/.exec(line)
    if (!match) continue
    let value = match[2] ?? ''
    const quote = value[0]
    if ((quote === '"' || quote === "'") && value.length >= 2 && value.endsWith(quote)) {
      value = value.slice(1, -1)
      if (quote === '"') value = value.replace(/\\n/g, '\n').replace(/\\"/g, '"')
    } else {
      value = value.replace(/\s+#.*$/, '')
    }
    values.set(match[1] as string, value)
  }
  return values
}

/** Reads the dotenv file (a missing file is no secrets) and applies FLOWCTL_SECRET_* overrides. */
export async function loadSecrets(file: string, env: NodeJS.ProcessEnv = process.env): Promise<Secrets> {
  let text = ''
  try {
    text = await readFile(file, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
  }
  const secrets = parseDotenv(text)
  for (const [name, value] of Object.entries(env)) {
    if (name.startsWith(ENV_PREFIX) && value !== undefined) secrets.set(name.slice(ENV_PREFIX.length), value)
  }
  return secrets
}
