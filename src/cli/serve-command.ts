import type { Command } from 'commander'
import type { CommandContext } from './context.js'
import { collect } from './context.js'

export function defineServeCommand(program: Command, context: CommandContext): void {
  program
    .command('serve')
    .description('serve the Run API, OpenAPI documents, the scheduler tick and /status, reloading on change')
    .argument('[dirs...]', 'project folders (default: --project or the current folder)')
    .option('--project <dir>', 'project folder (repeatable)', collect)
    .option('--port <port>', 'port to listen on (default: $PORT or 3000)')
    .option('--host <host>', 'host to listen on (default 127.0.0.1)')
    .option(
      '--trust-proxy [hops|addresses]',
      'behind a proxy: trust N hops of X-Forwarded-For (default 1) or only the listed proxy addresses/CIDR ranges (comma-separated)',
    )
    .option('--allowed-hosts <names>', 'comma-separated Host names that count as this machine for loopback privileges, besides localhost/127.0.0.1/[::1]')
    .option('--max-connections <n>', 'sockets open at once in total, beside the cap of 256 per client (default 10000; 0 = no cap)')
    .option('--no-watch', 'do not reload flows when their files change')
    .option('--cron', 'tick the scheduler once a minute by itself')
    .option('--users <file>', 'users file (default .flowctl/users.yaml of the current folder)')
    .option('--quiet', 'no request log')
    .option('--json', 'machine-readable startup output')
    .action(async (dirs: string[], options: Record<string, unknown>) => {
      const { resolve } = await import('node:path')
      const { serveCommand } = await import('./serve.js')
      const { FlowctlError } = await import('../errors.js')
      const projects = [...(dirs ?? []), ...((options.project as string[] | undefined) ?? [])]
      const { parseTrustProxy } = await import('../http/trust-proxy.js')
      const trustProxy = parseTrustProxy(options.trustProxy)
      const port = options.port === undefined ? undefined : Number(options.port)
      if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65535)) {
        throw new FlowctlError('USAGE', `--port expects a port number, got "${String(options.port)}"`)
      }
      const maxConnections = options.maxConnections === undefined ? undefined : wholeNumber(options.maxConnections)
      if (maxConnections === null) {
        throw new FlowctlError('USAGE', `--max-connections expects a whole number of sockets (0 = no cap), got "${String(options.maxConnections)}"`)
      }
      await serveCommand(projects.length ? projects.map((d) => resolve(context.cwd, d)) : [context.cwd], {
        port,
        host: options.host as string | undefined,
        trustProxy,
        ...(maxConnections === undefined ? {} : { maxConnections }),
        allowedHosts: typeof options.allowedHosts === 'string' ? parseAllowedHosts(options.allowedHosts) : undefined,
        watch: options.watch !== false,
        quiet: Boolean(options.quiet),
        cron: Boolean(options.cron),
        users: options.users ? resolve(context.cwd, options.users as string) : undefined,
        json: Boolean(options.json),
        cwd: context.cwd,
        env: context.env,
        stdout: context.streams.stdout,
        stderr: context.streams.stderr,
        ...(context.signal ? { signal: context.signal } : {}),
      })
    })
}

/** `--allowed-hosts a.local,b.local:8080` → lower-case names without ports (the Host check ignores ports). */
function parseAllowedHosts(value: string): string[] {
  return value
    .split(',')
    .map((name) => name.trim().toLowerCase().replace(/:\d+$/, ''))
    .filter(Boolean)
}

/** `--max-connections N`: a whole number (0 = no cap), or null when the text is not one. */
function wholeNumber(value: unknown): number | null {
  const text = String(value).trim()
  return /^\d{1,9}$/.test(text) ? Number(text) : null
}
