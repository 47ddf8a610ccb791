import { configDefaults, defineConfig } from 'vitest/config';
import type { TestProjectInlineConfiguration } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { relative, sep } from 'node:path';

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
 *   arrival offsets, cancel windows): one file at a time, at the normal CPU priority.
 * - quiet: the few that need the machine to themselves.
 *
 * `npm test` (scripts/test-all.ts) runs the shared tiers (fast, slow, integration, e2e, infra)
 * in one vitest process, five files at a time (SHARED_WORKERS), their workers at the lowest CPU priority
 * (test/support/background-priority.ts), and the timing tier beside them in a second one, so
 * that its processes get a core whenever they are ready to run; then the quiet tier alone. A
 * plain `vitest run` runs the timing and quiet tiers after the others, one file at a time
 * (vitest's order for tiers of one worker).
 */

/** Unit files that take seconds each (measured: their CPU-seconds in `npm test`, CR_CPU_LOG), the costliest first. */
const SLOW = [
  'test/unit/compare/simulation.test.ts',
  'test/unit/run/workers.test.ts',
  'test/unit/sim/simulate.test.ts',
  'test/unit/compare/stats.test.ts',
  'test/unit/pipeline/run-analysis.test.ts',
  'test/unit/export/aiperf-schema.test.ts',
  'test/unit/plan/two-pass-local.test.ts',
  'test/unit/capture/json-check.test.ts',
  'test/unit/pipeline/collect-scale.test.ts',
  'test/unit/capture/parse-differential.test.ts',
  'test/unit/sim/stack.test.ts',
];

/**
 * Files with assertions on real time that failed on a loaded machine: TTFT and ITL within
 * a few ms, arrival offsets, a verdict on a 10-20 ms TTFT difference, what is in flight at a
 * 300 ms cancel, the connections a warm Lambda environment keeps for its next invocation
 * (fire-warm-up).
 */
const TIMING = [
  'test/unit/http/mock-capacity.test.ts',
  'test/unit/http/mock-server.test.ts',
  'test/unit/http/openai-target.test.ts',
  'test/unit/run/stop-and-write.test.ts',
  'test/integration/fire-warm-up.test.ts',
  'test/integration/pipeline.test.ts',
  'test/integration/sagemaker-target.test.ts',
  'test/integration/scheduled-ab.test.ts',
  'test/integration/wire-stamp.test.ts',
  'test/e2e/ab-compare.test.ts',
  'test/e2e/capacity-search.test.ts',
  'test/e2e/cli-replay.test.ts',
  'test/e2e/cross-kind-bias.test.ts',
  'test/e2e/signals.test.ts',
  'test/e2e/wait-coarse.test.ts',
];

/**
 * Files that need the machine to themselves: responses read during a 60 ms stall of the
 * event loop, which needs the mock process to answer within the stall (catch-up), and which
 * the other tiers' load defeats even at a higher priority. `npm test` runs them once
 * everything else has ended.
 */
const QUIET = ['test/integration/catch-up.test.ts'];

/** Workers for the tiers that share the machine; test files wait on servers and child processes. */
const SHARED_WORKERS = 5;

/**
 * The order files start in within a group: the files that take longest first (LONGEST_FIRST,
 * then the tiers with the longest files: the slow files in SLOW's order), the many short fast
 * files last, where they fill the workers that others leave idle. Vitest's own order runs the
 * projects of a group by name (slow last) and, within one, the longest first by its cache of
 * the last run or, without one (a fresh clone), the largest file first: a long file of few
 * lines would start late and end the run alone.
 */
const START_ORDER = ['slow', 'infra', 'e2e', 'integration', 'fast', 'timing'];

/**
 * Files of the shared tiers that take longest (measured: vitest's per-file durations in `npm
 * test`), longest first; those whose time is mostly real time (a 60 s replay, a wait for a
 * synthesis) ahead of their rank, since they end no sooner for having the CPU.
 */
export const LONGEST_FIRST = [
  'test/integration/scale.test.ts',
  'test/infra/synth.test.ts',
  'test/integration/verify-deploy.test.ts',
  'test/integration/bundles.test.ts',
  'test/e2e/package.test.ts',
  'test/integration/iam.test.ts',
  'test/e2e/report-browser.test.ts',
  'test/e2e/response-faults.test.ts',
  'test/e2e/signals-kill.test.ts',
  'test/e2e/replay-s3.test.ts',
  'test/unit/compare/simulation.test.ts',
  'test/e2e/trend-browser.test.ts',
  'test/e2e/cli-demo.test.ts',
  // A fast-tier file of small size that waits seconds on the processes it starts: vitest's
  // order (the largest files first) would start it last, alone at the end of the run.
  'test/unit/support/kill-on-stop.test.ts',
];
const listed = (list: string[], spec: TestSpecification) => {
  const i = list.indexOf(relative(spec.project.config.root, spec.moduleId).split(sep).join('/'));
  return i < 0 ? list.length : i;
};

class LongestTiersFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const place = new Map(sorted.map((spec, i) => [spec, i]));
    const rank = (spec: TestSpecification) => [
      spec.project.config.sequence.groupOrder,
      listed(LONGEST_FIRST, spec),
      START_ORDER.indexOf(spec.project.name),
      listed(SLOW, spec),
      place.get(spec)!,
    ];
    const order = new Map(sorted.map((spec) => [spec, rank(spec)]));
    return sorted.sort((a, b) => {
      const [ra, rb] = [order.get(a)!, order.get(b)!];
      return ra.map((v, i) => v - rb[i]!).find((d) => d !== 0) ?? 0;
    });
  }
}

/** The tiers `npm test` runs in one vitest process at a low priority (scripts/test-all.ts), and the one it runs beside them. */
export const SHARED_TIERS = ['fast', 'slow', 'integration', 'e2e', 'infra'];
export const TIMING_TIER = 'timing';
/** The tier `npm test` runs last, alone. */
export const QUIET_TIER = 'quiet';

/**
 * The tiers that start the CLI or moto_server get the run's bundle of the CLI
 * (test/support/cli-bundle.ts) and its moto zygote (test/support/moto-zygote.ts).
 */
const CLI_AND_MOTO = ['test/support/cli-bundle.ts', 'test/support/moto-zygote.ts'];
/** ... and the tiers that synthesize the stack for its IAM statements, the run's stack-template server. */
const CLI_MOTO_AND_TEMPLATES = [...CLI_AND_MOTO, 'test/support/iam/stack-template-server.ts'];
/** ... and the tier whose page tests share the run's Chromium (test/support/browser-server.ts). */
const CLI_MOTO_AND_BROWSER = [...CLI_AND_MOTO, 'test/support/browser-server.ts'];
/** The tiers that run beside the timing tier, at a lower CPU priority (test/support/background-priority.ts). */
const BACKGROUND = ['test/support/background-priority.ts'];
/** ... and, for a tier whose files share a worker and set environment variables, the check that each puts them back. */
const BACKGROUND_SHARED_ENV = [...BACKGROUND, 'test/support/env-unchanged.ts'];

interface TierOptions {
  maxWorkers: number;
  exclude?: string[];
  globalSetup?: string[];
  setupFiles?: string[];
  /**
   * False: the tier's files share their worker's modules, loaded once per worker. For files
   * that leave no process state behind: pure unit tests, and integration and end-to-end files
   * (each stops the servers and browsers it starts and puts back what it changes in
   * process.env: env-unchanged.ts checks it).
   */
  isolate?: boolean;
  /** A test's time limit, when the tier's differs from the default. */
  testTimeout?: number;
}

const tier = (name: string, include: string[], o: TierOptions): TestProjectInlineConfiguration => ({
  extends: true,
  test: {
    name,
    include,
    exclude: [...configDefaults.exclude, ...(o.exclude ?? [])],
    maxWorkers: o.maxWorkers,
    isolate: o.isolate ?? true,
    globalSetup: o.globalSetup ?? [],
    setupFiles: o.setupFiles ?? [],
    ...(o.testTimeout ? { testTimeout: o.testTimeout } : {}),
  },
});

/**
 * Node reads and parses the certificates NODE_EXTRA_CA_CERTS names at the start of every
 * process, and machines of this project's kind set it. Nothing the tests start opens a TLS
 * connection, and they start hundreds of Node processes (the CLI, the mocks, vitest's
 * workers): the variable is dropped here, in the process that starts them all (a vitest run,
 * and `npm test`, which reads this file first). docs/testing.md has the figures.
 */
delete process.env.NODE_EXTRA_CA_CERTS;

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // CR_CPU_LOG=<file> logs each test file's CPU seconds (its worker and the children it waited
    // for); CR_CPU_PROFILE=<dir> writes a CPU profile of each.
    setupFiles: ['test/support/cpu-log.ts', 'test/support/cpu-profile.ts'],
    sequence: { sequencer: LongestTiersFirst },
    // The handlers' structured logs and their metrics (EMF lines) are evidence in AWS, noise in
    // a test run (the tests that read the metrics turn them on). The stacks the
    // tests synthesize in their own process skip aws-cdk-lib's built-in template validation
    // (a WebAssembly rule engine, seconds of CPU in each process that synthesizes; its findings
    // are warnings), as the app itself does (bin/app.ts): cfn-lint checks the template `cdk
    // synth` writes, in test/infra/synth.test.ts.
    env: { POWERTOOLS_LOG_LEVEL: 'WARN', POWERTOOLS_METRICS_DISABLED: 'true', CDK_VALIDATION: 'false' },
    // The time limits of the shared tiers are hang guards: at the lowest priority beside the
    // timing tier, a simulation, a page drawn in Chromium or a CLI run can take several times
    // its time alone.
    projects: [
      tier('fast', ['test/unit/**/*.test.ts'], {
        maxWorkers: SHARED_WORKERS,
        exclude: [...SLOW, ...TIMING],
        isolate: false,
        setupFiles: BACKGROUND,
        testTimeout: 60_000,
      }),
      tier('slow', SLOW, { maxWorkers: SHARED_WORKERS, isolate: false, setupFiles: BACKGROUND, testTimeout: 240_000 }),
      tier('integration', ['test/integration/**/*.test.ts'], {
        maxWorkers: SHARED_WORKERS,
        isolate: false,
        exclude: [...TIMING, ...QUIET],
        globalSetup: CLI_MOTO_AND_TEMPLATES,
        setupFiles: BACKGROUND_SHARED_ENV,
        testTimeout: 120_000,
      }),
      tier('e2e', ['test/e2e/**/*.test.ts'], {
        maxWorkers: SHARED_WORKERS,
        isolate: false,
        exclude: TIMING,
        globalSetup: CLI_MOTO_AND_BROWSER,
        setupFiles: BACKGROUND_SHARED_ENV,
        testTimeout: 240_000,
      }),
      tier('infra', ['test/infra/**/*.test.ts'], {
        maxWorkers: SHARED_WORKERS,
        isolate: false,
        setupFiles: BACKGROUND_SHARED_ENV,
        testTimeout: 120_000,
      }),
      tier(TIMING_TIER, TIMING, { maxWorkers: 1, globalSetup: CLI_MOTO_AND_TEMPLATES }),
      tier(QUIET_TIER, QUIET, { maxWorkers: 1 }),
    ],
  },
});
