/**
 * A capacity search's results for the report tests, made by the real search against modelled
 * targets: target `name` meets the objectives up to `capacity` (goodput falls and time to
 * first token climbs past it, as a saturated queue does), so the steps, the bracket and the
 * summary are what the search itself produces.
 */
import { buildCapacityDocument } from '../../lambdas/core/capacity/document';
import { judgeStep } from '../../lambdas/core/capacity/measure';
import { searchCapacity } from '../../lambdas/core/capacity/search';
import type {
  CapacityDocument,
  CapacityObjectives,
  CapacityStep,
  SearchSettings,
  StepMeasure,
} from '../../lambdas/core/capacity/types';

export const FIXTURE_OBJECTIVES: CapacityObjectives = {
  slos: { time_to_first_token: 200, inter_token_latency: 40 },
  minGoodput: 0.99,
  maxErrorRate: 0.01,
  maxClientLagMs: 100,
};
const SETTINGS: SearchSettings = { startFactor: 1, growth: 2, resolution: 0.1, maxFactor: 64 };
const CAPTURED = 240;

/** What a target of this capacity measures at `factor`. */
function modelled(capacity: number, factor: number): StepMeasure {
  const load = factor / capacity;
  const requests = Math.round(CAPTURED * factor);
  const over = Math.max(0, load - 1);
  const goodput = over > 0 ? Math.max(0.2, 0.985 - over) : 0.995 + 0.004 * (1 - load);
  const failed = load > 1.5 ? Math.round(requests * 0.03) : 0;
  const ttft = 60 + 90 * load * load + 2000 * over;
  return {
    factor,
    requests,
    succeeded: requests - failed,
    failed,
    dropped: 0,
    good: Math.round(goodput * requests),
    goodput,
    error_rate: failed / requests,
    slo_metrics: {
      time_to_first_token: { p50: ttft * 0.6, p99: ttft },
      inter_token_latency: { p50: 18 + 4 * load, p99: 25 + 8 * load },
    },
    client: { schedule_lag_p90_ms: 1.2, wire_lag_p90_ms: 1.6, wire_lag_p99_ms: 2.1, late_dropped: 0 },
    errors: failed > 0 ? [{ error: 'HTTPError 503', count: failed, message: 'HTTP 503: overloaded' }] : [],
  };
}

export async function capacityFixture(
  targets: Record<string, number> = { A: 1.85, B: 2.45 },
): Promise<CapacityDocument> {
  const results = [];
  for (const [name, capacity] of Object.entries(targets)) {
    const [result] = await searchCapacity(
      [name],
      SETTINGS,
      async (factor) => {
        const measure = modelled(capacity, factor);
        const run = `${name}-${factor}x`;
        const step: CapacityStep = {
          ...measure,
          ...judgeStep(measure, FIXTURE_OBJECTIVES),
          run_id: run,
          results: `steps/${run}/`,
        };
        return new Map([[name, step]]);
      },
      async () => {},
    );
    results.push(result!);
  }
  return buildCapacityDocument(
    {
      runId: '20260501T020000Z-capacity',
      generatedAt: '2026-05-01T02:40:00.000Z',
      captures: 'captures/prod-chat/',
      window: { start_offset_ms: 0, end_offset_ms: 180_000, captured_requests: CAPTURED },
      objectives: FIXTURE_OBJECTIVES,
      search: { ...SETTINGS, cooldownMs: 5000, together: false, warmUpRequests: 50, maxStepRequests: 265_216 },
    },
    results,
  );
}
