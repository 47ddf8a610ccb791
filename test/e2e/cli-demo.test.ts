/**
 * The CLI as a user runs it, without timing assertions (so in a tier that shares the machine;
 * the replay's timing is cli-replay.test.ts's): the bundled demo end to end, and the exit
 * codes of a missing captures path, a usage error and a run in which nothing succeeds.
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, runCli } from '../support/processes';

const SAMPLE = join(REPO_ROOT, 'samples', 'datacapture');

describe('capture-replay exit codes and the demo', () => {
  const work = mkdtempSync(join(tmpdir(), 'capture-replay-cli-'));
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it(
    'runs the bundled demo (`capture-replay demo`): says what it set up, the chat A/B with the default ' +
      'resamples, the tabular request as a run of its own',
    async () => {
      const run = await runCli(['demo', '--no-progress'], { cwd: work });
      expect(run.code, run.stderr.slice(-2000)).toBe(0);
      // What it set up, before anything runs, in 80 columns.
      const intro = run.stdout.slice(0, run.stdout.indexOf('\n\n'));
      expect(intro).toContain('Demo: the bundled capture sample against the bundled mocks (no network, no AWS).');
      expect(intro).toContain(
        "Set up on purpose: the mock SageMaker runtime's time to first token is 45 ms,\nthe mock server's 40 ms",
      );
      expect(intro).toContain('Expect\nsagemaker `worse` on time to first token (about +5 ms)');
      expect(intro).toContain('  tabular/  1 text/csv request, a run of its own to the mock SageMaker');
      for (const line of intro.split('\n')) expect(line.length, line).toBeLessThanOrEqual(80);

      const out = join(work, 'capture-replay-out');
      const runs = readdirSync(out)
        .filter((name) => name !== 'demo-captures')
        .sort();
      expect(runs).toHaveLength(2);
      const [runId, tabularRunId] = runs as [string, string];
      expect(tabularRunId).toBe(`${runId}-tabular`);
      expect(readdirSync(join(out, 'demo-captures')).sort()).toEqual(['chat', 'tabular']);

      // The chat A/B: both targets took every chat request, and nothing else.
      const runDir = join(out, runId);
      expect(readdirSync(runDir).sort()).toEqual([
        'comparison.json',
        'ingest_report.json',
        'mock',
        'report.html',
        'sagemaker',
      ]);
      for (const target of ['mock', 'sagemaker']) {
        expect(readdirSync(join(runDir, target)).sort()).toEqual([
          'profile_export.jsonl',
          'profile_export_aiperf.csv',
          'profile_export_aiperf.json',
          'run_manifest.json',
        ]);
      }
      const mock = JSON.parse(readFileSync(join(runDir, 'mock', 'run_manifest.json'), 'utf8'));
      const sagemaker = JSON.parse(readFileSync(join(runDir, 'sagemaker', 'run_manifest.json'), 'utf8'));
      expect(mock).toMatchObject({ dropped: 0, succeeded: mock.scheduled, balanced: true });
      expect(sagemaker).toMatchObject({ scheduled: mock.scheduled, succeeded: mock.scheduled, balanced: true });
      const sagemakerRecords = readFileSync(join(runDir, 'sagemaker', 'profile_export.jsonl'), 'utf8')
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l) as { metrics: Record<string, { value: unknown }> });
      expect(sagemakerRecords).toHaveLength(mock.scheduled);
      // Every answer a chat completion (24 tokens): no tabular answer in the chat figures.
      expect(sagemakerRecords.map((r) => r.metrics.output_sequence_length?.value)).toEqual(
        sagemakerRecords.map(() => 24),
      );
      const comparison = JSON.parse(readFileSync(join(runDir, 'comparison.json'), 'utf8'));
      expect(comparison.method.resamples).toBe(2000); // the documented default
      expect(run.stdout).toMatch(/sagemaker vs mock: paired, \d+ pairs compared\n/);

      // The tabular request: its own run, to the SageMaker runtime only.
      const tabular = JSON.parse(readFileSync(join(out, tabularRunId, 'tabular', 'run_manifest.json'), 'utf8'));
      expect(tabular).toMatchObject({ scheduled: 1, succeeded: 1, failed: 0, balanced: true });
      expect(run.stdout).toContain('\nDemo, tabular part: 1 text/csv request to the mock SageMaker runtime\n');
      expect(run.stdout).toContain(`capture-replay | ${tabularRunId} | tabular`);
      expect(run.stdout).toContain(
        `Demo reports: chat A/B  capture-replay-out/${runId}/report.html\n              tabular   ` +
          `capture-replay-out/${tabularRunId}/report.html\n`,
      );
    },
  );

  it('exits 1 with a clear message for a missing captures path', async () => {
    const run = await runCli(['replay', join(work, 'nope'), '--url', 'http://127.0.0.1:9']);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('nope');
  });

  it('exits 2 on a usage error', async () => {
    const run = await runCli(['replay', SAMPLE, '--url', 'http://127.0.0.1:9', '--time-scale', 'fast']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--time-scale');
  });

  it('exits 1 when no request succeeds, with every failure recorded', async () => {
    // --no-preflight: past the reachability check, every request fails and is accounted for.
    const run = await runCli([
      'replay',
      SAMPLE,
      '--url',
      'http://127.0.0.1:9',
      '--out',
      work,
      '--run-id',
      'down',
      '--time-scale',
      '20',
      '--no-progress',
      '--no-preflight',
      '--rehearsal',
      '0',
    ]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('no request to target succeeded');
    const manifest = JSON.parse(readFileSync(join(work, 'down/target/run_manifest.json'), 'utf8')) as {
      failed: number;
      scheduled: number;
      balanced: boolean;
    };
    expect(manifest.balanced).toBe(true);
    expect(manifest.failed).toBeGreaterThan(0);
  }, 60_000);
});
