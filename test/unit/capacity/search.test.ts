/**
 * The capacity search's pure parts: which factors it tries (geometric, then bisection to the
 * resolution, the cap, the descent when the start fails), what ends it (a client-limited
 * step), what a step measures and how it is judged, and the summary line.
 */
import { describe, expect, it } from 'vitest';
import { buildCapacityDocument, capacitySummaryLine, sustainedText } from '../../../lambdas/core/capacity/document';
import { judgeStep, measureStep, stepErrors, type StepManifest } from '../../../lambdas/core/capacity/measure';
import {
  conclude,
  MAX_STEPS,
  nextFactor,
  roundTo,
  searchCapacity,
  validateSearchSettings,
} from '../../../lambdas/core/capacity/search';
import type {
  CapacityObjectives,
  CapacityStep,
  SearchSettings,
  StepOutcome,
} from '../../../lambdas/core/capacity/types';
import type { ProfileRecord } from '../../../lambdas/core/types';

const settings: SearchSettings = { startFactor: 1, growth: 2, resolution: 0.1, maxFactor: 64 };
const objectives: CapacityObjectives = {
  slos: { time_to_first_token: 200 },
  minGoodput: 0.99,
  maxErrorRate: 0.01,
  maxClientLagMs: 100,
};

function step(factor: number, outcome: StepOutcome): CapacityStep {
  return {
    factor,
    requests: Math.round(100 * factor),
    succeeded: Math.round(100 * factor),
    failed: 0,
    dropped: 0,
    good: outcome === 'met' ? Math.round(100 * factor) : 0,
    goodput: outcome === 'met' ? 1 : 0.5,
    error_rate: 0,
    slo_metrics: {},
    client: { schedule_lag_p90_ms: 1, wire_lag_p90_ms: 1, wire_lag_p99_ms: 1, late_dropped: 0 },
    errors: [],
    outcome,
    reason: outcome,
    run_id: `A-${factor}x`,
    results: `steps/A-${factor}x/A/`,
  };
}

/** The factors a search tries against a target that meets the objectives up to `capacity` (client limit optional). */
async function factorsTried(capacity: number, s = settings, clientLimit = Infinity) {
  const tried: number[] = [];
  const [result] = await searchCapacity(
    ['A'],
    s,
    async (factor) => {
      tried.push(factor);
      return new Map([
        ['A', step(factor, factor > clientLimit ? 'client' : factor <= capacity ? 'met' : 'objectives')],
      ]);
    },
    async () => {},
  );
  return { tried, result: result! };
}

describe('the factors tried', () => {
  it('grows geometrically, then bisects to the resolution: finds 2.37 as 2.3', async () => {
    const { tried, result } = await factorsTried(2.37);
    expect(tried).toEqual([1, 2, 4, 3, 2.5, 2.3, 2.4]);
    expect(result.sustained_factor).toBe(2.3);
    expect(result.limited_by).toBe('objectives');
    expect(result.limit_factor).toBe(2.4);
    expect(result.steps.map((s) => s.factor)).toEqual([...tried].sort((a, b) => a - b));
  });

  it('meets the objectives at the cap: sustained = the cap, limited by it', async () => {
    const { tried, result } = await factorsTried(1000, { ...settings, maxFactor: 10 });
    expect(tried).toEqual([1, 2, 4, 8, 10]);
    expect(result).toMatchObject({ sustained_factor: 10, limited_by: 'cap', limit_factor: 10 });
  });

  it('goes down from a start that fails, and gives null below the resolution', async () => {
    expect((await factorsTried(0.3)).tried).toEqual([1, 0.5, 0.25, 0.4, 0.3]);
    const none = await factorsTried(0.05);
    expect(none.tried).toEqual([1, 0.5, 0.25, 0.125]);
    expect(none.result).toMatchObject({ sustained_factor: null, limited_by: 'objectives', limit_factor: 0.125 });
  });

  it('stops at a client-limited step: the target sustained at least the last factor met, and the note says how to go further', async () => {
    const { tried, result } = await factorsTried(100, settings, 5);
    expect(tried).toEqual([1, 2, 4, 8]);
    expect(result).toMatchObject({ sustained_factor: 4, limited_by: 'client', limit_factor: 8 });
    expect(result.note).toMatch(/at least 4x/);
    expect(result.note).toMatch(/--workers/);
  });

  it('errors end the search as errors when the smallest failing step failed on errors', () => {
    const r = conclude(
      'A',
      [
        step(1, 'met'),
        step(2, 'errors'),
        step(1.5, 'met'),
        step(1.8, 'objectives'),
        step(1.6, 'met'),
        step(1.7, 'met'),
      ],
      settings,
    );
    expect(r).toMatchObject({ sustained_factor: 1.7, limited_by: 'objectives', limit_factor: 1.8 });
    expect(conclude('A', [step(1, 'met'), step(2, 'errors'), step(1.5, 'errors')], settings).limited_by).toBe('errors');
  });

  it('searched together, targets share the steps they want at the same factor, then part', async () => {
    const calls: [number, string[]][] = [];
    const capacity: Record<string, number> = { A: 1.5, B: 3 };
    const results = await searchCapacity(
      ['A', 'B'],
      settings,
      async (factor, targets) => {
        calls.push([factor, [...targets]]);
        return new Map(targets.map((t) => [t, step(factor, factor <= capacity[t]! ? 'met' : 'objectives')]));
      },
      async () => {},
    );
    expect(calls.slice(0, 2)).toEqual([
      [1, ['A', 'B']],
      [2, ['A', 'B']],
    ]);
    expect(results.map((r) => r.sustained_factor)).toEqual([1.5, 3]);
  });

  it('rounds midpoints to the resolution and refuses bad settings', () => {
    expect(roundTo(0.1 + 0.2, 0.1)).toBe(0.3);
    expect(nextFactor([step(2, 'met'), step(2.1, 'objectives')], settings)).toBeNull();
    expect(validateSearchSettings({ startFactor: 0, growth: 1, resolution: -1, maxFactor: NaN })).toHaveLength(4);
    expect(validateSearchSettings({ ...settings, maxFactor: 0.5 })).toEqual([
      'maxFactor (0.5) is below startFactor (1)',
    ]);
  });
});

const info = {
  runId: 'cap',
  generatedAt: '2026-05-01T00:00:00Z',
  captures: 'c/',
  window: { start_offset_ms: 0, end_offset_ms: 180_000, captured_requests: 300 },
  objectives,
  search: { ...settings, cooldownMs: 2000, together: false, warmUpRequests: 50, maxStepRequests: 265_216 },
};

describe('what ended the search, said as what it was (issue 32, finding 4)', () => {
  it('the limit of MAX_STEPS steps is not the cap: said as the step limit, with what was met', async () => {
    const { tried, result } = await factorsTried(1000, { ...settings, growth: 1.01 });
    expect(tried).toHaveLength(MAX_STEPS);
    expect(result).toMatchObject({ limited_by: 'step_limit', sustained_factor: tried.at(-1) });
    expect(result.note).toMatch(
      new RegExp(
        /^The search reached its limit of 60 steps before it ended: the target met the objectives at /.source +
          /1\.79\d*x\. To need fewer steps: a larger --growth/.source,
      ),
    );
    expect(sustainedText(result)).toMatch(/^at least 1\.79\d*x \(the search's limit of 60 steps\)$/);
    expect(result.note).not.toMatch(/cap/);
  });

  it('a signal: the targets whose search had not ended are stopped, what was measured kept; a target not started has nothing', () => {
    const cut = { by: 'stopped', signal: 'SIGINT' } as const;
    const a = conclude('A', [step(1, 'met')], { ...settings, maxFactor: 8 }, cut);
    expect(a).toMatchObject({ sustained_factor: 1, limited_by: 'stopped', limit_factor: 2 });
    expect(a.note).toBe(
      'The search was stopped by SIGINT before it ended (the step at 2x was not measured): the target met ' +
        'the objectives at 1x. What was measured is kept; run the search again to finish it.',
    );
    const b = conclude('B', [], settings, cut);
    expect(b).toMatchObject({ sustained_factor: null, limited_by: 'stopped', limit_factor: null });
    expect(b.note).toMatch(/this target's first step was not run\): nothing was measured/);
    // A target whose search had ended keeps its own verdict.
    expect(conclude('C', [step(1, 'met'), step(2, 'met')], { ...settings, maxFactor: 2 }, cut).limited_by).toBe('cap');
    expect(capacitySummaryLine(buildCapacityDocument(info, [a, b]))).toBe(
      "A sustains at least 1x (the search was stopped before it ended) today's traffic at 99 % goodput, B " +
        'none judged (the search was stopped before it ended)',
    );
  });

  it('a step that could not be run: said with its cause, not as the cap', () => {
    const t = conclude('A', [step(1, 'met'), step(2, 'objectives')], settings, {
      by: 'step_failed',
      cause: 'fire worker 43 did not start',
    });
    expect(t).toMatchObject({ sustained_factor: 1, limited_by: 'step_failed', limit_factor: 1.5 });
    expect(t.note).toBe(
      'The search ended early: a step could not be run (fire worker 43 did not start); the step at 1.5x was ' +
        'not measured: the target met the objectives at 1x and failed them at 2x (objectives). What was ' +
        'measured is kept.',
    );
    expect(sustainedText(t)).toBe('at least 1x (a step could not be run)');
    expect(sustainedText(conclude('B', [], settings, { by: 'step_failed', cause: 'x' }))).toBe(
      'none judged (a step could not be run)',
    );
  });
});

describe('a broken target and an empty step (issue 32, findings 5 and 6)', () => {
  it('a step whose requests all failed is broken: the search ends there, with the errors seen', async () => {
    const errors = [{ error: 'HTTPError 404', count: 21, message: 'HTTP 404: no route for POST /nope' }];
    const broken = {
      ...measureStep(1, [], manifest({ scheduled: 21, succeeded: 0, failed: 21 }), objectives.slos),
      errors,
    };
    expect(judgeStep(broken, objectives)).toEqual({
      outcome: 'broken',
      reason: 'no request succeeded (21 of 21 failed: HTTPError 404 21)',
    });
    const tried: number[] = [];
    const [t] = await searchCapacity(
      ['A'],
      settings,
      async (factor) => {
        tried.push(factor);
        if (factor < 4) return new Map([['A', step(factor, 'met')]]);
        const m = { ...measureStep(factor, [], manifest({ succeeded: 0, failed: 100 }), objectives.slos), errors };
        return new Map([['A', { ...m, ...judgeStep(m, objectives), run_id: 'r', results: 'r/' }]]);
      },
      async () => {},
    );
    expect(tried).toEqual([1, 2, 4]);
    expect(t).toMatchObject({ sustained_factor: 2, limited_by: 'broken', limit_factor: 4 });
    expect(t!.note).toMatch(
      new RegExp(
        /^It met the objectives at 2x, then at 4x no request succeeded: 100 of 100 failed \(HTTPError 404 /.source +
          /21 \("HTTP 404: no route for POST \/nope"\)\)\. A target that fails every request is broken/.source,
      ),
    );
    expect(sustainedText(t!)).toBe('at least 2x (broken at 4x: no request succeeded, HTTPError 404)');
  });

  it('the errors seen, the commonest first, with a message each', () => {
    const failed = (code: number | null, type: string) => ({
      ...record(null, true),
      error: { code, type, message: `${type} ${code}` },
    });
    expect(
      stepErrors([failed(500, 'HTTPError'), failed(null, 'ConnectionRefused'), failed(500, 'HTTPError'), record(1)]),
    ).toEqual([
      { error: 'HTTPError 500', count: 2, message: 'HTTPError 500' },
      { error: 'ConnectionRefused', count: 1, message: 'ConnectionRefused null' },
    ]);
  });

  it('a factor that holds no request is neither met nor failed: the search grows past it and goes no lower', async () => {
    const m = measureStep(0.5, [], manifest({ scheduled: 0, succeeded: 0 }), objectives.slos);
    expect(judgeStep(m, objectives)).toEqual({
      outcome: 'empty',
      reason: "no request at this factor: the window's requests sampled at 0.5x kept none",
    });
    // Growing from a start that holds none.
    expect(nextFactor([step(0.25, 'empty')], settings)).toBe(0.5);
    // Going down from a failure: not below a factor that held none.
    expect(nextFactor([step(1, 'objectives'), step(0.5, 'empty')], settings)).toBeNull();
    const down = conclude('A', [step(1, 'objectives'), step(0.5, 'empty')], settings);
    expect(down).toMatchObject({ sustained_factor: null, limited_by: 'objectives', limit_factor: 1 });
    expect(down.note).toMatch(
      /0\.5x held no request \(the window's requests sampled at 0\.5x kept none\), so no smaller factor can be measured/,
    );
    const none = conclude('B', [step(0.25, 'empty'), step(0.5, 'empty')], {
      ...settings,
      startFactor: 0.25,
      maxFactor: 0.5,
    });
    expect(none).toMatchObject({ sustained_factor: null, limited_by: 'empty', limit_factor: null });
  });
});

describe('factors and their names (issue 32, finding 3)', () => {
  it('every factor tried is on a grid of 1e-6, so no two steps are written alike', async () => {
    const { tried, result } = await factorsTried(1.3198245, {
      startFactor: 0.0012345678,
      growth: 1.7,
      resolution: 0.0012345678,
      maxFactor: 64,
    });
    expect(tried.every((f) => roundTo(f, 1e-6) === f)).toBe(true);
    expect(new Set(tried.map((f) => `${f}x`)).size).toBe(tried.length);
    expect(result.note).not.toMatch(/at (\S+)x;.* at \1x/);
  });

  it('refuses a start factor or a resolution below 0.001 and a growth below 1.01', () => {
    expect(validateSearchSettings({ ...settings, startFactor: 1e-7, resolution: 1e-7, growth: 1.001 })).toEqual([
      "startFactor must be at least 0.001, one request in a thousand of the window's (got 1e-7)",
      'resolution must be at least 0.001, a thousandth of the traffic: no step tells finer apart (got 1e-7)',
      'growth must be at least 1.01, each step 1 % above the last (got 1.001)',
    ]);
  });
});

function record(ttft: number | null, error = false): ProfileRecord {
  return {
    metadata: {} as ProfileRecord['metadata'],
    metrics: ttft === null ? {} : { time_to_first_token: { value: ttft, unit: 'ms' } },
    error: error ? { code: 500, type: 'HTTPError', message: 'x' } : null,
    capture_replay: {} as ProfileRecord['capture_replay'],
  };
}

const manifest = (over: Partial<StepManifest> = {}): StepManifest => ({
  scheduled: 100,
  succeeded: 100,
  failed: 0,
  droppedByReason: {},
  scheduleLag: { p90: 2 },
  wireLag: { p90: 3, p99: 4 },
  ...over,
});

describe('a step measured and judged', () => {
  const fast = Array.from({ length: 100 }, (_, i) => record(100 + i));

  it('goodput is the share of the requests due that met every SLO; incompatible ones are not the target’s', () => {
    const records = [...fast.slice(0, 97), record(250), record(300), record(null, true)];
    const m = measureStep(
      2,
      records,
      manifest({
        scheduled: 104,
        succeeded: 99,
        failed: 1,
        droppedByReason: { not_chat_request: 3, late_beyond_tolerance: 1 },
      }),
      objectives.slos,
    );
    expect(m.requests).toBe(101);
    expect(m.goodput).toBeCloseTo(97 / 101, 12);
    expect(m.error_rate).toBeCloseTo(1 / 101, 12);
    expect(m.dropped).toBe(1);
    expect(m.slo_metrics.time_to_first_token!.p50).toBe(149);
    expect(m.client).toEqual({ schedule_lag_p90_ms: 2, wire_lag_p90_ms: 3, wire_lag_p99_ms: 4, late_dropped: 1 });
  });

  it('judges errors first, then the client, then goodput', () => {
    const met = measureStep(1, fast, manifest(), objectives.slos);
    expect(judgeStep(met, objectives).outcome).toBe('met');
    expect(judgeStep({ ...met, error_rate: 0.01, failed: 1 }, objectives)).toMatchObject({ outcome: 'errors' });
    expect(judgeStep({ ...met, goodput: 0.98, good: 98 }, objectives)).toMatchObject({
      outcome: 'objectives',
      reason: 'goodput 98 % (98 of 100) < 99 %',
    });
    const late = {
      ...met,
      client: { schedule_lag_p90_ms: 150, wire_lag_p90_ms: 180, wire_lag_p99_ms: 250, late_dropped: 0 },
    };
    expect(judgeStep(late, objectives)).toMatchObject({
      outcome: 'client',
      reason: 'the replayer sent late: p90 wire lag 180.0 ms > 100 ms',
    });
    // Late and failing: the client's requests held back went out together, a burst the capture never had: not the target's verdict.
    expect(judgeStep({ ...late, goodput: 0.5 }, objectives).outcome).toBe('client');
    // Errors are the target's answers, whatever the client's pace.
    expect(judgeStep({ ...late, error_rate: 0.2, failed: 20 }, objectives).outcome).toBe('errors');
  });
});

describe('capacity.json and its summary line', () => {
  it('says in one line which target sustains how much, the best first, with the goodput objective', () => {
    const a = conclude(
      'A',
      [step(1, 'met'), step(2, 'objectives'), step(1.8, 'met'), step(1.9, 'objectives')],
      settings,
    );
    const b = conclude(
      'B',
      [
        step(1, 'met'),
        step(2, 'met'),
        step(4, 'objectives'),
        step(3, 'objectives'),
        step(2.5, 'objectives'),
        step(2.3, 'met'),
        step(2.4, 'met'),
      ],
      settings,
    );
    const doc = buildCapacityDocument(info, [a, b]);
    expect(capacitySummaryLine(doc)).toBe("B sustains 2.4x today's traffic at 99 % goodput, A 1.8x");
    expect(doc).toMatchObject({
      schema_version: 1,
      objectives: { goodput: { time_to_first_token: 200 }, min_goodput: 0.99, max_error_rate: 0.01 },
    });
    expect(Object.keys(doc.targets[0]!)).toEqual([
      'name',
      'sustained_factor',
      'limited_by',
      'limit_factor',
      'note',
      'steps',
    ]);
  });

  it('names the client and the cap as limits, and a target that met nothing', () => {
    const client = conclude('A', [step(1, 'met'), step(2, 'client')], settings);
    const cap = conclude('B', [step(1, 'met'), step(2, 'met')], { ...settings, maxFactor: 2 });
    const none = conclude(
      'C',
      [step(1, 'objectives'), step(0.5, 'objectives'), step(0.25, 'objectives'), step(0.125, 'objectives')],
      settings,
    );
    expect(capacitySummaryLine(buildCapacityDocument(info, [client, cap, none]))).toBe(
      "B sustains 2x or more (the cap) today's traffic at 99 % goodput, A at least 1x (client-limited), C " +
        'less than 0.125x (no factor tried met the objectives)',
    );
    const cold = conclude('D', [step(1, 'client')], settings);
    expect(capacitySummaryLine(buildCapacityDocument(info, [none, cold]))).toBe(
      'No factor sustained at 99 % goodput: C less than 0.125x (no factor tried met the objectives), D none ' +
        'judged (the replayer was late at 1x)',
    );
  });

  it('says plainly when no factor was sustained because the client was late, never "at least nothing"', () => {
    const cold = conclude(
      'D',
      [{ ...step(1, 'client'), reason: 'the replayer sent late: p90 wire lag 180.0 ms > 100 ms' }],
      settings,
    );
    expect(cold).toMatchObject({ sustained_factor: null, limited_by: 'client', limit_factor: 1 });
    expect(cold.note).toBe(
      'No factor sustained: at 1x, the first step, the replayer already could not send on time (the replayer ' +
        'sent late: p90 wire lag 180.0 ms > 100 ms), so this machine cannot tell whether the target sustains it. ' +
        'To go further: more fire threads (--workers), a bigger machine, or the AWS pipeline (amplify in a schedule).',
    );
    const failedThenLate = conclude(
      'E',
      [
        { ...step(1, 'objectives'), reason: 'goodput 50 % (50 of 100) < 99 %' },
        { ...step(0.5, 'client'), reason: 'late' },
      ],
      settings,
    );
    expect(failedThenLate.note).toMatch(
      new RegExp(
        /^No factor sustained: 1x already failed \(goodput 50 % \(50 of 100\) < 99 %\), and at 0\.5x the /.source +
          /replayer could not send on time \(late\)\./.source,
      ),
    );
    expect(capacitySummaryLine(buildCapacityDocument(info, [failedThenLate]))).toBe(
      'No factor sustained at 99 % goodput: E less than 1x (the replayer was late at 0.5x)',
    );
    for (const t of [cold, failedThenLate]) expect(t.note).not.toMatch(/at least|nothing measured/);
  });
});
