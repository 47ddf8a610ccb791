/**
 * Amplified replay (plan.ts rule 4, amplify.ts): k times the requests over the same duration,
 * the captured inter-arrival distribution scaled by 1/k (a two-sample KS test that the
 * synchronized placement fails), each copy its own request carrying its event and copy
 * index, the same schedule from both planners, and pairing by event + copy.
 */
import { describe, expect, it } from 'vitest';
import { ColumnsBuilder } from '../../../lambdas/core/compare/columns';
import { computeProfileRecord } from '../../../lambdas/core/metrics/record-metrics';
import { decodeResultLines, encodeResultLines } from '../../../lambdas/core/pipeline/results';
import { fromWire, shardMessageSchema, toWire } from '../../../lambdas/core/pipeline/shards';
import { amplifiedCount, amplify, MAX_AMPLIFY } from '../../../lambdas/core/plan/amplify';
import {
  buildPlan,
  materializePlan,
  planIndexed,
  validatePlanOptions,
  type PlanOptions,
} from '../../../lambdas/core/plan/plan';
import { seededRandom } from '../../../lambdas/core/random';
import type { CaptureRecord } from '../../../lambdas/core/types';
import { ksStatistic, ksTwoSample } from '../../support/ks';

const T0 = Date.UTC(2026, 3, 29, 0, 0, 0);
const base: PlanOptions = { runId: 'run', targetKind: 'openai-chat', timeScale: 1, intraSecond: 'spread' };

function rec(i: number, time: number, subSecond = true): CaptureRecord {
  const eventId = `ev-${i}`;
  return {
    eventId,
    inferenceId: null,
    inferenceTimeMs: time,
    hasSubSecondTime: subSecond,
    input: {
      contentType: 'application/json',
      encoding: 'JSON',
      body: Buffer.from(`{"messages":[{"role":"user","content":"${eventId}"}]}`),
    },
    output: null,
    source: { file: 'f.jsonl', line: i + 1 },
  };
}

/**
 * Bursty traffic, nothing like Poisson: 70 % of gaps short (exponential, mean 40 ms), 30 %
 * long (mean 1.5 s), so the inter-arrival distribution has a shape a bad placement loses.
 */
function burstyCapture(n: number, seed = 7): CaptureRecord[] {
  const random = seededRandom(seed);
  let t = T0;
  return Array.from({ length: n }, (_, i) => {
    if (i > 0) t += -Math.log(1 - random()) * (random() < 0.7 ? 40 : 1500);
    return rec(i, Math.round(t * 1000) / 1000);
  });
}

const gaps = (offsets: readonly number[]) => offsets.slice(1).map((o, i) => o - (offsets[i] as number));

describe('amplify 3 on a bursty capture', () => {
  const n = 400;
  const records = burstyCapture(n);
  const captured = buildPlan(records, base);
  const amplified = buildPlan(records, { ...base, amplify: 3 });

  it('sends 3n requests over the same duration (longer by at most one mean gap)', () => {
    expect(amplified.requests).toHaveLength(3 * n);
    const meanGap = captured.durationMs / (n - 1);
    expect(amplified.durationMs).toBeGreaterThanOrEqual(captured.durationMs);
    expect(amplified.durationMs).toBeLessThanOrEqual(captured.durationMs + meanGap);
    expect(amplified.requests.map((r) => r.index)).toEqual(Array.from({ length: 3 * n }, (_, i) => i));
    expect(amplified.timing?.amplification).toEqual({ factor: 3, capturedRequests: n, scheduledRequests: 3 * n });
    expect(amplified.requests.findIndex((r, i) => i > 0 && r.offsetMs < amplified.requests[i - 1]!.offsetMs)).toBe(-1); // in time order
  });

  it('keeps the captured inter-arrival distribution scaled by 1/3; synchronized copies fail the same test', () => {
    const capturedScaled = gaps(captured.requests.map((r) => r.offsetMs)).map((g) => g / 3);
    const ours = ksTwoSample(gaps(amplified.requests.map((r) => r.offsetMs)), capturedScaled);
    expect(ours.pValue).toBeGreaterThan(0.5);
    expect(ours.statistic).toBeLessThan(0.01);
    // The placement the issue rules out: the k copies of each request at its instant.
    const synchronized = captured.requests.flatMap((r) => [r.offsetMs, r.offsetMs, r.offsetMs]);
    const sync = ksTwoSample(gaps(synchronized), capturedScaled);
    expect(sync.pValue).toBeLessThan(1e-6);
    expect(sync.statistic).toBeGreaterThan(0.6);
  });

  it('keeps the shape over time: each tenth of the schedule holds 3x the captured requests of that tenth', () => {
    const tenth = captured.durationMs / 10;
    const count = (offsets: number[], k: number) =>
      offsets.filter((o) => o >= k * tenth && (k === 9 || o < (k + 1) * tenth)).length;
    const capturedOffsets = captured.requests.map((r) => r.offsetMs);
    const amplifiedOffsets = amplified.requests.map((r) => r.offsetMs).filter((o) => o <= captured.durationMs);
    for (let k = 0; k < 10; k++)
      expect(Math.abs(count(amplifiedOffsets, k) - 3 * count(capturedOffsets, k))).toBeLessThanOrEqual(3);
  });

  it('makes each copy its own request: copy 0 the captured one at its instant, copies 1 and 2 in the gap after it', () => {
    const byEvent = new Map<string, typeof amplified.requests>();
    for (const r of amplified.requests) byEvent.set(r.eventId, [...(byEvent.get(r.eventId) ?? []), r]);
    expect(byEvent.size).toBe(n);
    captured.requests.forEach((original, i) => {
      const copies = byEvent.get(original.eventId)!;
      expect(copies.map((c) => c.copy)).toEqual([0, 1, 2]);
      expect(copies[0]!.offsetMs).toBe(original.offsetMs);
      const next = captured.requests[i + 1]?.offsetMs ?? Infinity;
      for (const c of copies.slice(1)) expect(c.offsetMs).toBeLessThan(next);
      expect(copies.every((c) => c.captureTimeMs === original.captureTimeMs && c.body === original.body)).toBe(true);
    });
    expect(new Set(amplified.requests.map((r) => r.correlationId)).size).toBe(3 * n);
    // Distinct captured instants: no instant gets more than one request.
    expect(new Set(amplified.requests.map((r) => r.offsetMs)).size).toBe(3 * n);
  });

  it('an unamplified plan has no copy field (outputs unchanged), nor does amplify 1', () => {
    expect(captured.requests.some((r) => 'copy' in r)).toBe(false);
    expect(buildPlan(records, { ...base, amplify: 1 })).toEqual(captured);
  });

  it('the two-pass planner (the pipeline and the CLI) gives the same amplified plan', () => {
    const options = { ...base, amplify: 3 };
    const index = records.map((r) => ({
      eventId: r.eventId,
      inferenceTimeMs: r.inferenceTimeMs,
      hasSubSecondTime: r.hasSubSecondTime,
      source: r.source,
      span: { start: 0, end: 1 },
    }));
    const indexed = planIndexed(index, options);
    expect(indexed.entries.map((e) => e.copy)).toEqual(amplified.requests.map((r) => r.copy));
    const byId = new Map(records.map((r) => [r.eventId, r]));
    expect(
      materializePlan(
        indexed,
        indexed.entries.map((e) => byId.get(e.record.eventId)!),
        options,
      ),
    ).toEqual(amplified);
  });
});

describe('fractional and small factors', () => {
  const records = burstyCapture(101, 3);

  it.each([1.5, 2.5, 3.7])('amplify %f sends ceil(k n) requests, floor(k) or ceil(k) copies of each', (k) => {
    const plan = buildPlan(records, { ...base, amplify: k });
    expect(plan.requests).toHaveLength(Math.ceil(k * records.length));
    expect(Math.abs(plan.requests.length - k * records.length)).toBeLessThanOrEqual(1);
    const perEvent = new Map<string, number>();
    for (const r of plan.requests) perEvent.set(r.eventId, (perEvent.get(r.eventId) ?? 0) + 1);
    for (const copies of perEvent.values()) expect([Math.floor(k), Math.ceil(k)]).toContain(copies);
    // Same options, same schedule.
    expect(buildPlan(records, { ...base, amplify: k, seed: 99 })).toEqual(plan);
  });

  it('k < 1 is sampling at rate k: the same requests --sample k keeps', () => {
    expect(buildPlan(records, { ...base, amplify: 0.4, seed: 5 })).toEqual(
      buildPlan(records, { ...base, sampleRate: 0.4, seed: 5 }),
    );
    expect(buildPlan(records, { ...base, amplify: 0.5, sampleRate: 0.8, seed: 5 })).toEqual(
      buildPlan(records, { ...base, sampleRate: 0.4, seed: 5 }),
    );
  });

  it('limit counts captured requests, before their copies', () => {
    expect(buildPlan(records, { ...base, limit: 10, amplify: 2 }).requests).toHaveLength(20);
  });

  it('a lone request gets its copies spread over a second', () => {
    expect(buildPlan([rec(0, T0)], { ...base, amplify: 4 }).requests.map((r) => r.offsetMs)).toEqual([
      0, 250, 500, 750,
    ]);
  });

  it('amplifiedCount agrees with amplify at awkward factors', () => {
    for (const k of [1.1, 1.3, 2.1, 7.3, 10, 33.3]) {
      for (const n of [1, 7, 10, 99]) {
        const rows = amplify(
          Array.from({ length: n }, (_, i) => i * 10),
          k,
          1000,
        );
        expect(rows.source.length).toBe(amplifiedCount(n, k));
        expect(Math.abs(rows.source.length - k * n)).toBeLessThan(1 + 1e-9);
      }
    }
  });

  it(
    "copies share their record's planned body, rewritten or not: one buffer per captured request, not per copy " +
      '(issue 32, finding 11)',
    () => {
      for (const options of [{}, { forceStreaming: true }, { modelOverride: 'm', forceStreaming: true }]) {
        const plan = buildPlan(records.slice(0, 10), { ...base, ...options, amplify: 50 });
        expect(plan.requests).toHaveLength(500);
        expect(new Set(plan.requests.map((r) => r.body)).size).toBe(10);
      }
    },
  );

  it('refuses a factor that is not a number in (0, MAX_AMPLIFY]', () => {
    for (const bad of [0, -1, NaN, Infinity, MAX_AMPLIFY + 1])
      expect(validatePlanOptions({ ...base, amplify: bad })).toEqual([
        { field: 'amplify', message: `must be a number in (0, ${MAX_AMPLIFY}] (got ${bad})` },
      ]);
  });
});

describe('pairing an amplified run request by request', () => {
  it('keys a record by its event and copy index: copy 0 pairs with the unamplified request', () => {
    const columns = new ColumnsBuilder('A');
    const record = (event: string, copy: number, session: number) => ({
      metadata: { session_num: session },
      metrics: {},
      error: null,
      capture_replay: { capture_event_id: event, capture_copy: copy },
    });
    columns.addRecord(record('e1', 1, 1));
    columns.addRecord(record('e1', 0, 0));
    columns.addRecord(record('e2', 0, 2));
    columns.addDropped('e2~1', 'late_beyond_tolerance', null, 3);
    expect(columns.build().keys).toEqual(['e1~1#0', 'e1#0', 'e2#0', 'e2~1#0']);
  });

  it('the copy index travels in a shard message and lands in the record, outside AIPerf metadata', async () => {
    const request = buildPlan(burstyCapture(3), { ...base, amplify: 2 }).requests[3]!;
    expect(request.copy).toBe(1);
    const message = shardMessageSchema.parse(
      JSON.parse(
        JSON.stringify({
          v: 1,
          kind: 'shard',
          runId: 'r',
          target: 'A',
          shardId: '0-0',
          startNs: '0',
          firstDueNs: '0',
          hops: 0,
          requests: [toWire(request, null)],
        }),
      ),
    );
    const back = await fromWire(message.requests[0]!, () => Promise.resolve(null));
    expect(back.copy).toBe(1);
    const result = {
      requestStartNs: 1n,
      requestAckNs: 2n,
      requestEndNs: 3n,
      contentChunkNs: [],
      httpStatus: 200,
      usage: null,
      error: null,
    };
    const record = computeProfileRecord(
      { request: back, target: 'A', requestId: 'x', scheduledNs: 0n, workerId: 'w', result, dropReason: null },
      'p',
    );
    expect(record.capture_replay.capture_copy).toBe(1);
    expect(Object.keys(record.metadata)).not.toContain('capture_copy');
    const [line] = decodeResultLines(encodeResultLines([{ kind: 'record', record }]), 'k');
    expect(line?.kind === 'record' && line.record.capture_replay.capture_copy).toBe(1);
  });

  it('checks the KS helper against scipy.stats.ks_2samp on fixed data', () => {
    const a = [0.5, 1.2, 0.3, 2.2, 0.9, 1.7, 0.1, 3.1, 0.8, 1.1, 0.4, 2.6];
    const b = [0.2, 0.15, 0.9, 0.05, 0.4, 0.6, 0.33, 1.2, 0.11, 0.7];
    // scipy 1.17: ks_2samp(a, b).statistic; kstwobign.sf(sqrt(nm/(n+m)) * D)
    expect(ksStatistic(a, b)).toBeCloseTo(0.46666666666666673, 12);
    expect(ksTwoSample(a, b).pValue).toBeCloseTo(0.1857388510827893, 9);
  });
});
