/**
 * Replay to two targets, as a user runs it, without timing assertions (so in a tier that
 * shares the machine; the A/B verdicts' sizes, which depend on timing, are ab-compare.test.ts's):
 * `--dispatch sequential` sends the whole schedule to A, then to B; `compare` gates on that
 * run: B answers half the requests with HTTP 500 (seeded), so its error rate is `worse` whatever
 * the machine's load (a latency margin was not: a stall of the client under load made A's first
 * tokens as late as B's 300 ms slower ones); the target arguments' usage errors.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ComparisonDocument } from '../../lambdas/core/compare/types';
import { writeCaptureFile } from '../support/capture-gen';
import { runCli, startMockProcess } from '../support/processes';

let dir: string;
let captures: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cr-ab-dispatch-'));
  captures = join(dir, 'captures.jsonl');
  await writeCaptureFile(captures, {
    ratePerSecond: 40,
    durationSeconds: 5,
    startTime: Date.UTC(2026, 3, 29),
    seed: 7,
    bodyBytes: 600,
  });
});

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('--dispatch sequential', () => {
  it('sends the whole schedule to A, then to B', async () => {
    const seqOut = join(dir, 'seq');
    const logA = join(dir, 'a.log');
    const logB = join(dir, 'b.log');
    const [la, lb] = await Promise.all([
      startMockProcess(['--ttft-ms', '5', '--itl-ms', '1', '--output-tokens', '3', '--log', logA]),
      startMockProcess([
        '--ttft-ms',
        '5',
        '--itl-ms',
        '1',
        '--output-tokens',
        '3',
        '--error-rate',
        '0.5',
        '--log',
        logB,
      ]),
    ]);
    try {
      const result = await runCli([
        'replay',
        captures,
        '--target',
        `A=${la.url}`,
        '--target',
        `B=${lb.url}`,
        '--dispatch',
        'sequential',
        '--limit',
        '40',
        '--time-scale',
        '4',
        '--out',
        seqOut,
        '--run-id',
        'seq',
        '--no-progress',
        '--resamples',
        '200',
        '--rehearsal',
        '0',
      ]);
      expect(result.code, result.stderr).toBe(0);
    } finally {
      await Promise.all([la.stop(), lb.stop()]);
    }
    const arrivals = (file: string) =>
      readFileSync(file, 'utf8')
        .trim()
        .split('\n')
        .map((l) => BigInt((JSON.parse(l) as { arrival_ns: string }).arrival_ns));
    const [ta, tb] = [arrivals(logA), arrivals(logB)];
    expect([ta.length, tb.length]).toEqual([40, 40]);
    const lastA = ta.reduce((m, t) => (t > m ? t : m));
    const firstB = tb.reduce((m, t) => (t < m ? t : m));
    expect(firstB > lastA).toBe(true);
    const seqDoc = JSON.parse(readFileSync(join(seqOut, 'seq', 'comparison.json'), 'utf8')) as ComparisonDocument;
    // Every request is paired; those B failed are excluded from the metrics, not from the error rate.
    const failedAtB = seqDoc.pairs.excluded.candidate_failed ?? 0;
    expect(failedAtB).toBeGreaterThanOrEqual(10);
    expect(seqDoc.pairs.used + failedAtB).toBe(40);
    expect(seqDoc.comparisons.map((c) => c.errors.verdict)).toEqual(['worse']);
  });

  it('compare without a gate exits 0; a run folder stands for its targets', async () => {
    const result = await runCli([
      'compare',
      join(dir, 'seq', 'seq', 'A'),
      join(dir, 'seq', 'seq', 'B'),
      '--resamples',
      '200',
    ]);
    expect(result.code).toBe(0);
    const swapped = await runCli(['compare', join(dir, 'seq', 'seq'), '--fail-on', 'worse', '--resamples', '200']);
    expect(swapped.code).toBe(3);
    expect(swapped.stdout).toMatch(/B vs A: paired/);
  });
});

describe('target arguments', () => {
  it('usage errors are clear and exit non-zero before any request', async () => {
    const both = await runCli([
      'replay',
      captures,
      '--url',
      'http://127.0.0.1:9',
      '--target',
      'B=http://127.0.0.1:9',
      '--no-progress',
    ]);
    expect(both.code).not.toBe(0);
    expect(both.stderr).toMatch(/either --url .* or --target/);
    const unnamed = await runCli(['replay', captures, '--target', 'http://127.0.0.1:9', '--no-progress']);
    expect(unnamed.stderr).toMatch(/NAME=URL/);
    const twice = await runCli([
      'replay',
      captures,
      '--target',
      'A=http://127.0.0.1:9',
      '--target',
      'A=http://127.0.0.1:8',
      '--no-progress',
    ]);
    expect(twice.stderr).toMatch(/given twice/);
  });
});
