/**
 * One step of a capacity search, measured and judged: from a target's records and manifest at
 * one factor to goodput (as a share: the requests meeting every SLO, AIPerf's "good" requests,
 * over every request due), error rate, each SLO metric's p50 and p99, and the client's own
 * timing; then the step's outcome, judged in the documented order (empty, broken, errors,
 * client, objectives): docs/capacity.md#the-objectives-and-what-each-step-is-judged-by.
 */
import { meetsSlos } from '../metrics/aggregate';
import { percentile } from '../metrics/stats';
import type { DropReason, ProfileRecord } from '../types';
import { factorText, shareText as pct } from './document';
import type { CapacityObjectives, Quantiles, StepError, StepMeasure, StepOutcome } from './types';

/** Drops that are the target's plan, not the step's: requests this target kind never takes. */
const NOT_THE_TARGETS: readonly DropReason[] = ['unsupported_content_type', 'not_chat_request'];

/** What the step needs of the run's manifest (ManifestWithLags). */
export interface StepManifest {
  scheduled: number;
  failed: number;
  succeeded: number;
  droppedByReason: Partial<Record<DropReason, number>>;
  scheduleLag: { p90: number } | null;
  wireLag: { p90: number; p99: number } | null;
}

function quantiles(values: number[]): Quantiles {
  if (values.length === 0) return { p50: null, p99: null };
  values.sort((a, b) => a - b);
  return { p50: percentile(values, 50), p99: percentile(values, 99) };
}

/** The kinds of error the failed records carry (`HTTPError 404`), the commonest first, at most three, each with its first message. */
export function stepErrors(records: readonly ProfileRecord[]): StepError[] {
  const kinds = new Map<string, StepError>();
  for (const r of records) {
    if (r.error === null) continue;
    const error = r.error.code !== null ? `${r.error.type} ${r.error.code}` : r.error.type;
    const seen = kinds.get(error);
    if (seen) seen.count++;
    else kinds.set(error, { error, count: 1, message: r.error.message.slice(0, 160) });
  }
  return [...kinds.values()].sort((a, b) => b.count - a.count).slice(0, 3);
}

/** The step's numbers for one target. */
export function measureStep(
  factor: number,
  records: readonly ProfileRecord[],
  manifest: StepManifest,
  slos: Readonly<Record<string, number>>,
): StepMeasure {
  const notTheTargets = NOT_THE_TARGETS.reduce((n, reason) => n + (manifest.droppedByReason[reason] ?? 0), 0);
  const requests = manifest.scheduled - notTheTargets;
  const ok = records.filter((r) => r.error === null);
  const good = ok.filter((r) => meetsSlos(r, slos)).length;
  const sloMetrics: Record<string, Quantiles> = {};
  for (const tag of Object.keys(slos)) {
    sloMetrics[tag] = quantiles(
      ok.map((r) => r.metrics[tag]?.value).filter((v): v is number => typeof v === 'number' && Number.isFinite(v)),
    );
  }
  return {
    factor,
    requests,
    succeeded: manifest.succeeded,
    failed: manifest.failed,
    dropped: requests - manifest.succeeded - manifest.failed,
    good,
    goodput: requests > 0 ? good / requests : null,
    error_rate: requests > 0 ? manifest.failed / requests : null,
    slo_metrics: sloMetrics,
    client: {
      schedule_lag_p90_ms: manifest.scheduleLag?.p90 ?? null,
      wire_lag_p90_ms: manifest.wireLag?.p90 ?? null,
      wire_lag_p99_ms: manifest.wireLag?.p99 ?? null,
      late_dropped: manifest.droppedByReason.late_beyond_tolerance ?? 0,
    },
    errors: stepErrors(records),
  };
}

/** The step's outcome and the numbers that decided it. */
export function judgeStep(m: StepMeasure, o: CapacityObjectives): { outcome: StepOutcome; reason: string } {
  if (m.requests === 0 || m.goodput === null || m.error_rate === null)
    return {
      outcome: 'empty',
      reason: `no request at this factor: the window's requests sampled at ${factorText(m.factor)} kept none`,
    };
  if (m.succeeded === 0 && m.failed > 0) {
    const seen = m.errors[0] ? `: ${m.errors.map((e) => `${e.error} ${e.count}`).join(', ')}` : '';
    return { outcome: 'broken', reason: `no request succeeded (${m.failed} of ${m.requests} failed${seen})` };
  }
  if (m.error_rate >= o.maxErrorRate)
    return {
      outcome: 'errors',
      reason: `error rate ${pct(m.error_rate)} >= ${pct(o.maxErrorRate)} (${m.failed} of ${m.requests})`,
    };
  // The p90, not the p99: a replayer that cannot keep up is late for a growing share of its
  // requests, while a busy machine's pause delays a few.
  const lag = m.client.wire_lag_p90_ms ?? m.client.schedule_lag_p90_ms;
  if (lag !== null && lag > o.maxClientLagMs) {
    return {
      outcome: 'client',
      reason:
        `the replayer sent late: p90 ${m.client.wire_lag_p90_ms !== null ? 'wire' : 'schedule'} lag ` +
        `${lag.toFixed(1)} ms > ${o.maxClientLagMs} ms`,
    };
  }
  if (m.client.late_dropped > 0)
    return { outcome: 'client', reason: `the replayer dropped ${m.client.late_dropped} request(s) as late` };
  if (m.goodput < o.minGoodput)
    return {
      outcome: 'objectives',
      reason: `goodput ${pct(m.goodput)} (${m.good} of ${m.requests}) < ${pct(o.minGoodput)}`,
    };
  return { outcome: 'met', reason: `goodput ${pct(m.goodput)}, error rate ${pct(m.error_rate)}` };
}
