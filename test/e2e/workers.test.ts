/**
 * The CLI (its own process) with fire worker threads and the coarse wait, against the mock
 * server (its own process): `--workers 2` writes exactly the records the manifest counts, each
 * request arriving once, with the same ids and order as one thread; `--rehearsal` and
 * `--workers` usage errors. No assertion here is on timing (`--wait coarse`'s are
 * wait-coarse.test.ts's, in the timing project).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHEAP_CONNECT_MS } from '../../lambdas/local/open-ahead';
import { writeCaptureFile } from '../support/capture-gen';
import { runCli, startMockProcess, type MockProcess } from '../support/processes';

let dir: string;
let captures: string;
let mock: MockProcess;
let mockLog: string;
const RECORDS = 300;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cr-e2e-workers-'));
  captures = join(dir, 'captures.jsonl');
  mockLog = join(dir, 'mock.log');
  // 100 requests a second for 3 s, spread within each second.
  await writeCaptureFile(captures, {
    ratePerSecond: 100,
    durationSeconds: 3,
    startTime: Date.UTC(2026, 3, 29),
    bodyBytes: 200,
  });
  mock = await startMockProcess([
    '--ttft-ms',
    '5',
    '--itl-ms',
    '1',
    '--output-tokens',
    '2',
    '--no-precise-timers',
    '--log',
    mockLog,
  ]);
}, 60_000);

afterAll(async () => {
  await mock?.stop();
  rmSync(dir, { recursive: true, force: true });
});

interface RecordLine {
  metadata: {
    session_num: number;
    x_request_id: string;
    x_correlation_id: string;
    worker_id: string;
    conversation_id: string;
  };
  error: unknown;
  capture_replay: { schedule_lag_ms: number };
}

function results(out: string, runId: string) {
  const folder = join(out, runId, 'target');
  const records = readFileSync(join(folder, 'profile_export.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as RecordLine);
  const manifest = JSON.parse(readFileSync(join(folder, 'run_manifest.json'), 'utf8')) as {
    scheduled: number;
    succeeded: number;
    failed: number;
    dropped: number;
    balanced: boolean;
  };
  return { records, manifest };
}

/** What must not depend on the thread that fired a request. */
const identity = ({ metadata: m }: RecordLine) => [
  m.session_num,
  m.x_request_id,
  m.x_correlation_id,
  m.worker_id,
  m.conversation_id,
];

const arrivals = () => {
  const counts = new Map<string, number>();
  for (const line of readFileSync(mockLog, 'utf8').split('\n').filter(Boolean)) {
    const id = (JSON.parse(line) as { headers: { 'x-request-id': string } }).headers['x-request-id'];
    counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return counts;
};

const replay = (out: string, runId: string, extra: string[]) =>
  runCli([
    'replay',
    captures,
    '--url',
    mock.url,
    '--out',
    out,
    '--run-id',
    runId,
    '--no-progress',
    '--lead',
    '1000',
    ...extra,
  ]);

/**
 * The requests a rehearsal of `perPass` a pass sends, as the CLI decides its passes from its
 * preflight line: two when the connect to the mock (loopback, no TLS) took under
 * CHEAP_CONNECT_MS, one when a loaded machine made it slower (lambdas/local/rehearsal.ts).
 */
function rehearsed(perPass: number, stderr: string): string {
  // The line rounds to a tenth of a millisecond: at the limit either is right.
  const ms = Number(/accepts connections \(TCP in ([\d.]+) ms\)/.exec(stderr)?.[1]);
  expect(Number.isFinite(ms), stderr).toBe(true);
  if (Math.abs(ms - CHEAP_CONNECT_MS) <= 0.05) return `(?:${perPass}|${2 * perPass})`;
  return String(ms < CHEAP_CONNECT_MS ? 2 * perPass : perPass);
}

describe('capture-replay replay --workers / --rehearsal', () => {
  it('--workers 2: every request once, the records the manifest counts, the same ids and order as one thread', async () => {
    const two = await replay(join(dir, 'two'), 'w2', ['--workers', '2', '--rehearsal', '500']);
    expect(two.stderr).toContain('Firing from 2 worker threads');
    // Each worker rehearses its own code before it is ready (500 a pass); none of it reaches the
    // target (the mock's log below holds exactly the run's requests).
    expect(two.stderr).toMatch(
      new RegExp(
        `Rehearsal: ${rehearsed(1000, two.stderr)} requests ` +
          /\(2 threads x the target\) to an in-process sink in [\d.]+ s, nothing /.source +
          /sent to the target \(--rehearsal 0 skips it\)/.source,
      ),
    );
    expect(two.code, two.stderr).toBe(0);
    const many = results(join(dir, 'two'), 'w2');
    expect(many.manifest).toMatchObject({
      scheduled: RECORDS,
      succeeded: RECORDS,
      failed: 0,
      dropped: 0,
      balanced: true,
    });
    expect(many.records).toHaveLength(RECORDS);
    expect(many.records.map((r) => r.metadata.session_num)).toEqual(Array.from({ length: RECORDS }, (_, i) => i));
    // The mock appends its log asynchronously: give its last lines a moment to land.
    let seen = arrivals();
    for (let i = 0; i < 50 && !many.records.every((r) => seen.has(r.metadata.x_request_id)); i++) {
      await new Promise((r) => setTimeout(r, 100));
      seen = arrivals();
    }
    expect(many.records.every((r) => seen.get(r.metadata.x_request_id) === 1)).toBe(true);
    expect(seen.size).toBe(RECORDS);

    // The same run id with one thread: the same requests, ids and order.
    const one = await replay(join(dir, 'one'), 'w2', ['--workers', '1']);
    expect(one.code, one.stderr).toBe(0);
    expect(one.stderr).not.toContain('worker threads');
    // --rehearsal auto: twice the busiest second (100 requests) a pass.
    expect(one.stderr).toMatch(
      new RegExp(`Rehearsal: ${rehearsed(200, one.stderr)} requests \\(the target\\) to an in-process sink`),
    );
    expect(results(join(dir, 'one'), 'w2').records.map(identity)).toEqual(many.records.map(identity));
    // The same ids again, each now seen twice, and nothing else: the rehearsal sent nothing to the target.
    seen = arrivals();
    for (let i = 0; i < 50 && ![...seen.values()].every((n) => n === 2); i++) {
      await new Promise((r) => setTimeout(r, 100));
      seen = arrivals();
    }
    expect(seen.size).toBe(RECORDS);
    expect([...seen.values()].every((n) => n === 2)).toBe(true);
  }, 120_000);

  it('--rehearsal 0 skips the rehearsal; a negative or fractional count or another word than auto is a usage error', async () => {
    const none = await replay(join(dir, 'none'), 'none', ['--rehearsal', '0', '--limit', '5']);
    expect(none.code, none.stderr).toBe(0);
    expect(none.stderr).not.toContain('Rehearsal');
    for (const bad of ['-1', '2.5', 'many']) {
      const run = await runCli(['replay', captures, '--url', mock.url, '--rehearsal', bad]);
      expect(run.code).toBe(2);
      expect(run.stderr).toContain(`--rehearsal must be auto or a whole number >= 0 (got "${bad}")`);
    }
  });

  it('--workers takes auto or 1-64', async () => {
    const bad = await runCli(['replay', captures, '--url', mock.url, '--workers', 'two']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--workers must be auto or a whole number from 1 to 64 (got "two")');
  });
});
