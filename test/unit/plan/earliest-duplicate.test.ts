/**
 * Copies of one record (same eventId and body) in several files: the EARLIEST by
 * inferenceTime is replayed, ties to the first seen (file order), whatever order the files
 * are read in; the others are counted as duplicates, each at its own file and line. Held on
 * every path that reads captures: the CLI's (readCaptures, LineIndex, localPlanner), the
 * ingest function's (one file: readCapturePass without a range), a scheduled window's
 * (readWindow: readCapturePass with the window's range), and buildPlan over records in memory.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LineIndex, localPlanner, readCaptures } from '../../../lambdas/adapters/local/capture-files';
import { DuplicateFilter } from '../../../lambdas/core/capture/duplicates';
import { IngestReportBuilder } from '../../../lambdas/core/capture/ingest-report';
import { readCapturePass } from '../../../lambdas/core/pipeline/capture-pass';
import { buildPlan, type PlanOptions } from '../../../lambdas/core/plan/plan';
import { readWindow } from '../../../lambdas/core/scheduled-runs/window-plan';
import type { CaptureRecord, IngestReport } from '../../../lambdas/core/types';
import { MemoryCaptureObjects } from '../../support/memory-captures';

const T0 = Date.UTC(2026, 3, 29, 0, 0, 0);
const at = (s: number) => `2026-04-29T00:00:0${s}Z`;
const NOW = Date.UTC(2026, 3, 30);
const OPTIONS: PlanOptions = { runId: 'dup', targetKind: 'sagemaker', timeScale: 1, intraSecond: 'spread' };

const line = (eventId: string, second: number, content = 'the same prompt') =>
  JSON.stringify({
    captureData: {
      endpointInput: {
        observedContentType: 'application/json',
        mode: 'INPUT',
        data: JSON.stringify({ messages: [{ role: 'user', content }] }),
        encoding: 'JSON',
      },
    },
    eventMetadata: { eventId, inferenceTime: at(second) },
    eventVersion: '0',
  });

/** The same event at :03, :02, :01 in files a, b, c (read in that order), and another event at :05 after the :03 copy. */
const FILES: [string, string[]][] = [
  ['a.jsonl', [line('E', 3), line('other', 5, 'another prompt')]],
  ['b.jsonl', [line('E', 2)]],
  ['c.jsonl', [line('E', 1)]],
];

let dir: string | null = null;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = null;
});

function folder(files: [string, string[]][]): string {
  dir = mkdtempSync(join(tmpdir(), 'cr-dup-'));
  for (const [name, lines] of files) writeFileSync(join(dir, name), lines.join('\n') + '\n');
  return dir;
}

/** Per file name: accepted, and the lines counted as duplicates. */
function byFile(report: IngestReport): Record<string, { accepted: number; duplicateLines: number[] }> {
  return Object.fromEntries(
    report.files.map((f) => [
      f.file.split('/').pop() as string,
      { accepted: f.accepted, duplicateLines: (f.examples.duplicate ?? []).map((e) => e.line) },
    ]),
  );
}

const EXPECTED_COUNTS = {
  'a.jsonl': { accepted: 1, duplicateLines: [1] },
  'b.jsonl': { accepted: 0, duplicateLines: [1] },
  'c.jsonl': { accepted: 1, duplicateLines: [] },
};

describe('duplicates keep the earliest copy by inferenceTime', () => {
  it('the CLI: the :01 copy of file c is replayed, the schedule starts at :01, a and b count theirs as duplicates', async () => {
    const root = folder(FILES);
    const report = new IngestReportBuilder();
    const index = new LineIndex();
    for await (const record of readCaptures(root, report, new DuplicateFilter())) index.add(record);
    const built = report.build();
    expect(built.totals).toMatchObject({ accepted: 2, rejected: 2, rejectedByReason: { duplicate: 2 } });
    expect(byFile(built)).toEqual(EXPECTED_COUNTS);
    const plan = await localPlanner(index)(OPTIONS);
    expect(plan.scheduleZeroMs).toBe(T0 + 1000);
    expect(plan.requests.map((r) => [r.eventId, r.source.file.split('/').pop(), r.offsetMs])).toEqual([
      ['E', 'c.jsonl', 0],
      ['other', 'a.jsonl', 4000],
    ]);
  });

  it('ties go to the copy read first (file order)', async () => {
    const root = folder([
      ['a.jsonl', [line('E', 2)]],
      ['b.jsonl', [line('E', 2)]],
    ]);
    const report = new IngestReportBuilder();
    const index = new LineIndex();
    for await (const record of readCaptures(root, report, new DuplicateFilter())) index.add(record);
    const plan = await localPlanner(index)(OPTIONS);
    expect(plan.requests.map((r) => r.source.file.split('/').pop())).toEqual(['a.jsonl']);
    expect(byFile(report.build())).toEqual({
      'a.jsonl': { accepted: 1, duplicateLines: [] },
      'b.jsonl': { accepted: 0, duplicateLines: [1] },
    });
  });

  it('the ingest function (one file): the earliest line is planned', async () => {
    const file = [line('E', 3), line('E', 2), line('E', 1)].join('\n') + '\n';
    async function* chunks() {
      yield Buffer.from(file);
    }
    const source = {
      name: 's3://b/k.jsonl',
      open: async () => ({ chunks: chunks(), readRange: async () => new Uint8Array() }),
      goneReason: 'gone',
    };
    const pass = await readCapturePass([source], { ...OPTIONS, kinds: ['sagemaker'], nowMs: NOW });
    const { plan, report } = pass;
    expect(plan.scheduleZeroMs).toBe(T0 + 1000);
    expect(plan.entries.map((e) => e.record.source.line)).toEqual([3]);
    expect(report.files[0]).toMatchObject({ accepted: 1, rejectedByReason: { duplicate: 2 } });
    expect(report.files[0]!.examples.duplicate!.map((e) => e.line).sort()).toEqual([1, 2]);
    expect(pass.notScheduled).toEqual({ duplicate: 2 });
  });

  it('a scheduled window: the :01 copy, counted once among the duplicates per copy left out', async () => {
    const captures = new MemoryCaptureObjects();
    for (const [name, lines] of FILES) captures.put(`dc/ep/v/2026/04/29/00/${name}`, lines.join('\n') + '\n');
    const files = await captures.listObjects('dc/');
    const pass = await readWindow(
      captures,
      files,
      { startMs: T0, endMs: T0 + 3600_000 },
      { ...OPTIONS, kinds: ['sagemaker'], nowMs: NOW },
    );
    expect(pass.counts).toMatchObject({ inWindow: 4, duplicates: 2 });
    expect(pass.plan.scheduleZeroMs).toBe(T0 + 1000);
    expect(pass.plan.entries.map((e) => [e.record.source.file.split('/').pop(), e.offsetMs])).toEqual([
      ['c.jsonl', 0],
      ['a.jsonl', 4000],
    ]);
  });

  it('buildPlan over records in memory leaves out the copies an earlier one superseded', async () => {
    const root = folder(FILES);
    const records: CaptureRecord[] = [];
    for await (const record of readCaptures(root, new IngestReportBuilder(), new DuplicateFilter()))
      records.push(record);
    const plan = buildPlan(records, OPTIONS);
    expect(plan.scheduleZeroMs).toBe(T0 + 1000);
    expect(plan.requests.map((r) => r.source.file.split('/').pop())).toEqual(['c.jsonl', 'a.jsonl']);
  });
});
