/**
 * The capture generator: exact counts per second, whole-second times, unique ids, bodies of
 * the asked size that the real parser accepts without a rejection, determinism under a seed,
 * and streaming in chunks of whole lines.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DuplicateFilter } from '../../../lambdas/core/capture/duplicates';
import { IngestReportBuilder } from '../../../lambdas/core/capture/ingest-report';
import { parseCaptureStream } from '../../../lambdas/core/capture/stream';
import {
  captureBuffer,
  captureChunks,
  captureLines,
  secondCounts,
  statsOf,
  wholeSecondIso,
  writeCaptureFile,
  type CaptureGenOptions,
} from '../../support/capture-gen';

const START = Date.UTC(2026, 3, 29, 0, 3, 18);
const base: CaptureGenOptions = { ratePerSecond: 50, durationSeconds: 4, startTime: START };
const dir = mkdtempSync(join(tmpdir(), 'capture-gen-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Line {
  captureData: {
    endpointInput: { data: string; encoding: string; observedContentType: string; mode: string };
    endpointOutput: { data: string; encoding: string };
  };
  eventMetadata: { eventId: string; inferenceId?: string; inferenceTime: string };
  eventVersion: string;
}
const parse = (options: CaptureGenOptions) => [...captureLines(options)].map((l) => JSON.parse(l) as Line);

describe('captureLines', () => {
  it('writes exactly rate x duration records, the same count in every second, in whole-second times', () => {
    const lines = parse(base);
    expect(lines).toHaveLength(200);
    const perSecond = new Map<string, number>();
    for (const l of lines)
      perSecond.set(l.eventMetadata.inferenceTime, (perSecond.get(l.eventMetadata.inferenceTime) ?? 0) + 1);
    expect([...perSecond.entries()]).toEqual([
      ['2026-04-29T00:03:18Z', 50],
      ['2026-04-29T00:03:19Z', 50],
      ['2026-04-29T00:03:20Z', 50],
      ['2026-04-29T00:03:21Z', 50],
    ]);
  });

  it('spreads fractional rates evenly and floors the total', () => {
    expect([...secondCounts({ ratePerSecond: 2.5, durationSeconds: 4 }, () => 0)]).toEqual([2, 3, 2, 3]);
    expect([...captureLines({ ...base, ratePerSecond: 2.5, durationSeconds: 3.5 })]).toHaveLength(8);
  });

  it('draws Poisson counts per second around the rate when asked', () => {
    const counts = [...secondCounts({ ratePerSecond: 200, durationSeconds: 200, arrivals: 'poisson' }, Math.random)];
    const mean = counts.reduce((a, b) => a + b, 0) / counts.length;
    expect(mean).toBeGreaterThan(190);
    expect(mean).toBeLessThan(210);
    expect(new Set(counts).size).toBeGreaterThan(5);
  });

  it('gives unique UUID-shaped eventIds and some inferenceIds', () => {
    const lines = parse({ ...base, ratePerSecond: 500 });
    const ids = lines.map((l) => l.eventMetadata.eventId);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const withInferenceId = lines.filter((l) => l.eventMetadata.inferenceId).length;
    expect(withInferenceId / lines.length).toBeGreaterThan(0.1);
    expect(withInferenceId / lines.length).toBeLessThan(0.3);
  });

  it('writes chat bodies near the asked size, JSON-encoded, with an OpenAI-style answer carrying usage', () => {
    for (const bodyBytes of [1300, 4000]) {
      const lines = parse({ ...base, bodyBytes });
      for (const l of lines) {
        expect(l.eventVersion).toBe('0');
        const input = l.captureData.endpointInput;
        expect(input).toMatchObject({ encoding: 'JSON', observedContentType: 'application/json', mode: 'INPUT' });
        expect(Buffer.byteLength(input.data)).toBeGreaterThan(bodyBytes * 0.85);
        expect(Buffer.byteLength(input.data)).toBeLessThan(bodyBytes * 1.15);
        const body = JSON.parse(input.data) as {
          model: string;
          messages: { role: string; content: string }[];
          max_tokens: number;
        };
        expect(body.model).toBe('llama-3-8b-instruct');
        expect(body.messages.at(-1)?.role).toBe('user');
        expect(body.max_tokens).toBeGreaterThan(0);
        const answer = JSON.parse(l.captureData.endpointOutput.data) as {
          object: string;
          usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
        };
        expect(answer.object).toBe('chat.completion');
        expect(answer.usage.total_tokens).toBe(answer.usage.prompt_tokens + answer.usage.completion_tokens);
      }
    }
  });

  it('is a pure function of its options: same seed, same bytes; another seed, other bytes, same timing', () => {
    expect(captureBuffer(base).equals(captureBuffer(base))).toBe(true);
    const other = parse({ ...base, seed: 2 });
    const first = parse(base);
    expect(other.map((l) => l.eventMetadata.eventId)).not.toEqual(first.map((l) => l.eventMetadata.eventId));
    expect(other.map((l) => l.eventMetadata.inferenceTime)).toEqual(first.map((l) => l.eventMetadata.inferenceTime));
  });

  it('stops at maxBytes (the line that crosses it is the last)', () => {
    const lines = [...captureLines({ ...base, durationSeconds: 1000, maxBytes: 100_000 })];
    const bytes = lines.reduce((n, l) => n + Buffer.byteLength(l), 0);
    expect(bytes).toBeGreaterThanOrEqual(100_000);
    expect(bytes - Buffer.byteLength(lines.at(-1)!)).toBeLessThan(100_000);
  });

  it('rejects nonsense options', () => {
    expect(() => [...captureLines({ ...base, ratePerSecond: 0 })]).toThrow(RangeError);
    expect(() => [...captureLines({ ...base, durationSeconds: Number.NaN })]).toThrow(RangeError);
    expect(() => [...captureLines({ ...base, startTime: Number.NaN })]).toThrow(RangeError);
  });

  it('formats times as SageMaker does', () => {
    expect(wholeSecondIso(Date.UTC(2026, 3, 29, 0, 3, 18, 999))).toBe('2026-04-29T00:03:18Z');
  });
});

describe('streaming', () => {
  it('cuts chunks of whole lines that add up to the same bytes', () => {
    const chunks = [...captureChunks({ ...base, ratePerSecond: 200 }, 64 * 1024)];
    expect(chunks.length).toBeGreaterThan(5);
    for (const c of chunks) expect(c.at(-1)).toBe(10);
    expect(Buffer.concat(chunks).equals(captureBuffer({ ...base, ratePerSecond: 200 }))).toBe(true);
  });

  it('writes a file whose counts match the stream, and which the real parser accepts whole', async () => {
    const options = { ...base, ratePerSecond: 120 };
    const path = join(dir, 'capture.jsonl');
    const written = await writeCaptureFile(path, options, 32 * 1024);
    const stats = statsOf(captureLines(options));
    expect(written).toEqual({ records: 480, bytes: stats.bytes });
    expect(stats).toMatchObject({ records: 480, firstTimeMs: START, lastTimeMs: START + 3000 });
    const file = readFileSync(path);
    expect(file.length).toBe(stats.bytes);

    const report = new IngestReportBuilder();
    let records = 0;
    const chunks = async function* () {
      yield file;
    };
    for await (const r of parseCaptureStream(chunks(), 'file.jsonl', report, new DuplicateFilter())) if (r) records++;
    const { totals } = report.build();
    expect(records).toBe(480);
    expect(totals).toMatchObject({ accepted: 480, rejected: 0 });
  });
});
