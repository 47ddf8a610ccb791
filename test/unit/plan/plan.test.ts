import { describe, expect, it } from 'vitest';
import { buildPlan, validatePlanOptions, type PlanOptions } from '../../../lambdas/core/plan/plan';
import type { CaptureRecord } from '../../../lambdas/core/types';

const T0 = Date.UTC(2026, 3, 29, 0, 0, 0);

function rec(id: string, time: number, opts: { subSecond?: boolean; body?: string; contentType?: string } = {}): CaptureRecord {
  return {
    eventId: id,
    inferenceId: null,
    inferenceTimeMs: time,
    hasSubSecondTime: opts.subSecond ?? false,
    input: {
      contentType: opts.contentType ?? 'application/json',
      encoding: 'JSON',
      body: Buffer.from(opts.body ?? `{"model":"m","messages":[{"role":"user","content":"${id}"}]}`),
    },
    output: null,
    source: { file: 'f.jsonl', line: 1 },
  };
}

const base: PlanOptions = { runId: 'run', targetKind: 'openai-chat', timeScale: 1, intraSecond: 'spread' };
const offsets = (records: CaptureRecord[], o: Partial<PlanOptions> = {}) => buildPlan(records, { ...base, ...o }).requests.map((r) => [r.eventId, r.offsetMs]);

describe('ordering and the intra-second policy', () => {
  it('sorts by time, keeping capture order for ties', () => {
    const records = [rec('c', T0 + 2000), rec('a', T0), rec('b1', T0 + 1000), rec('b2', T0 + 1000)];
    expect(offsets(records, { intraSecond: 'burst' })).toEqual([['a', 0], ['b1', 1000], ['b2', 1000], ['c', 2000]]);
  });

  it.each([
    [1, [0]],
    [2, [0, 500]],
    [3, [0, 1000 / 3, 2000 / 3]],
    [4, [0, 250, 500, 750]],
  ])('spreads %i requests of one second evenly, in capture order', (k, expected) => {
    const records = Array.from({ length: k }, (_, i) => rec(`r${i}`, T0));
    expect(offsets(records).map(([, o]) => o)).toEqual(expected);
    expect(offsets(records).map(([id]) => id)).toEqual(records.map((r) => r.eventId));
  });

  it('leaves sub-second times alone and interleaves them with spread ones', () => {
    const records = [rec('w1', T0), rec('w2', T0), rec('frac', T0 + 300, { subSecond: true }), rec('next', T0 + 1000)];
    expect(offsets(records)).toEqual([['w1', 0], ['frac', 300], ['w2', 500], ['next', 1000]]);
  });

  it('burst keeps every request of a second at its start', () => {
    expect(offsets([rec('a', T0), rec('b', T0), rec('c', T0)], { intraSecond: 'burst' })).toEqual([['a', 0], ['b', 0], ['c', 0]]);
  });
});

describe('offsets and time scale', () => {
  const records = [0, 1000, 2000, 3000, 4000].map((ms, i) => rec(`r${i}`, T0 + ms));

  it('keeps [start, end] inclusive at both edges and starts the schedule at the start offset', () => {
    const plan = buildPlan(records, { ...base, startOffsetMs: 1000, endOffsetMs: 3000 });
    expect(plan.requests.map((r) => [r.eventId, r.offsetMs, r.index])).toEqual([['r1', 0, 0], ['r2', 1000, 1], ['r3', 2000, 2]]);
    expect(plan.excluded).toEqual({ outside_offset_window: 2 });
    expect(plan.scheduleZeroMs).toBe(T0);
    expect(plan.durationMs).toBe(2000);
  });

  it.each([
    [2, [0, 500, 1000, 1500, 2000]],
    [0.5, [0, 2000, 4000, 6000, 8000]],
  ])('time scale %f divides every offset', (timeScale, expected) => {
    expect(offsets(records, { timeScale }).map(([, o]) => o)).toEqual(expected);
  });

  it('applies the window in captured time, before the time scale', () => {
    expect(offsets(records, { startOffsetMs: 2000, timeScale: 2 })).toEqual([['r2', 0], ['r3', 500], ['r4', 1000]]);
  });
});

describe('limit and sample', () => {
  const many = Array.from({ length: 10_000 }, (_, i) => rec(`r${i}`, T0 + i * 10, { subSecond: true }));

  it('keeps the first n after the window', () => {
    const plan = buildPlan(many.slice(0, 10), { ...base, limit: 3, startOffsetMs: 20 });
    expect(plan.requests.map((r) => r.eventId)).toEqual(['r2', 'r3', 'r4']);
    expect(plan.excluded).toEqual({ outside_offset_window: 2, limit: 5 });
  });

  it('samples deterministically at about the rate, indices contiguous', () => {
    const a = buildPlan(many, { ...base, sampleRate: 0.25, seed: 7 });
    const b = buildPlan(many, { ...base, sampleRate: 0.25, seed: 7 });
    const c = buildPlan(many, { ...base, sampleRate: 0.25, seed: 8 });
    expect(a.requests.map((r) => r.eventId)).toEqual(b.requests.map((r) => r.eventId));
    expect(a.requests.map((r) => r.eventId)).not.toEqual(c.requests.map((r) => r.eventId));
    expect(a.requests.length).toBeGreaterThan(2300);
    expect(a.requests.length).toBeLessThan(2700);
    expect(a.excluded.sample).toBe(10_000 - a.requests.length);
    expect(a.requests.map((r) => r.index)).toEqual(a.requests.map((_, i) => i));
  });
});

describe('literal bodies and overrides', () => {
  const original = '{ "model":"m", "messages":[{"role":"user","content":"x"}], "temperature":0.2 }';

  it('sends the captured bytes untouched when no override applies', () => {
    const [r] = buildPlan([rec('a', T0, { body: original })], base).requests;
    expect(Buffer.from(r!.body).toString()).toBe(original);
    expect(r!.overrides).toEqual([]);
    expect(r!.streaming).toBe(false);
  });

  it('overrides the model, and nothing else', () => {
    const [r] = buildPlan([rec('a', T0, { body: original })], { ...base, modelOverride: 'other' }).requests;
    expect(JSON.parse(Buffer.from(r!.body).toString())).toEqual({ model: 'other', messages: [{ role: 'user', content: 'x' }], temperature: 0.2 });
    expect(r!.overrides).toEqual(['model']);
    const same = buildPlan([rec('a', T0, { body: original })], { ...base, modelOverride: 'm' }).requests[0]!;
    expect(Buffer.from(same.body).toString()).toBe(original);
  });

  it('forces streaming with usage, keeping other stream_options', () => {
    const body = '{"messages":[],"stream":false,"stream_options":{"continuous_usage_stats":true}}';
    const [r] = buildPlan([rec('a', T0, { body })], { ...base, forceStreaming: true }).requests;
    expect(JSON.parse(Buffer.from(r!.body).toString())).toEqual({ messages: [], stream: true, stream_options: { continuous_usage_stats: true, include_usage: true } });
    expect(r!.overrides).toEqual(['stream']);
    expect(r!.streaming).toBe(true);
  });

  it('leaves an already streaming body with usage byte for byte', () => {
    const body = '{"messages":[] ,"stream":true,"stream_options":{"include_usage":true}}';
    const [r] = buildPlan([rec('a', T0, { body })], { ...base, forceStreaming: true }).requests;
    expect(Buffer.from(r!.body).toString()).toBe(body);
    expect(r!.streaming).toBe(true);
    expect(r!.overrides).toEqual([]);
  });
});

describe('target compatibility', () => {
  const records = [
    rec('chat', T0),
    rec('csv', T0 + 1000, { contentType: 'text/csv', body: '1,2,3' }),
    rec('bin', T0 + 2000, { contentType: 'application/octet-stream', body: '\u0000\u0001' }),
    rec('json', T0 + 3000, { contentType: 'application/json; charset=utf-8', body: '{"instances":[[1,2]]}' }),
  ];

  it('a chat target takes chat JSON; the rest is planned, dropped with a reason', () => {
    const plan = buildPlan(records, base);
    expect(plan.requests.map((r) => r.eventId)).toEqual(['chat']);
    expect(plan.incompatible.map((i) => [i.request.eventId, i.reason, i.request.index, i.request.offsetMs])).toEqual([
      ['csv', 'unsupported_content_type', 1, 1000],
      ['bin', 'unsupported_content_type', 2, 2000],
      ['json', 'not_chat_request', 3, 3000],
    ]);
    expect(plan.incompatible.every((i) => !i.detail.includes('1,2,3'))).toBe(true);
  });

  it('a SageMaker target takes every content type as captured', () => {
    const plan = buildPlan(records, { ...base, targetKind: 'sagemaker', forceStreaming: true });
    expect(plan.incompatible).toEqual([]);
    expect(plan.requests.map((r) => Buffer.from(r.body).toString())).toEqual([
      expect.stringContaining('"stream":true'),
      '1,2,3',
      '\u0000\u0001',
      expect.stringContaining('"stream":true'),
    ]);
  });
});

describe('ids and validation', () => {
  it('correlation ids are deterministic per run and distinct per request', () => {
    const records = [rec('a', T0), rec('b', T0 + 5)];
    const one = buildPlan(records, base).requests.map((r) => r.correlationId);
    expect(buildPlan(records, base).requests.map((r) => r.correlationId)).toEqual(one);
    expect(new Set(one).size).toBe(2);
    expect(buildPlan(records, { ...base, runId: 'other' }).requests[0]!.correlationId).not.toBe(one[0]);
    expect(one[0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('reports every problem at once', () => {
    const problems = validatePlanOptions({ ...base, timeScale: 0, startOffsetMs: 10, endOffsetMs: 5, limit: 1.5, sampleRate: 2 });
    expect(problems).toHaveLength(4);
    expect(() => buildPlan([], { ...base, timeScale: -1 })).toThrow(/timeScale/);
  });

  it('plans nothing from nothing', () => {
    expect(buildPlan([], base)).toEqual({ requests: [], incompatible: [], excluded: {}, scheduleZeroMs: null, durationMs: 0 });
  });
});
