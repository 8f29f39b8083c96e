import { defineConfig } from 'vitest/config'

/**
 * The hostile-caller suites (test/e2e/hostile-*.test.ts) measure how long another client waits while
 * an attack runs (SPEC §18: under 100 ms). Run beside other test files on a 2-core machine, that
 * measure would be the other files' load as much as flowctl's; so they run after everything else,
 * one file at a time.
 */
const HOSTILE = 'test/e2e/hostile-*.test.ts'

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Two cores: e2e files spawn real servers, so keep parallelism modest.
    maxWorkers: 2,
    projects: [
      {
        extends: true,
        // Checks that no test touches fixtures/example/.flowctl, the state of `npm start` (once: a
        // second project's setup would replace the first's marker).
        test: { name: 'suite', include: ['test/**/*.test.ts'], exclude: [HOSTILE], globalSetup: ['test/fixture-state.ts'] },
      },
      { extends: true, test: { name: 'hostile', include: [HOSTILE], fileParallelism: false, sequence: { groupOrder: 1 } } },
    ],
  },
})
