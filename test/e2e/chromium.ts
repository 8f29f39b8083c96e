// Chromium for the browser e2e tests (playwright-core driving a system Chromium): where to find it,
// the notice a suite prints when there is none, and one launch with the flags every suite used.
// FLOWCTL_TEST_CHROMIUM, else Debian's /usr/bin/chromium (.ci/run installs it). playwright-core is
// imported only on launch, so machines without Chromium never load it.
import { existsSync } from 'node:fs'
import type { Browser } from 'playwright-core'

export const CHROMIUM = [process.env.FLOWCTL_TEST_CHROMIUM, '/usr/bin/chromium', '/usr/bin/chromium-browser'].find((path) => path && existsSync(path))

/** Prints `[flowctl] <what>: skipped — no Chromium (…)` when no Chromium was found. */
export function noChromiumNotice(what: string): void {
  if (!CHROMIUM) console.warn(`[flowctl] ${what}: skipped — no Chromium (apt-get install chromium, or set FLOWCTL_TEST_CHROMIUM=/path/to/chrome)`)
}

/** Launches CHROMIUM; `mapRemoteTest` resolves `remote.test` to 127.0.0.1 (a loopback socket, not a loopback Host). */
export async function launchChromium(options: { mapRemoteTest?: boolean } = {}): Promise<Browser> {
  const { chromium } = await import('playwright-core')
  const args = ['--no-sandbox', '--disable-dev-shm-usage']
  if (options.mapRemoteTest) args.push('--host-resolver-rules=MAP remote.test 127.0.0.1')
  return chromium.launch({ executablePath: CHROMIUM, args })
}
