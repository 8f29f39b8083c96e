import type { Command } from 'commander'
import { FlowctlError } from '../errors.js'
import { bindFilter, FilterValueError, parseFilter, parseSort, type FilterProblem } from '../model/document-filter.js'
import { openProject, projectDir, type CommandContext } from './context.js'
import type { Output } from './output.js'
import { jsonFlag, projectFlag } from './flags.js'
import { isRecord } from '../internal/is-record.js'

interface DocumentsFlags {
  project?: string
  filter?: string
  sort?: string
  limit?: string
}

const DEFAULT_LIMIT = 20
const MAX_LIMIT = 1000

export function defineDocumentsCommand(program: Command, context: CommandContext): void {
  program
    .command('documents')
    .description('list document collections with counts, or the documents of one collection (newest first)')
    .argument('[collection]', 'the collection to list documents of')
    .addOption(projectFlag())
    .option('--filter <json>', 'only documents matching this filter, e.g. \'{"status":"open"}\'')
    .option('--sort <json>', 'sort keys, e.g. \'{"qty":-1}\' (default: newest first)')
    .option('--limit <n>', `at most this many documents (default ${DEFAULT_LIMIT}, at most ${MAX_LIMIT})`)
    .addOption(jsonFlag('print JSON'))
    .action(async (collection: string | undefined, flags: DocumentsFlags) => {
      if (collection === undefined) {
        for (const flag of ['filter', 'sort', 'limit'] as const) {
          if (flags[flag] !== undefined) throw new FlowctlError('USAGE', `--${flag} needs a collection: flowctl documents COLLECTION --${flag} ...`)
        }
      }
      const query = collection === undefined ? null : readQuery(flags)
      const { project, store } = await openProject(context, projectDir(context, flags.project), { printProblems: false })
      const projectId = project.settings.projectId
      try {
        if (collection === undefined || query === null) {
          const collections = await store.documents.listCollections(projectId)
          if (context.output.json) context.output.data(collections)
          else printCollections(context.output, collections)
          return
        }
        const result = await store.documents.find(projectId, collection, { ...query, newestFirst: true })
        if (context.output.json) context.output.data({ collection, count: result.count, documents: result.documents })
        else printDocuments(context.output, collection, result, { sorted: query.sort.length > 0, filtered: flags.filter !== undefined })
      } finally {
        await store.close()
      }
    })
}

/** The filter, sort and limit flags, checked before anything is opened: a mistake is a usage error (exit 2). */
function readQuery(flags: DocumentsFlags) {
  const limit = flags.limit === undefined ? DEFAULT_LIMIT : Number(flags.limit)
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
    throw new FlowctlError('USAGE', `--limit expects a whole number from 1 to ${MAX_LIMIT}, got "${flags.limit}"`)
  }
  const filterJson = flags.filter === undefined ? {} : parseJson(flags.filter, '--filter')
  const parsedFilter = parseFilter(filterJson)
  usageProblems('--filter', parsedFilter.problems)
  let filter
  try {
    // Values are taken as written: a command line has no {{ references }} to resolve.
    filter = bindFilter(parsedFilter.filter, (value) => value)
  } catch (error) {
    if (error instanceof FilterValueError) throw new FlowctlError('USAGE', `--filter: ${error.message}`)
    throw error
  }
  const sort = flags.sort === undefined ? { sort: [], problems: [] } : parseSort(parseJson(flags.sort, '--sort'))
  usageProblems('--sort', sort.problems)
  return { filter, sort: sort.sort, limit }
}

function parseJson(text: string, flag: string): unknown {
  try {
    return JSON.parse(text) as unknown
  } catch (error) {
    throw new FlowctlError('USAGE', `${flag} is not valid JSON (${(error as Error).message}); write it like '{"status":"open"}'`)
  }
}

function usageProblems(flag: string, problems: FilterProblem[]): void {
  if (problems.length === 0) return
  const lines = problems.map((p) => `${flag}${p.path.length ? ` at ${p.path.join('.')}` : ''}: ${p.message}`)
  throw new FlowctlError('USAGE', lines.join('\n'))
}

function printCollections(output: Output, collections: { collection: string; count: number }[]): void {
  if (collections.length === 0) {
    output.line('no documents yet (insert nodes write them)')
    return
  }
  const width = Math.max(...collections.map((c) => c.collection.length))
  for (const { collection, count } of collections) output.line(`${collection.padEnd(width)}  ${String(count).padStart(7)} document${count === 1 ? '' : 's'}`)
}

function printDocuments(
  output: Output,
  collection: string,
  result: { documents: unknown[]; count: number },
  how: { sorted: boolean; filtered: boolean },
): void {
  const shown = result.documents.length
  if (result.count === 0) {
    output.line(how.filtered ? `no documents in ${collection} match the filter` : `no documents in ${collection}`)
    return
  }
  for (const document of result.documents) {
    const { _id, ...rest } = isRecord(document) ? document : { _id: undefined, value: document }
    output.line(`${output.color.dim(String(_id ?? '-'))}  ${JSON.stringify(rest)}`)
  }
  output.line(
    output.color.dim(
      `${shown} of ${result.count} document${result.count === 1 ? '' : 's'} in ${collection}, ${how.sorted ? 'by --sort, then newest first' : 'newest first'}${shown < result.count ? ' (use --limit for more)' : ''}`,
    ),
  )
}
