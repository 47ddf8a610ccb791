/**
 * Stopping the CLI (its own process) with SIGINT and SIGTERM while requests are in flight
 * against the mock server (another process, answering slowly): the run must not be lost.
 * Requests not yet sent are `aborted`; those in flight get the grace (5 s) and are then
 * cancelled (was_cancelled, 499, cancellation_time_ns); a second signal cancels at once;
 * every file is written, the manifests balance, and the exit code says which signal.
 * Timing tier: the checks are on the grace's real time (`kill -9` is in signals-kill.test.ts).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CANCEL_GRACE_MS } from '../../lambdas/local/interrupt';
import {
  loggedArrivals,
  startCli,
  startMockProcess,
  type CliProcess,
  type CliResult,
  type MockProcess,
} from '../support/processes';
import { signalCaptures } from '../support/signal-captures';
import { until } from '../support/until';

const GRACE_MS = DEFAULT_CANCEL_GRACE_MS;
/** What a loaded 2-core machine may add to the grace: writing the files, process exit. */
const SLACK_MS = 4_000;

interface RecordLine {
  metadata: {
    request_start_ns: number;
    request_end_ns: number;
    was_cancelled: boolean;
    cancellation_time_ns: number | null;
  };
  error: { code: number | null; type: string } | null;
}

let dir: string;
let slow: MockProcess;
let slowLog: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cr-signals-'));
  slowLog = join(dir, 'slow.log');
  // Every answer takes a minute: whatever is in flight at the signal is still in flight after the grace.
  slow = await startMockProcess(['--ttft-ms', '60000', '--itl-ms', '1', '--output-tokens', '2', '--log', slowLog]);
}, 60_000);

afterAll(async () => {
  await slow?.stop();
  rmSync(dir, { recursive: true, force: true });
});

function read(run: string, target: string) {
  const folder = join(dir, 'out', run, target);
  const text = readFileSync(join(folder, 'profile_export.jsonl'), 'utf8');
  return {
    manifest: JSON.parse(readFileSync(join(folder, 'run_manifest.json'), 'utf8')),
    aiperf: JSON.parse(readFileSync(join(folder, 'profile_export_aiperf.json'), 'utf8')),
    records: text.trim()
      ? text
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as RecordLine)
      : [],
  };
}

const explain = (r: CliResult) => `exit ${r.code}\nstderr:\n${r.stderr}`;

/** Starts a replay of `name` (40 requests, 4 per captured second: ~10 s) against the slow mock. */
function startSlowRun(name: string, targets: string[]): CliProcess {
  const folder = signalCaptures(dir, name, 40, 4);
  return startCli([
    'replay',
    folder,
    ...targets,
    '--out',
    join(dir, 'out'),
    '--run-id',
    name,
    '--no-progress',
    '--lead',
    '200',
    '--resamples',
    '100',
    '--rehearsal',
    '0',
  ]);
}

/** Signals the CLI once `inFlight` more requests reached the mock; returns the signal's epoch ms. */
async function signalAfter(cli: CliProcess, inFlight: number, signal: NodeJS.Signals): Promise<number> {
  const before = loggedArrivals(slowLog);
  await until(() => loggedArrivals(slowLog) >= before + inFlight, `${inFlight} requests in flight`, 30_000);
  const at = Date.now();
  cli.child.kill(signal);
  return at;
}

/** The checks every interrupted run must pass, for one target. */
function expectInterrupted(run: string, target: string, signalAtMs: number, cancelWithinMs: [number, number]) {
  const { manifest, aiperf, records } = read(run, target);
  expect(manifest.balanced).toBe(true);
  expect(manifest.scheduled).toBe(40);
  expect(manifest.fired).toBe(records.length);
  expect(manifest.fired).toBeGreaterThan(0);
  // Those not sent yet: aborted; those in flight: cancelled, each with its cancellation time.
  expect(manifest.droppedByReason).toEqual({ aborted: 40 - manifest.fired });
  expect(manifest.failedByType).toEqual({ CancelledError: manifest.fired });
  for (const r of records) {
    expect(r.error).toMatchObject({ code: 499, type: 'CancelledError' });
    expect(r.metadata.was_cancelled).toBe(true);
    expect(r.metadata.cancellation_time_ns).not.toBeNull();
    const afterSignal = r.metadata.cancellation_time_ns! / 1e6 - signalAtMs;
    expect(afterSignal).toBeGreaterThanOrEqual(cancelWithinMs[0]);
    expect(afterSignal).toBeLessThanOrEqual(cancelWithinMs[1]);
  }
  expect(aiperf.was_cancelled).toBe(true);
  return manifest;
}

describe('signals: the run is stopped, not lost', () => {
  it('SIGINT: stops scheduling, cancels in-flight requests after the grace, writes everything, exits 130', async () => {
    const cli = startSlowRun('sigint', ['--url', slow.url]);
    const at = await signalAfter(cli, 3, 'SIGINT');
    const result = await cli.done;
    const tookMs = Date.now() - at;
    expect(result.code, explain(result)).toBe(130);
    expect(result.stderr).toContain('SIGINT: no new requests');
    expect(tookMs).toBeGreaterThanOrEqual(GRACE_MS - 100);
    expect(tookMs).toBeLessThan(GRACE_MS + SLACK_MS);
    const manifest = expectInterrupted('sigint', 'target', at, [GRACE_MS - 100, GRACE_MS + SLACK_MS]);
    expect(manifest.fired).toBeGreaterThanOrEqual(3);
    expect(existsSync(join(dir, 'out', 'sigint', 'report.html'))).toBe(true);
  }, 60_000);

  it('SIGTERM with two targets: both stopped and written, the comparison too, exit 143', async () => {
    const cli = startSlowRun('sigterm', ['--target', `A=${slow.url}`, '--target', `B=${slow.url}`]);
    // Two targets: each request arrives twice.
    const at = await signalAfter(cli, 4, 'SIGTERM');
    const result = await cli.done;
    const tookMs = Date.now() - at;
    expect(result.code, explain(result)).toBe(143);
    expect(tookMs).toBeLessThan(GRACE_MS + SLACK_MS);
    const a = expectInterrupted('sigterm', 'A', at, [GRACE_MS - 100, GRACE_MS + SLACK_MS]);
    const b = expectInterrupted('sigterm', 'B', at, [GRACE_MS - 100, GRACE_MS + SLACK_MS]);
    // Parallel dispatch: both targets got the same requests before the signal (give or take the one being sent).
    expect(Math.abs(a.fired - b.fired)).toBeLessThanOrEqual(1);
    expect(existsSync(join(dir, 'out', 'sigterm', 'comparison.json'))).toBe(true);
    expect(existsSync(join(dir, 'out', 'sigterm', 'report.html'))).toBe(true);
  }, 60_000);

  it('a second SIGINT cancels at once and still writes everything', async () => {
    const cli = startSlowRun('sigint2', ['--url', slow.url]);
    const first = await signalAfter(cli, 2, 'SIGINT');
    await cli.waitForStderr(/SIGINT: no new requests/);
    await new Promise((r) => setTimeout(r, 300));
    const second = Date.now();
    cli.child.kill('SIGINT');
    const result = await cli.done;
    expect(result.code, explain(result)).toBe(130);
    expect(result.stderr).toContain('SIGINT again: cancelling');
    // Well before the grace would have run out.
    expect(Date.now() - first).toBeLessThan(GRACE_MS);
    expectInterrupted('sigint2', 'target', second, [-50, SLACK_MS]);
  }, 60_000);

  it('requests that finish within the grace are recorded as they are', async () => {
    const log = join(dir, 'quick.log');
    const quick = await startMockProcess(['--ttft-ms', '1500', '--itl-ms', '1', '--output-tokens', '2', '--log', log]);
    try {
      const folder = signalCaptures(dir, 'graceful', 40, 4);
      const cli = startCli([
        'replay',
        folder,
        '--url',
        quick.url,
        '--out',
        join(dir, 'out'),
        '--run-id',
        'graceful',
        '--no-progress',
        '--lead',
        '200',
        '--rehearsal',
        '0',
      ]);
      await until(() => loggedArrivals(log) >= 3, 'requests in flight', 30_000);
      const at = Date.now();
      cli.child.kill('SIGINT');
      const result = await cli.done;
      expect(result.code, explain(result)).toBe(130);
      // Done when the last answer came (1.5 s), not at the end of the grace.
      expect(Date.now() - at).toBeLessThan(GRACE_MS);
      const { manifest, records } = read('graceful', 'target');
      expect(manifest).toMatchObject({ balanced: true, scheduled: 40, failed: 0 });
      expect(manifest.succeeded).toBe(manifest.fired);
      expect(manifest.droppedByReason).toEqual({ aborted: 40 - manifest.fired });
      expect(records.every((r) => r.error === null && !r.metadata.was_cancelled)).toBe(true);
    } finally {
      await quick.stop();
    }
  }, 60_000);
});
