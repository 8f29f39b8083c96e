// An ora spinner on a TTY; nothing at all when output is piped or JSON.
import type { Output } from './output.js'

export async function withSpinner<T>(output: Output, text: string, work: () => Promise<T>): Promise<T> {
  // A terminal reporting 0 columns (`script` without a real terminal) makes ora erase lines forever.
  if (output.json || !process.stderr.isTTY || !process.stderr.columns || 'CI' in process.env) return work()
  const { default: ora } = await import('ora')
  const spinner = ora({ text, stream: process.stderr }).start()
  try {
    return await work()
  } finally {
    spinner.stop()
  }
}
