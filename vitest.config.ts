import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // One file at a time: the end-to-end timing checks (TTFT within 2 ms) measure real
    // processes on a 2-core machine and must not share it with other test files.
    fileParallelism: false,
    // The handlers' structured logs are evidence in AWS, noise in a test run.
    env: { POWERTOOLS_LOG_LEVEL: 'WARN' },
  },
});
