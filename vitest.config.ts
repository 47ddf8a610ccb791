import { configDefaults, defineConfig } from 'vitest/config';
import type { TestProjectInlineConfiguration } from 'vitest/config';

/**
 * The tests in tiers (vitest projects), each with the parallelism it can take. Every test file
 * belongs to exactly one (test/unit/test-projects.test.ts checks it); a new file lands in its
 * folder's tier: test/unit -> fast, test/integration, test/e2e, test/infra.
 *
 * - fast: pure unit tests, files in parallel; `npm run test:fast`, the everyday loop.
 * - slow: unit files that take seconds each (simulations, differential and fuzz checks).
 * - integration: real handlers on moto_server; each file starts its own on a free port.
 * - e2e: the CLI as a user runs it, the report pages in Chromium.
 * - infra: CDK synthesis and assertions (CPU-heavy: esbuild bundles every function).
 * - timing: files whose assertions measure real time closely (TTFT and ITL within a few ms,
 *   arrival offsets, cancel windows). They run last, one file at a time, with nothing else
 *   running, as the timing tolerances in test/support/timing.ts assume.
 *
 * `npm test` runs them all: fast, slow, integration, e2e and infra share the machine in one
 * group, then timing alone.
 */

/** Unit files that take seconds each (measured: vitest's per-test durations). */
const SLOW = [
  'test/unit/capture/control-bytes.test.ts',
  'test/unit/capture/json-check.test.ts',
  'test/unit/capture/parse-differential.test.ts',
  'test/unit/compare/simulation.test.ts',
  'test/unit/compare/stats.test.ts',
  'test/unit/pipeline/collect-scale.test.ts',
  'test/unit/pipeline/run-analysis.test.ts',
  'test/unit/plan/two-pass-local.test.ts',
  'test/unit/run/workers.test.ts',
  'test/unit/sim/stack.test.ts',
];

/**
 * Files with assertions on real time that failed on a loaded machine: TTFT and ITL within
 * a few ms, arrival offsets, a verdict on a 10-20 ms TTFT difference, what is in flight at a
 * 300 ms cancel.
 */
const TIMING = [
  'test/unit/http/mock-capacity.test.ts',
  'test/unit/http/mock-server.test.ts',
  'test/unit/http/openai-target.test.ts',
  'test/unit/run/stop-and-write.test.ts',
  'test/integration/pipeline.test.ts',
  'test/integration/sagemaker-target.test.ts',
  'test/integration/scheduled-ab.test.ts',
  'test/integration/wire-stamp.test.ts',
  'test/e2e/ab-compare.test.ts',
  'test/e2e/cli-replay.test.ts',
  'test/e2e/cross-kind-bias.test.ts',
  'test/e2e/workers.test.ts',
];

/** Workers for the tiers that share the machine; test files wait on servers and child processes. */
const SHARED_WORKERS = 3;

const tier = (name: string, include: string[], groupOrder: number, maxWorkers: number, exclude: string[] = []): TestProjectInlineConfiguration => ({
  extends: true,
  test: { name, include, exclude: [...configDefaults.exclude, ...exclude], maxWorkers, sequence: { groupOrder } },
});

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // The handlers' structured logs are evidence in AWS, noise in a test run.
    env: { POWERTOOLS_LOG_LEVEL: 'WARN' },
    projects: [
      tier('fast', ['test/unit/**/*.test.ts'], 0, SHARED_WORKERS, [...SLOW, ...TIMING]),
      tier('slow', SLOW, 0, SHARED_WORKERS),
      tier('integration', ['test/integration/**/*.test.ts'], 0, SHARED_WORKERS, TIMING),
      tier('e2e', ['test/e2e/**/*.test.ts'], 0, SHARED_WORKERS, TIMING),
      tier('infra', ['test/infra/**/*.test.ts'], 0, SHARED_WORKERS),
      tier('timing', TIMING, 1, 1),
    ],
  },
});
