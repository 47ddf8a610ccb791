/**
 * `capture-replay replay --amplify` as a user runs it (issue 20 item 1): 3n requests for a
 * capture of n, due over the captured duration, each copy a record of its own carrying its
 * event and copy index outside AIPerf's metadata; the ingest report and input_config say so;
 * a factor that is not a number > 0 is a usage error, and so is one not written in decimal
 * (`0x2`); a factor that leaves no request says so and exits 1, as an empty replay does.
 */
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeCaptureFile } from '../support/capture-gen';
import { runCli, startMockProcess, type MockProcess } from '../support/processes';

describe('replay --amplify', () => {
  let dir: string;
  let captures: string;
  let mock: MockProcess;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'amplify-'));
    captures = join(dir, 'captures');
    mkdirSync(captures);
    // 20 requests over 2 s (10 a second, 100 ms apart once spread over each second).
    await writeCaptureFile(join(captures, 'c.jsonl'), {
      ratePerSecond: 10,
      durationSeconds: 2,
      startTime: Date.UTC(2026, 3, 29),
      bodyBytes: 200,
    });
    mock = await startMockProcess(['--ttft-ms', '2', '--itl-ms', '1', '--output-tokens', '3']);
  }, 60_000);

  afterAll(async () => {
    await mock?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('sends 3n requests over the captured duration, each a record with its event and copy index', async () => {
    const out = join(dir, 'out');
    const r = await runCli([
      'replay',
      captures,
      '--url',
      mock.url,
      '--out',
      out,
      '--amplify',
      '3',
      '--run-id',
      'amp',
      '--rehearsal',
      '0',
      '--no-progress',
    ]);
    expect(r.code, r.stderr).toBe(0);
    const manifest = JSON.parse(readFileSync(join(out, 'amp', 'target', 'run_manifest.json'), 'utf8')) as {
      scheduled: number;
      succeeded: number;
    };
    expect(manifest).toMatchObject({ scheduled: 60, succeeded: 60 });
    const records = readFileSync(join(out, 'amp', 'target', 'profile_export.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map(
        (l) =>
          JSON.parse(l) as {
            metadata: Record<string, unknown>;
            capture_replay: { capture_event_id: string; capture_copy: number; scheduled_ns: number };
          },
      );
    const keys = new Set(records.map((x) => `${x.capture_replay.capture_event_id}#${x.capture_replay.capture_copy}`));
    expect(keys.size).toBe(60);
    expect(new Set(records.map((x) => x.capture_replay.capture_event_id)).size).toBe(20);
    expect([...new Set(records.map((x) => x.capture_replay.capture_copy))].sort()).toEqual([0, 1, 2]);
    for (const x of records) expect(Object.keys(x.metadata)).not.toContain('capture_copy');
    // Due over the captured 1.9 s (first to last request), plus at most one mean gap (100 ms): not 3x as long, nor a third.
    const due = records.map((x) => Number(x.capture_replay.scheduled_ns)).sort((a, b) => a - b);
    const spanMs = (due.at(-1)! - due[0]!) / 1e6;
    expect(spanMs).toBeGreaterThanOrEqual(1900 - 1);
    expect(spanMs).toBeLessThanOrEqual(2000 + 1);
    const ingest = JSON.parse(readFileSync(join(out, 'amp', 'ingest_report.json'), 'utf8')) as {
      timing: { amplification: unknown };
    };
    expect(ingest.timing.amplification).toEqual({ factor: 3, capturedRequests: 20, scheduledRequests: 60 });
    const aiperf = JSON.parse(readFileSync(join(out, 'amp', 'target', 'profile_export_aiperf.json'), 'utf8')) as {
      capture_replay: { schedule: { amplify?: number } };
    };
    expect(aiperf.capture_replay.schedule.amplify).toBe(3);
    expect(readdirSync(join(out, 'amp'))).toContain('report.html');
  }, 120_000);

  it('refuses a factor that is not a number > 0, as a usage error naming the flag', async () => {
    const r = await runCli(['replay', captures, '--url', mock.url, '--amplify', '0']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--amplify must be a number > 0 (got "0")');
    const big = await runCli(['replay', captures, '--url', mock.url, '--amplify', '5000', '--no-preflight']);
    expect(big.code).toBe(2);
    expect(big.stderr).toContain('--amplify must be a number in (0, 1000] (got 5000)');
  }, 60_000);

  it('refuses a factor not written in decimal (0x2 is not 2), as every numeric flag does (issue 32 item 12)', async () => {
    for (const [flag, value] of [
      ['--amplify', '0x2'],
      ['--time-scale', '0x2'],
      ['--limit', '0b11'],
      ['--timeout', 'Infinity'],
    ]) {
      // --out in the test's folder: a flag taken as a number would run a replay, which must not write into the clone.
      const r = await runCli([
        'replay',
        captures,
        '--url',
        mock.url,
        flag as string,
        value as string,
        '--no-preflight',
        '--out',
        join(dir, 'not-decimal'),
      ]);
      expect(r.code, `${flag} ${value}`).toBe(2);
      expect(r.stderr.split('\n')[0], `${flag} ${value}`).toMatch(
        new RegExp(`^capture-replay replay: ${flag} must be .*\\(got "${value}"\\)$`),
      );
    }
  }, 60_000);

  it('a factor that leaves no request sends nothing, says so and exits 1 (issue 32 item 12)', async () => {
    const out = join(dir, 'none');
    const r = await runCli([
      'replay',
      captures,
      '--url',
      mock.url,
      '--out',
      out,
      '--amplify',
      '1e-7',
      '--run-id',
      'none',
      '--rehearsal',
      '0',
      '--no-progress',
    ]);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain(
      'capture-replay: --amplify 1e-7 kept none of the 20 request(s): nothing was sent; give a larger --amplify\n',
    );
    const manifest = JSON.parse(readFileSync(join(out, 'none', 'target', 'run_manifest.json'), 'utf8')) as {
      scheduled: number;
    };
    expect(manifest.scheduled).toBe(0);
  }, 60_000);
});
