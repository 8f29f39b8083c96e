// Reads the text of a users file, reporting every problem with file:line:column.
import { LineCounter, parseDocument, type Document } from 'yaml'
import { FlowctlError } from '../errors.js'
import { isRecord } from '../internal/is-record.js'
import { nodeStart, positionFromCounter, yamlErrorAt } from '../internal/yaml-position.js'
import type { Problem } from '../model/project.js'
import { isRole, PROJECT_ID_PATTERN, USER_NAME_PATTERN, type UserEntry } from './types.js'

const HASH_PATTERN = /^[0-9a-f]{64}$/

export function parseUsersText(text: string, file: string): UserEntry[] {
  const lineCounter = new LineCounter()
  const doc = parseDocument(text, { lineCounter, uniqueKeys: true })
  const problems: Problem[] = []
  const report = (path: (string | number)[], message: string) => problems.push({ file, ...positionOf(doc, lineCounter, path), message, severity: 'error' })

  for (const error of doc.errors) problems.push({ file, ...yamlErrorAt(error), severity: 'error' })
  if (problems.length > 0) throw invalid(file, problems)

  const data: unknown = doc.toJS()
  if (data === null || data === undefined) return [] // an empty file: no users
  if (!isRecord(data) || !('users' in data)) throw invalid(file, [{ file, line: 1, column: 1, message: 'expected a "users:" list', severity: 'error' }])
  if (data.users === null) return []
  if (!Array.isArray(data.users)) {
    report(['users'], '"users" must be a list')
    throw invalid(file, problems)
  }

  const users: UserEntry[] = []
  const names = new Set<string>()
  data.users.forEach((entry: unknown, index) => {
    const at = (...rest: string[]) => ['users', index, ...rest]
    if (!isRecord(entry)) return report(at(), 'each user must be a mapping with name, tokenHash, grants and createdAt')
    const { name, tokenHash, grants = {}, createdAt } = entry
    let ok = true
    const fail = (path: (string | number)[], message: string) => {
      ok = false
      report(path, message)
    }
    if (typeof name !== 'string' || !USER_NAME_PATTERN.test(name)) fail(at('name'), 'a user name may hold only letters, digits, ".", "_" and "-"')
    else if (names.has(name)) fail(at('name'), `the user name "${name}" appears twice`)
    else names.add(name)
    if (typeof tokenHash !== 'string' || !HASH_PATTERN.test(tokenHash)) fail(at('tokenHash'), 'tokenHash must be a SHA-256 hash in lower-case hex')
    if (typeof createdAt !== 'string') fail(at('createdAt'), 'createdAt must be an ISO 8601 time')
    if (!isRecord(grants)) fail(at('grants'), 'grants must map project ids to viewer, editor or owner')
    else {
      for (const [projectId, role] of Object.entries(grants)) {
        if (!PROJECT_ID_PATTERN.test(projectId)) fail(at('grants', projectId), `"${projectId}" is not a project id`)
        if (!isRole(role)) fail(at('grants', projectId), `the role of "${projectId}" must be viewer, editor or owner`)
      }
    }
    if (ok) users.push({ name: name as string, tokenHash: tokenHash as string, grants: grants as UserEntry['grants'], createdAt: createdAt as string })
  })
  if (problems.length > 0) throw invalid(file, problems)
  return users
}

function invalid(file: string, problems: Problem[]): FlowctlError {
  return new FlowctlError('USERS_FILE_INVALID', `the users file ${file} is invalid`, { problems })
}

/** Where the node at `path` starts; its nearest existing parent when it is missing. */
function positionOf(doc: Document, lineCounter: LineCounter, path: (string | number)[]): { line: number; column: number } {
  for (let length = path.length; length >= 0; length--) {
    const node = length === 0 ? doc.contents : doc.getIn(path.slice(0, length), true)
    const start = nodeStart(node)
    if (start !== undefined) return positionFromCounter(lineCounter, start)
  }
  return { line: 1, column: 1 }
}
