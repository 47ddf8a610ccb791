/**
 * `compare` on folders made apart, read from disk: AIPerf's own records (no capture_replay,
 * older short tags), pairing decided by how many requests match, bad lines counted and left
 * out, clear failures for what cannot be compared.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compareCommand } from '../../../lambdas/local/compare/command';
import type { ComparisonDocument } from '../../../lambdas/core/compare/types';
import { seededRandom } from '../../../lambdas/core/random';

let dir: string;

/** An AIPerf-style record: conversation ids, no capture_replay; `short` uses the old ttft tag. */
function aiperfLine(conversation: string, session: number, ttft: number, latency: number, short = false): string {
  return JSON.stringify({
    metadata: {
      session_num: session,
      x_request_id: `r-${session}`,
      x_correlation_id: `c-${session}`,
      conversation_id: conversation,
      turn_index: 0,
      request_start_ns: 1_759_522_419_000_000_000 + session * 1e7,
      request_end_ns: 0,
      worker_id: 'w',
      record_processor_id: 'p',
      benchmark_phase: 'profiling',
    },
    metrics: {
      [short ? 'ttft' : 'time_to_first_token']: { value: ttft, unit: 'ms' },
      request_latency: { value: latency, unit: 'ms' },
    },
    error: null,
  });
}

function folder(name: string, lines: string[]): string {
  const path = join(dir, name);
  mkdirSync(path, { recursive: true });
  writeFileSync(join(path, 'profile_export.jsonl'), lines.join('\n') + '\n');
  return path;
}

function sink(): { stream: Writable; text: () => string } {
  let text = '';
  return {
    stream: new Writable({ write: (chunk, _enc, done) => ((text += String(chunk)), done()) }),
    text: () => text,
  };
}

const run = async (dirs: string[], extra: Partial<Parameters<typeof compareCommand>[0]> = {}) => {
  const out = sink();
  const err = sink();
  const code = await compareCommand({
    dirs,
    pairing: 'auto',
    resamples: 300,
    stdout: out.stream,
    stderr: err.stream,
    ...extra,
  });
  return { code, stdout: out.text(), stderr: err.text() };
};

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'cr-cmp-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('compare on AIPerf folders', () => {
  const random = seededRandom(3);
  const base = Array.from({ length: 300 }, () => 40 + random() * 80);

  it('pairs by conversation when both replayed the same dataset, and reads the old tags', async () => {
    const a = folder(
      'aiperf-a',
      base.map((t, i) => aiperfLine(`conv-${i}`, i, t, t * 3, true)),
    );
    // B in another order (AIPerf writes records as they complete), 10 % slower on every request.
    const b = folder('aiperf-b', base.map((t, i) => aiperfLine(`conv-${i}`, i, t * 1.1, t * 3)).reverse());
    const out = join(dir, 'paired-out');
    const result = await run([a, b], { out });
    expect(result.code).toBe(0);
    const doc = JSON.parse(readFileSync(join(out, 'comparison.json'), 'utf8')) as ComparisonDocument;
    expect(doc.mode).toBe('paired');
    expect(doc.pairs.used).toBe(300);
    expect(doc.baseline).toBe('aiperf-a');
    const ttft = doc.metrics.find((m) => m.tag === 'time_to_first_token')!;
    expect(ttft.verdict).toBe('worse');
    expect(ttft.relative_pct.mean.estimate).toBeCloseTo(10, 5);
    expect(doc.metrics.find((m) => m.tag === 'request_latency')!.verdict).toBe('no_difference');
    expect(readFileSync(join(out, 'report.html'), 'utf8')).toContain('aiperf-a');
  });

  it('compares distributions, and says so, when the requests are not the same', async () => {
    const a = folder(
      'other-a',
      base.map((t, i) => aiperfLine(`a-${i}`, i, t, t * 3)),
    );
    const b = folder(
      'other-b',
      base.map((t, i) => aiperfLine(`b-${i}`, i, t, t * 3)),
    );
    const result = await run([a, b], { out: join(dir, 'unpaired-out') });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/other-b vs other-a: unpaired/);
    const doc = JSON.parse(readFileSync(join(dir, 'unpaired-out', 'comparison.json'), 'utf8')) as ComparisonDocument;
    expect(doc.mode).toBe('unpaired');
    expect(doc.metrics[0]!.test).toBe('mann_whitney_u');
  });

  it('counts lines that are not records and goes on', async () => {
    const a = folder('bad-a', [
      ...base.slice(0, 50).map((t, i) => aiperfLine(`x-${i}`, i, t, t)),
      '{not json',
      '[]',
      '',
    ]);
    const b = folder(
      'bad-b',
      base.slice(0, 50).map((t, i) => aiperfLine(`x-${i}`, i, t, t)),
    );
    const result = await run([a, b], { names: 'A,B' });
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/2 line\(s\) not a record, left out \(first at line 51\)/);
    expect(result.stdout).toMatch(/B vs A: paired, 50 pairs/);
  });

  it('fails clearly on what cannot be compared', async () => {
    expect((await run([join(dir, 'missing'), join(dir, 'bad-b')])).stderr).toMatch(/missing: not a folder/);
    expect((await run([join(dir, 'bad-b')])).stderr).toMatch(/need two results folders or more/);
    const empty = join(dir, 'empty');
    mkdirSync(empty);
    expect((await run([empty, join(dir, 'bad-b')])).stderr).toMatch(
      /no profile_export.jsonl in it or in its subfolders/,
    );
    const names = await run([join(dir, 'bad-a'), join(dir, 'bad-b')], { names: 'only-one' });
    expect(names.stderr).toBe(
      "capture-replay compare: --names gives 1 name(s) for 2 results folder(s)\nRun 'capture-replay compare --help' for the options.\n",
    );
    expect(names.code).toBe(2); // a usage error
  });
});
