/**
 * `npm test`: every check at once on the machine's cores, failing when any fails.
 *
 * - First, the Node it runs on (every check and each process a test starts run on it); below
 *   package.json's floor (Node 22) it stops (.ci/node-env.sh puts Node 22 first on PATH).
 * - The test tiers that share the machine (vitest.config.ts: fast, slow, integration, e2e,
 *   infra) in one vitest process, their output as it comes, at the lowest CPU priority.
 * - The timing tier in a second vitest process, one file at a time, at the normal priority,
 *   so that its processes get a core whenever they are ready to run. Vitest runs projects with
 *   different worker counts one after the other within one process; two processes let the
 *   timing tier's wall time overlap the others'.
 * - The type check and lint, at the lowest priority.
 * - Once all of those have ended and the machine is quiet (scripts/quiet-machine.ts), the quiet
 *   tier alone (files that need the machine to themselves).
 *
 * What the test files of both vitest processes use is made once, before they start, and named
 * to them in the environment: the built CLI (test/support/cli-bundle.ts), the moto zygote
 * (test/support/moto-zygote.ts), the stack-template server
 * (test/support/iam/stack-template-server.ts) and the browser server
 * (test/support/browser-server.ts), whose global setups then find them and start nothing;
 * and CR_TEST_RUN names the run for what its files share in files (test/support/run-shared.ts:
 * the mocks' bundles, moto's probes, the shared synthesis).
 *
 * Each check runs in a session of its own; for a check at the lowest priority, its scheduling
 * group is lowered too (test/support/priority.ts says why). A stop signal is passed on to each.
 *
 * Every output but the shared tiers' is printed when its check ends (so that no two outputs
 * interleave), then one line per check, then each failed test in a line or two: a CI log that
 * keeps only its tail still names what failed. Arguments go to every vitest run (e.g. `npm test
 * -- --reporter=dot`).
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { QUIET_TIER, SHARED_TIERS, TIMING_TIER } from '../vitest.config';
import startBrowserServer from '../test/support/browser-server';
import startCliBundle from '../test/support/cli-bundle';
import startStackTemplateServer from '../test/support/iam/stack-template-server';
import startMotoZygote from '../test/support/moto-zygote';
import { setSessionPriority } from '../test/support/priority';
import { RUN_ENV } from '../test/support/run-shared';
import { waitForQuietMachine } from './quiet-machine';
import { failureLines } from './test-failures';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const passThrough = process.argv.slice(2);

// Which Node runs every check (vitest, its workers and every process a test starts run on
// process.execPath): the first line. Below package.json's floor the run stops here, saying how
// to get Node 22 (.ci/run does it the same way).
const FLOOR = Number(
  /^>=\s*(\d+)/.exec(
    (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node,
  )?.[1],
);
process.stdout.write(`npm test on Node ${process.versions.node} (${process.execPath})\n`);
if (Number(process.versions.node.split('.')[0]) < FLOOR) {
  process.stderr.write(
    `Node ${process.versions.node} is below the package's floor (engines: Node >= ${FLOOR}): \`source .ci/node-env.sh\` puts Node ${FLOOR} first on PATH.\n`,
  );
  process.exit(1);
}

interface Check {
  name: string;
  command: string[];
  /** Print as it comes (one check only), else when it ends. */
  live?: boolean;
  /** At the lowest priority. */
  background?: boolean;
  /** Where the vitest run writes its JSON report, read for the closing list of failures. */
  report?: string;
}

/** Each vitest run's JSON report: in CR_TEST_REPORTS when set (kept), else in a temporary folder removed at the end. */
const KEEP_REPORTS = process.env.CR_TEST_REPORTS;
const REPORTS = KEEP_REPORTS
  ? (mkdirSync(KEEP_REPORTS, { recursive: true }), KEEP_REPORTS)
  : mkdtempSync(join(tmpdir(), 'capture-replay-test-all-'));
// The default reporter stays unless the caller chose one; the JSON one is added beside it.
const reporters = passThrough.some((a) => a.startsWith('--reporter')) ? [] : ['--reporter=default'];
const vitestCheck = (name: string, projects: string[], o: { live?: boolean; background?: boolean } = {}): Check => {
  const report = join(REPORTS, `${projects.join('-')}.json`);
  // The project's vitest, the one `npx vitest` runs, without npm's start-up.
  const command = [
    join('node_modules', '.bin', 'vitest'),
    'run',
    ...projects.flatMap((p) => ['--project', p]),
    ...reporters,
    '--reporter=json',
    `--outputFile.json=${report}`,
    ...passThrough,
  ];
  return { name, command, report, ...o };
};

const CHECKS: Check[] = [
  vitestCheck('tests (shared tiers)', SHARED_TIERS, { live: true, background: true }),
  vitestCheck('tests (timing tier)', [TIMING_TIER]),
  { name: 'typecheck', command: ['npm', 'run', '--silent', 'typecheck'], background: true },
  { name: 'lint', command: ['npm', 'run', '--silent', 'lint'], background: true },
];

interface Outcome {
  name: string;
  code: number | null;
  signal: NodeJS.Signals | null;
  seconds: number;
}

/** The checks running, each the leader of a session (and process group) of its own: a stop signal goes to each whole group. */
const running = new Set<number>();
let stopped = false;
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(signal, () => {
    stopped = true;
    for (const pid of running) {
      try {
        process.kill(-pid, signal);
      } catch {
        // ended meanwhile
      }
    }
  });
}

function run(check: Check): Promise<Outcome> {
  const started = Date.now();
  const [command, ...args] = check.command as [string, ...string[]];
  // A check whose output is kept keeps its colours when the run has a terminal.
  const env = !check.live && process.stdout.isTTY ? { ...process.env, FORCE_COLOR: '1' } : process.env;
  const stdio = check.live ? 'inherit' : 'pipe';
  // A session of its own: its scheduling group is its own (lowered for a background check), and
  // a stop signal reaches every process the check starts.
  const child = spawn(command, args, { cwd: ROOT, stdio: ['ignore', stdio, stdio], env, detached: true });
  if (child.pid !== undefined) {
    if (check.background) setSessionPriority(child.pid);
    running.add(child.pid);
  }
  const chunks: Buffer[] = [];
  child.stdout?.on('data', (c: Buffer) => chunks.push(c));
  child.stderr?.on('data', (c: Buffer) => chunks.push(c));
  return new Promise((resolve) => {
    child.once('error', (error) => {
      chunks.push(Buffer.from(`${String(error)}\n`));
    });
    child.once('close', (code, signal) => {
      if (child.pid !== undefined) running.delete(child.pid);
      const outcome = { name: check.name, code, signal, seconds: Math.round((Date.now() - started) / 1000) };
      if (!check.live) {
        process.stdout.write(`\n── ${check.name}: ${describe(outcome)} ──\n`);
        process.stdout.write(Buffer.concat(chunks));
      }
      resolve(outcome);
    });
  });
}

const passed = (o: Outcome) => o.code === 0;
const describe = (o: Outcome) =>
  `${passed(o) ? 'passed' : o.signal ? `stopped by ${o.signal}` : `failed (exit ${o.code})`} in ${o.seconds} s`;

process.env[RUN_ENV] = String(process.pid);
const teardowns = [await startCliBundle(), startMotoZygote(), startStackTemplateServer(), startBrowserServer()];
const quiet = vitestCheck('tests (quiet tier)', [QUIET_TIER]);
const checks = [...CHECKS, quiet];
const outcomes = await Promise.all(CHECKS.map(run));
// A stopped run ends when its checks have: the quiet tier is not started.
if (!stopped) {
  const settled = await waitForQuietMachine();
  if (settled) {
    const idle = `${Math.round(settled.idle * 100)} % idle`;
    process.stdout.write(
      settled.quiet
        ? `\nquiet tier: the machine was quiet after ${(settled.waitedMs / 1000).toFixed(1)} s (${idle})\n`
        : `\nquiet tier: the machine was still busy after ${Math.round(settled.waitedMs / 1000)} s (${idle}); running it anyway\n`,
    );
  }
  outcomes.push(await run(quiet));
}
process.stdout.write(
  `\n${outcomes.map((o) => `${passed(o) ? 'ok  ' : 'FAIL'} ${o.name}: ${describe(o)}`).join('\n')}\n`,
);
// performance.now(): since this process started (npm's own start before it is not counted).
process.stdout.write(`all checks: ${Math.round(performance.now() / 1000)} s\n`);
const failures = outcomes.flatMap((outcome, i) => {
  const check = checks[i]!;
  if (passed(outcome) || check.report === undefined || outcome.signal) return [];
  return (
    failureLines(check.report) ?? [
      `  ${check.name}: no report (the run ended before writing it); its output above says why`,
    ]
  );
});
if (failures.length > 0) process.stdout.write(`\nfailed:\n${failures.join('\n')}\n`);
if (!KEEP_REPORTS) rmSync(REPORTS, { recursive: true, force: true });
for (const teardown of teardowns) teardown?.();
process.exitCode = !stopped && outcomes.every(passed) ? 0 : 1;
