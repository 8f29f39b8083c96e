// Finding and checking a project's test files: tests/**/*.test.yaml.
import { readdir, readFile } from 'node:fs/promises'
import { join, relative, sep } from 'node:path'
import type { Problem, Project } from '../model/project.js'
import { sortProblems } from '../project/yaml-source.js'
import { checkTestFile, type TestFile } from './test-file.js'

const TESTS_FOLDER = 'tests'
const TEST_FILE_SUFFIX = '.test.yaml'

/** Test files under tests/, relative to the project folder, sorted; empty when there is no tests/. */
async function listTestFiles(projectDir: string): Promise<string[]> {
  const root = join(projectDir, TESTS_FOLDER)
  let entries
  try {
    entries = await readdir(root, { withFileTypes: true, recursive: true })
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT' || code === 'ENOTDIR') return []
    throw error
  }
  return entries
    .filter((entry) => entry.isFile() && entry.name.endsWith(TEST_FILE_SUFFIX))
    .map((entry) => relative(projectDir, join(entry.parentPath, entry.name)).split(sep).join('/'))
    .sort()
}

export interface LoadedTests {
  files: TestFile[]
  /** Every problem of every test file, sorted. */
  problems: Problem[]
}

/** Reads and checks every test file (of one flow, with `flow`). */
export async function loadTests(project: Project, options: { flow?: string } = {}): Promise<LoadedTests> {
  const names = await listTestFiles(project.dir)
  const results = await Promise.all(names.map(async (file) => checkTestFile(file, await readFile(join(project.dir, file), 'utf8'), project)))
  // A file too broken to say which flow it tests is reported with every flow.
  const chosen = options.flow === undefined ? results : results.filter((result) => result.flowSlug === options.flow || result.flowSlug === null)
  return {
    files: chosen.flatMap((result) => (result.testFile ? [result.testFile] : [])),
    problems: sortProblems(chosen.flatMap((result) => result.problems)),
  }
}
