import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Checks that no test touches fixtures/example/.flowctl, the state of `npm start`.
    globalSetup: ['test/fixture-state.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Two cores: e2e files spawn real servers, so keep parallelism modest.
    maxWorkers: 2,
  },
})
