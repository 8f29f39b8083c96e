// An ora spinner on a real terminal; nothing at all when output is piped or JSON, under NO_COLOR or
// TERM=dumb (the spinner is escape codes: cursor moves as well as colour), or on a terminal that
// reports 0 columns (ora divides by the width and then clears lines forever).
import type { Output } from './output.js'

function spinnerAllowed(output: Output, stream: { isTTY?: boolean; columns?: number }, env: NodeJS.ProcessEnv): boolean {
  if (output.json || !stream.isTTY || 'CI' in env || 'NO_COLOR' in env || env.TERM === 'dumb') return false
  return typeof stream.columns === 'number' && stream.columns > 0
}

export async function withSpinner<T>(output: Output, text: string, work: () => Promise<T>): Promise<T> {
  if (!spinnerAllowed(output, process.stderr, process.env)) return work()
  const { default: ora } = await import('ora')
  // discardStdin: false keeps Ctrl-C working (ora would otherwise swallow stdin while it spins).
  const spinner = ora({ text, stream: process.stderr, discardStdin: false }).start()
  try {
    return await work()
  } finally {
    spinner.stop()
  }
}
