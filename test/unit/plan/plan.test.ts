import { describe, expect, it } from 'vitest';
import {
  buildPlan,
  eventIdHash,
  sampleKeeps,
  validatePlanOptions,
  type PlanField,
  type PlanOptions,
} from '../../../lambdas/core/plan/plan';
import type { CaptureRecord, IntraSecondPolicy, TargetKind } from '../../../lambdas/core/types';

const T0 = Date.UTC(2026, 3, 29, 0, 0, 0);

function rec(
  id: string,
  time: number,
  opts: { subSecond?: boolean; body?: string; contentType?: string } = {},
): CaptureRecord {
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
const offsets = (records: CaptureRecord[], o: Partial<PlanOptions> = {}) =>
  buildPlan(records, { ...base, ...o }).requests.map((r) => [r.eventId, r.offsetMs]);

describe('ordering and the intra-second policy', () => {
  it('sorts by time, keeping capture order for ties', () => {
    const records = [rec('c', T0 + 2000), rec('a', T0), rec('b1', T0 + 1000), rec('b2', T0 + 1000)];
    expect(offsets(records, { intraSecond: 'burst' })).toEqual([
      ['a', 0],
      ['b1', 1000],
      ['b2', 1000],
      ['c', 2000],
    ]);
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
    expect(offsets(records)).toEqual([
      ['w1', 0],
      ['frac', 300],
      ['w2', 500],
      ['next', 1000],
    ]);
  });

  it('burst keeps every request of a second at its start', () => {
    expect(offsets([rec('a', T0), rec('b', T0), rec('c', T0)], { intraSecond: 'burst' })).toEqual([
      ['a', 0],
      ['b', 0],
      ['c', 0],
    ]);
  });
});

describe('offsets and time scale', () => {
  const records = [0, 1000, 2000, 3000, 4000].map((ms, i) => rec(`r${i}`, T0 + ms));

  it('keeps [start, end] inclusive at both edges and starts the schedule at the start offset', () => {
    const plan = buildPlan(records, { ...base, startOffsetMs: 1000, endOffsetMs: 3000 });
    expect(plan.requests.map((r) => [r.eventId, r.offsetMs, r.index])).toEqual([
      ['r1', 0, 0],
      ['r2', 1000, 1],
      ['r3', 2000, 2],
    ]);
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
    expect(offsets(records, { startOffsetMs: 2000, timeScale: 2 })).toEqual([
      ['r2', 0],
      ['r3', 500],
      ['r4', 1000],
    ]);
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
    expect(JSON.parse(Buffer.from(r!.body).toString())).toEqual({
      model: 'other',
      messages: [{ role: 'user', content: 'x' }],
      temperature: 0.2,
    });
    expect(r!.overrides).toEqual(['model']);
    const same = buildPlan([rec('a', T0, { body: original })], { ...base, modelOverride: 'm' }).requests[0]!;
    expect(Buffer.from(same.body).toString()).toBe(original);
  });

  it('forces streaming with usage, keeping other stream_options', () => {
    const body = '{"messages":[],"stream":false,"stream_options":{"continuous_usage_stats":true}}';
    const [r] = buildPlan([rec('a', T0, { body })], { ...base, forceStreaming: true }).requests;
    expect(JSON.parse(Buffer.from(r!.body).toString())).toEqual({
      messages: [],
      stream: true,
      stream_options: { continuous_usage_stats: true, include_usage: true },
    });
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
      '{"instances":[[1,2]]}', // not a chat body: never given chat fields
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
    const problems = validatePlanOptions({
      ...base,
      timeScale: 0,
      startOffsetMs: 10,
      endOffsetMs: 5,
      limit: 1.5,
      sampleRate: 2,
    });
    expect(problems).toHaveLength(4);
    expect(() => buildPlan([], { ...base, timeScale: -1 })).toThrow(/timeScale/);
  });

  it('plans nothing from nothing', () => {
    expect(buildPlan([], base)).toEqual({
      requests: [],
      incompatible: [],
      excluded: {},
      scheduleZeroMs: null,
      durationMs: 0,
      timing: {
        intraSecond: base.intraSecond,
        wholeSecondRecords: 0,
        exactTimeRecords: 0,
        spreadRecords: 0,
        maxSpreadMs: 0,
      },
    });
  });
});

describe('ordering and intra-second policy, more cases', () => {
  const ids = (records: CaptureRecord[], o: Partial<PlanOptions> = {}) => offsets(records, o);

  it.each<[string, IntraSecondPolicy, CaptureRecord[], [string, number][]]>([
    [
      'unsorted input, ties spread in capture order',
      'spread',
      [rec('c', T0 + 2000), rec('b1', T0 + 1000), rec('a', T0), rec('b2', T0 + 1000)],
      [
        ['a', 0],
        ['b1', 1000],
        ['b2', 1500],
        ['c', 2000],
      ],
    ],
    [
      'several seconds, each with its own k',
      'spread',
      [rec('x1', T0), rec('y1', T0 + 1000), rec('x2', T0), rec('z1', T0 + 2000), rec('x3', T0), rec('z2', T0 + 2000)],
      [
        ['x1', 0],
        ['x2', 1000 / 3],
        ['x3', 2000 / 3],
        ['y1', 1000],
        ['z1', 2000],
        ['z2', 2500],
      ],
    ],
    [
      'a fractional time on the second itself is not part of k, and ties by capture order',
      'spread',
      [rec('frac', T0, { subSecond: true }), rec('w1', T0), rec('w2', T0)],
      [
        ['frac', 0],
        ['w1', 0],
        ['w2', 500],
      ],
    ],
    [
      'burst with a fractional time inside the second',
      'burst',
      [rec('w1', T0), rec('frac', T0 + 300, { subSecond: true }), rec('w2', T0)],
      [
        ['w1', 0],
        ['w2', 0],
        ['frac', 300],
      ],
    ],
    [
      'burst keeps unsorted ties in capture order',
      'burst',
      [rec('b', T0 + 1000), rec('a2', T0), rec('a1', T0)],
      [
        ['a2', 0],
        ['a1', 0],
        ['b', 1000],
      ],
    ],
  ])('%s', (_name, intraSecond, records, expected) => {
    expect(ids(records, { intraSecond })).toEqual(expected);
  });

  it('captureTimeMs is the spread capture time, before offsets and time scale', () => {
    const plan = buildPlan([rec('a', T0 + 5000), rec('b', T0 + 5000), rec('c', T0 + 7000)], {
      ...base,
      timeScale: 4,
      startOffsetMs: 500,
    });
    expect(plan.requests.map((r) => [r.eventId, r.captureTimeMs, r.offsetMs])).toEqual([
      ['b', T0 + 5500, 0],
      ['c', T0 + 7000, 1500 / 4],
    ]);
    expect(plan.scheduleZeroMs).toBe(T0 + 5000);
    expect(plan.durationMs).toBe(1500 / 4);
  });
});

describe('offset window edges', () => {
  // Spread puts these at 0, 250, 500, 750 ms, then 1000 ms.
  const records = [rec('a', T0), rec('b', T0), rec('c', T0), rec('d', T0), rec('e', T0 + 1000)];

  it.each<[string, Partial<PlanOptions>, [string, number][], number | undefined]>([
    [
      'start only',
      { startOffsetMs: 500 },
      [
        ['c', 0],
        ['d', 250],
        ['e', 500],
      ],
      2,
    ],
    [
      'end only',
      { endOffsetMs: 250 },
      [
        ['a', 0],
        ['b', 250],
      ],
      3,
    ],
    [
      'start and end on spread times',
      { startOffsetMs: 250, endOffsetMs: 750 },
      [
        ['b', 0],
        ['c', 250],
        ['d', 500],
      ],
      2,
    ],
    ['a single instant', { startOffsetMs: 1000, endOffsetMs: 1000 }, [['e', 0]], 4],
    ['between two requests', { startOffsetMs: 251, endOffsetMs: 499 }, [], 5],
    ['zero start is the first request', { startOffsetMs: 0, endOffsetMs: 0 }, [['a', 0]], 4],
  ])('%s', (_name, window, expected, outside) => {
    const plan = buildPlan(records, { ...base, ...window });
    expect(plan.requests.map((r) => [r.eventId, r.offsetMs])).toEqual(expected);
    expect(plan.excluded.outside_offset_window).toBe(outside);
    expect(plan.scheduleZeroMs).toBe(T0);
    expect(plan.durationMs).toBe(expected.at(-1)?.[1] ?? 0);
  });
});

describe('sample then limit', () => {
  const many = Array.from({ length: 10_000 }, (_, i) => rec(`r${i}`, T0 + i * 10, { subSecond: true }));

  it('keeps about 10% at rate 0.1 (within 4 standard deviations: 1000 +- 120)', () => {
    const kept = buildPlan(many, { ...base, sampleRate: 0.1, seed: 12345 }).requests.length;
    expect(kept).toBeGreaterThanOrEqual(880);
    expect(kept).toBeLessThanOrEqual(1120);
  });

  it('limits what sampling kept, and counts both', () => {
    const sampled = buildPlan(many, { ...base, sampleRate: 0.5, seed: 3 });
    const both = buildPlan(many, { ...base, sampleRate: 0.5, seed: 3, limit: 100 });
    expect(both.requests.map((r) => r.eventId)).toEqual(sampled.requests.slice(0, 100).map((r) => r.eventId));
    expect(both.excluded.sample).toBe(sampled.excluded.sample);
    expect(both.excluded.limit).toBe(sampled.requests.length - 100);
    expect((both.excluded.sample ?? 0) + (both.excluded.limit ?? 0) + both.requests.length).toBe(10_000);
  });

  it('rate 1 keeps everything and counts nothing; a limit above the count changes nothing', () => {
    const plan = buildPlan(many.slice(0, 50), { ...base, sampleRate: 1, seed: 9, limit: 50 });
    expect(plan.requests).toHaveLength(50);
    expect(plan.excluded).toEqual({});
  });

  it('a request is kept or left out by its event id, whatever else is planned with it (a window, a file, a folder)', () => {
    const whole = buildPlan(many.slice(0, 1000), { ...base, sampleRate: 0.3, seed: 5 }).requests.map((r) => r.eventId);
    const secondHalf = buildPlan(many.slice(500, 1000), { ...base, sampleRate: 0.3, seed: 5 }).requests.map(
      (r) => r.eventId,
    );
    const ids = new Set(many.slice(500, 1000).map((r) => r.eventId));
    expect(secondHalf).toEqual(whole.filter((id) => ids.has(id)));
    // The compact index decides on the same hash.
    for (const r of many.slice(0, 200))
      expect(sampleKeeps(eventIdHash(r.eventId), 0.3, 5)).toBe(whole.includes(r.eventId));
  });

  it('the seed defaults to a fixed value, so unseeded sampling is reproducible too', () => {
    const a = buildPlan(many.slice(0, 500), { ...base, sampleRate: 0.3 }).requests.map((r) => r.eventId);
    const b = buildPlan(many.slice(0, 500), { ...base, sampleRate: 0.3, seed: 1 }).requests.map((r) => r.eventId);
    expect(a).toEqual(b);
  });

  it('incompatible requests take part in the limit and the indices', () => {
    const records = [
      rec('chat0', T0),
      rec('csv', T0 + 1000, { contentType: 'text/csv', body: '1' }),
      rec('chat1', T0 + 2000),
      rec('chat2', T0 + 3000),
    ];
    const plan = buildPlan(records, { ...base, limit: 3 });
    expect(plan.requests.map((r) => [r.eventId, r.index])).toEqual([
      ['chat0', 0],
      ['chat1', 2],
    ]);
    expect(plan.incompatible.map((i) => [i.request.eventId, i.request.index])).toEqual([['csv', 1]]);
    expect(plan.excluded).toEqual({ limit: 1 });
  });
});

describe('overrides, more cases', () => {
  const body = (r: { body: Uint8Array }) => Buffer.from(r.body).toString();
  const one = (b: string, o: Partial<PlanOptions>, contentType = 'application/json') =>
    buildPlan([rec('a', T0, { body: b, contentType })], { ...base, targetKind: 'sagemaker', ...o }).requests[0]!;

  it('model and stream together, every other field kept', () => {
    const r = one('{"model":"m","messages":[],"tools":[{"type":"function"}],"temperature":0}', {
      modelOverride: 'n',
      forceStreaming: true,
    });
    expect(JSON.parse(body(r))).toEqual({
      model: 'n',
      messages: [],
      tools: [{ type: 'function' }],
      temperature: 0,
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(r.overrides).toEqual(['model', 'stream']);
    expect(r.streaming).toBe(true);
  });

  it('adds the model when the body has none', () => {
    const r = one('{"messages":[]}', { modelOverride: 'n' });
    expect(JSON.parse(body(r))).toEqual({ messages: [], model: 'n' });
    expect(r.overrides).toEqual(['model']);
  });

  it.each<[string, string, string[], boolean, unknown]>([
    [
      'streams without usage: usage added',
      '{"messages":[],"stream":true}',
      ['stream'],
      true,
      { messages: [], stream: true, stream_options: { include_usage: true } },
    ],
    [
      'stream_options not an object: replaced',
      '{"messages":[],"stream_options":null}',
      ['stream'],
      true,
      { messages: [], stream: true, stream_options: { include_usage: true } },
    ],
    [
      'include_usage false: set true',
      '{"messages":[],"stream":true,"stream_options":{"include_usage":false}}',
      ['stream'],
      true,
      { messages: [], stream: true, stream_options: { include_usage: true } },
    ],
  ])('force streaming when the body %s', (_name, input, overrides, streaming, expected) => {
    const r = one(input, { forceStreaming: true });
    expect(JSON.parse(body(r))).toEqual(expected);
    expect(r.overrides).toEqual(overrides);
    expect(r.streaming).toBe(streaming);
  });

  it('a captured streaming body is streaming without any override', () => {
    const input = '{"messages":[],"stream":true}';
    const r = one(input, {});
    expect(body(r)).toBe(input);
    expect([r.streaming, r.overrides]).toEqual([true, []]);
  });

  it.each<[string, string, string]>([
    ['CSV', 'text/csv', '1,2,3\n4,5,6'],
    ['binary', 'application/x-image', '\u00ff\u00d8\u0000'],
    ['a JSON array', 'application/json', '[{"model":"m"}]'],
    ['unparsable JSON', 'application/json', '{"model":'],
  ])('%s bodies are never rewritten, whatever the options', (_name, contentType, input) => {
    const captured = Buffer.from(input);
    const r = one(input, { modelOverride: 'n', forceStreaming: true }, contentType);
    expect(Buffer.from(r.body).equals(captured)).toBe(true);
    expect([r.streaming, r.overrides]).toEqual([false, []]);
  });
});

describe('chat target compatibility, more cases', () => {
  it.each<[string, string, string, string | null, string]>([
    ['upper-case JSON type', 'Application/JSON', '{"messages":[]}', null, ''],
    ['a +json type with parameters', 'application/vnd.openai+json; charset=utf-8', '{"messages":[]}', null, ''],
    [
      'plain text',
      'text/plain',
      'hello there',
      'unsupported_content_type',
      'content type text/plain cannot be sent to a chat target',
    ],
    ['a JSON array', 'application/json', '[1,2]', 'not_chat_request', 'JSON body is not an object'],
    [
      'messages that is not an array',
      'application/json',
      '{"messages":"hi there"}',
      'not_chat_request',
      'JSON body without a messages array',
    ],
    ['unparsable JSON', 'application/json', '{"messages":[', 'not_chat_request', 'body is not valid JSON'],
  ])('%s', (_name, contentType, input, reason, detail) => {
    const plan = buildPlan([rec('a', T0, { contentType, body: input })], base);
    if (reason === null) {
      expect(plan.requests.map((r) => r.eventId)).toEqual(['a']);
      expect(plan.incompatible).toEqual([]);
    } else {
      expect(plan.requests).toEqual([]);
      expect(plan.incompatible.map((i) => [i.reason, i.detail, i.request.index, i.request.offsetMs])).toEqual([
        [reason, detail, 0, 0],
      ]);
      expect(Buffer.from(plan.incompatible[0]!.request.body).toString()).toBe(input);
    }
  });

  it('carries the capture identity and the captured usage into the request', () => {
    const record: CaptureRecord = {
      ...rec('ev', T0),
      inferenceId: 'inf-1',
      source: { file: 's3://b/k.jsonl', line: 7 },
      output: {
        contentType: 'application/json',
        byteLength: 99,
        usage: { promptTokens: 12, completionTokens: 34 },
        sha256: null,
      },
    };
    const [r] = buildPlan([record], base).requests;
    expect([r!.eventId, r!.inferenceId, r!.source, r!.contentType, r!.capturedUsage, r!.accept]).toEqual([
      'ev',
      'inf-1',
      { file: 's3://b/k.jsonl', line: 7 },
      'application/json',
      { promptTokens: 12, completionTokens: 34 },
      'application/json',
    ]);
  });

  it('a SageMaker target gets non-chat JSON exactly as captured, overrides or not; chat bodies get the overrides', () => {
    const tabular = Buffer.from('{"instances":[[1,2,3]]}');
    const tgi = Buffer.from('{"inputs":"hi","parameters":{},"stream":true}');
    const opts = { ...base, targetKind: 'sagemaker' as const, forceStreaming: true, modelOverride: 'm2' };
    const plan = buildPlan(
      [
        { ...rec('t', T0), input: { contentType: 'application/json', encoding: 'JSON', body: tabular } },
        { ...rec('g', T0 + 1), input: { contentType: 'application/json', encoding: 'JSON', body: tgi } },
      ],
      opts,
    );
    expect(plan.incompatible).toEqual([]);
    expect(plan.requests.map((r) => [Buffer.from(r.body).toString(), r.streaming, r.overrides])).toEqual([
      [tabular.toString(), false, []],
      [tgi.toString(), true, []],
    ]);
    const [chat] = buildPlan([rec('c', T0)], opts).requests;
    expect(chat!.overrides.sort()).toEqual(['model', 'stream']);
  });

  it("sends the captured output's content type as Accept, and its digest to compare the replay with", () => {
    const record: CaptureRecord = {
      ...rec('ev', T0),
      output: { contentType: 'text/csv', byteLength: 4, usage: null, sha256: 'ab'.repeat(32) },
    };
    const [r] = buildPlan([record], { ...base, targetKind: 'sagemaker' }).requests;
    expect([r!.accept, r!.capturedOutputSha256]).toEqual(['text/csv', 'ab'.repeat(32)]);
    const [none] = buildPlan([{ ...record, output: null }], { ...base, targetKind: 'sagemaker' }).requests;
    expect([none!.accept, none!.capturedOutputSha256]).toEqual([null, null]);
  });
});

describe('validatePlanOptions, one problem each', () => {
  it.each<[string, Partial<PlanOptions>, PlanField, RegExp]>([
    ['empty runId', { runId: '' }, 'runId', /^is required$/],
    ['unknown target kind', { targetKind: 'grpc' as TargetKind }, 'targetKind', /^must be one of/],
    ['NaN time scale', { timeScale: Number.NaN }, 'timeScale', /^must be a number >= 0.001/],
    ['infinite time scale', { timeScale: Number.POSITIVE_INFINITY }, 'timeScale', /got Infinity/],
    ['negative time scale', { timeScale: -2 }, 'timeScale', /got -2/],
    ['unknown intra-second policy', { intraSecond: 'even' as IntraSecondPolicy }, 'intraSecond', /got even/],
    ['negative start offset', { startOffsetMs: -1 }, 'startOffsetMs', /^must be a finite number >= 0/],
    ['infinite end offset', { endOffsetMs: Number.POSITIVE_INFINITY }, 'endOffsetMs', /got Infinity/],
    [
      'end before start',
      { startOffsetMs: 10, endOffsetMs: 9 },
      'endOffsetMs',
      /^\(9\) is before startOffsetMs \(10\)$/,
    ],
    ['zero limit', { limit: 0 }, 'limit', /^must be a whole number > 0/],
    ['zero sample rate', { sampleRate: 0 }, 'sampleRate', /^must be in \(0, 1\]/],
    ['sample rate above 1', { sampleRate: 1.01 }, 'sampleRate', /got 1.01/],
    ['fractional seed', { seed: 1.5 }, 'seed', /got 1.5/],
    ['negative seed', { seed: -1 }, 'seed', /got -1/],
    ['blank model override', { modelOverride: '  ' }, 'modelOverride', /^must not be empty$/],
  ])('%s', (_name, bad, field, message) => {
    const problems = validatePlanOptions({ ...base, ...bad });
    expect(problems).toHaveLength(1);
    expect(problems[0]?.field).toBe(field);
    expect(problems[0]?.message).toMatch(message);
  });

  it('names another option a message speaks of as the caller names options', () => {
    expect(validatePlanOptions({ ...base, startOffsetMs: 10, endOffsetMs: 9 }, (f) => `<${f}>`)).toEqual([
      { field: 'endOffsetMs', message: '(9) is before <startOffsetMs> (10)' },
    ]);
  });

  it('accepts every option at its edge', () => {
    expect(
      validatePlanOptions({
        ...base,
        timeScale: 0.001,
        startOffsetMs: 0,
        endOffsetMs: 0,
        limit: 1,
        sampleRate: 1,
        seed: 0xffffffff,
        modelOverride: 'm',
        forceStreaming: true,
        intraSecond: 'burst',
      }),
    ).toEqual([]);
  });

  it('buildPlan names every problem in its error', () => {
    expect(() => buildPlan([rec('a', T0)], { ...base, timeScale: 0, limit: -1, runId: '' })).toThrow(
      /^invalid plan options: runId is required; timeScale must be .*; limit must be/,
    );
  });
});
