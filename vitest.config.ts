import { configDefaults, defineConfig } from 'vitest/config';

/**
 * Two projects (docs/testing.md):
 * - `main`: every test whose verdict does not depend on how fast the machine is; `npm test`
 *   runs it (then the type check and lint), files in parallel.
 * - `timing`: the files whose assertions measure real time (TTFT and ITL within a few ms,
 *   arrival offsets, verdicts on a few ms of difference, what is in flight at a cancel);
 *   `npm run test:timing` runs them one file at a time, on a machine doing nothing else.
 * A test of a timing file that measures no time belongs in a file of its own in `main`.
 * test/unit/test-projects.test.ts checks that every test file is in exactly one project.
 */
export const TIMING = [
  'test/unit/fire/fire-loop-real-clock.test.ts',
  'test/unit/handlers/fire-warm-up.test.ts',
  'test/unit/http/mock-capacity.test.ts',
  'test/unit/http/mock-server.test.ts',
  'test/unit/http/openai-target.test.ts',
  'test/unit/run/stop-and-write.test.ts',
  'test/unit/runtime/cpu-use-meter.test.ts',
  'test/integration/catch-up.test.ts',
  'test/integration/fire-warm-up.test.ts',
  'test/integration/pipeline.test.ts',
  'test/integration/sagemaker-target.test.ts',
  'test/integration/scheduled-ab.test.ts',
  'test/integration/wire-stamp.test.ts',
  'test/e2e/ab-compare.test.ts',
  'test/e2e/capacity-guards.test.ts',
  'test/e2e/capacity-search.test.ts',
  'test/e2e/cli-replay.test.ts',
  'test/e2e/cross-kind-bias.test.ts',
  'test/e2e/signals.test.ts',
  'test/e2e/wait-coarse.test.ts',
];

/**
 * Made once per run for the files that use them (global setups): the built CLI, the moto
 * zygote that forks a moto_server per file, the stack-template server, the shared Chromium.
 */
const GLOBAL_SETUP = [
  'test/support/cli-bundle.ts',
  'test/support/moto-zygote.ts',
  'test/support/iam/stack-template-server.ts',
  'test/support/browser-server.ts',
];

/**
 * Node parses the certificates NODE_EXTRA_CA_CERTS names at every process start; nothing the
 * tests start opens a TLS connection, and they start hundreds of Node processes.
 */
delete process.env.NODE_EXTRA_CA_CERTS;

export default defineConfig({
  test: {
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    globalSetup: GLOBAL_SETUP,
    // The handlers' logs and metrics are evidence in AWS and noise here (the tests that read
    // the metrics turn them on); in-process synthesis skips aws-cdk-lib's built-in template
    // validation, as bin/app.ts does (cfn-lint checks the template in test/infra/synth.test.ts).
    env: { POWERTOOLS_LOG_LEVEL: 'WARN', POWERTOOLS_METRICS_DISABLED: 'true', CDK_VALIDATION: 'false' },
    projects: [
      {
        extends: true,
        test: {
          name: 'main',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...TIMING],
          // Files wait on servers and child processes: more files than cores.
          maxWorkers: 5,
          // Files share their worker's modules (the AWS SDK, the handlers load once per
          // worker); each puts back what it changes in process.env (env-unchanged.ts checks).
          isolate: false,
          setupFiles: ['test/support/env-unchanged.ts'],
          // A hang guard: a simulation or a CLI run among five files on two cores.
          testTimeout: 240_000,
        },
      },
      {
        extends: true,
        test: { name: 'timing', include: TIMING, maxWorkers: 1 },
      },
    ],
  },
});
