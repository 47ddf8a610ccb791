/**
 * The CLI (its own process) with the coarse wait, against the mock server (its own process):
 * `--wait coarse` fires every request, never before its due time, typically within a few ms.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { writeCaptureFile } from '../support/capture-gen';
import { runCli, startMockProcess, type MockProcess } from '../support/processes';
import { median, tolerance } from '../support/timing';

let dir: string;
let captures: string;
let mock: MockProcess;
const RECORDS = 300;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cr-e2e-coarse-'));
  captures = join(dir, 'captures.jsonl');
  // 100 requests a second for 3 s, spread within each second.
  await writeCaptureFile(captures, {
    ratePerSecond: 100,
    durationSeconds: 3,
    startTime: Date.UTC(2026, 3, 29),
    bodyBytes: 200,
  });
  mock = await startMockProcess(['--ttft-ms', '5', '--itl-ms', '1', '--output-tokens', '2', '--no-precise-timers']);
}, 60_000);

afterAll(async () => {
  await mock?.stop();
  rmSync(dir, { recursive: true, force: true });
});

function results(out: string, runId: string) {
  const folder = join(out, runId, 'target');
  const records = readFileSync(join(folder, 'profile_export.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { capture_replay: { schedule_lag_ms: number } });
  const manifest = JSON.parse(readFileSync(join(folder, 'run_manifest.json'), 'utf8')) as {
    scheduled: number;
    succeeded: number;
    balanced: boolean;
  };
  return { records, manifest };
}

it('--wait coarse: every request fired, none before its due time, typically within a few ms', async () => {
  const run = await runCli([
    'replay',
    captures,
    '--url',
    mock.url,
    '--out',
    join(dir, 'coarse'),
    '--run-id',
    'coarse',
    '--no-progress',
    '--lead',
    '1000',
    '--wait',
    'coarse',
  ]);
  expect(run.code, run.stderr).toBe(0);
  const { records, manifest } = results(join(dir, 'coarse'), 'coarse');
  expect(manifest).toMatchObject({ scheduled: RECORDS, succeeded: RECORDS, balanced: true });
  const lags = records.map((r) => r.capture_replay.schedule_lag_ms);
  expect(Math.min(...lags)).toBeGreaterThanOrEqual(0);
  expect(median(lags)).toBeLessThan(tolerance('coarse wait median lag', 3));
}, 60_000);
