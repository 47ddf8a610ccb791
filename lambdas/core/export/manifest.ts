/**
 * The run manifest: every scheduled request is succeeded, failed or dropped (with a reason).
 * `balanced` is computed from the outcomes, not assumed, so a bug that loses a request shows.
 */
import { recordedErrorType } from '../metrics/error-details';
import { summarize, type StatSummary } from '../metrics/stats';
import type { DropReason, FireOutcome, RunManifest } from '../types';

/** What the accounting needs of one scheduled request, however it reached the collector. */
export interface ManifestEntry {
  requestId: string;
  dropReason: DropReason | null;
  /** The loop's pick-up - scheduled send, ms; null when not fired. */
  lagMs: number | null;
  /** On the wire - scheduled send, ms; null (or absent) when not written or not known. */
  wireLagMs?: number | null;
  /** Error type when fired and failed. */
  errorType: string | null;
}

export function manifestEntryOf(o: FireOutcome): ManifestEntry {
  return {
    requestId: o.requestId,
    dropReason: o.result === null ? (o.dropReason ?? 'lost') : null,
    lagMs: o.result === null ? null : Number(o.result.requestStartNs - o.scheduledNs) / 1e6,
    wireLagMs:
      o.result?.requestWireNs === undefined || o.result.requestWireNs === null
        ? null
        : Number(o.result.requestWireNs - o.scheduledNs) / 1e6,
    errorType: o.result?.error?.type ?? null,
  };
}

/**
 * When a target's run started and ended (the manifest's startedAt/endedAt, AIPerf's
 * start_time/end_time): from its schedule zero to `endNs`, when its results were made. A run
 * that ends before its schedule zero (nothing to fire: every record dropped for the target;
 * a collect before the zero) never reached it: it started and ended at `endNs`, so that the
 * end is never before the start.
 */
export function runSpan(scheduleZeroNs: bigint, endNs: bigint): { startedAt: string; endedAt: string } {
  const iso = (ns: bigint) => new Date(Number(ns / 1_000_000n)).toISOString();
  return { startedAt: iso(scheduleZeroNs < endNs ? scheduleZeroNs : endNs), endedAt: iso(endNs) };
}

/** The manifest file: the accounting and how late requests went out (pick-up and wire). */
export type ManifestWithLags = RunManifest & { scheduleLag: StatSummary | null; wireLag: StatSummary | null };

export function buildManifest(args: {
  runId: string;
  target: string;
  outcomes: readonly (FireOutcome | ManifestEntry)[];
  notScheduledByReason: RunManifest['notScheduledByReason'];
  startedAt: string;
  endedAt: string;
}): ManifestWithLags {
  let succeeded = 0;
  let failed = 0;
  let dropped = 0;
  const droppedByReason: RunManifest['droppedByReason'] = {};
  const failedByType: Record<string, number> = {};
  const lags: number[] = [];
  const wireLags: number[] = [];
  const entries = args.outcomes.map((o) => ('request' in o ? manifestEntryOf(o) : o));
  for (const e of entries) {
    if (e.dropReason !== null) {
      dropped++;
      droppedByReason[e.dropReason] = (droppedByReason[e.dropReason] ?? 0) + 1;
      continue;
    }
    if (e.lagMs !== null) lags.push(e.lagMs);
    if (e.wireLagMs !== undefined && e.wireLagMs !== null) wireLags.push(e.wireLagMs);
    if (e.errorType !== null) {
      failed++;
      // Counted under the type its record holds (a target's own error code may be anything).
      const type = recordedErrorType(e.errorType);
      failedByType[type] = (failedByType[type] ?? 0) + 1;
    } else succeeded++;
  }
  const scheduled = entries.length;
  return {
    runId: args.runId,
    target: args.target,
    scheduled,
    fired: succeeded + failed,
    succeeded,
    failed,
    dropped,
    droppedByReason,
    failedByType,
    notScheduledByReason: args.notScheduledByReason,
    balanced: scheduled === succeeded + failed + dropped && new Set(entries.map((e) => e.requestId)).size === scheduled,
    startedAt: args.startedAt,
    endedAt: args.endedAt,
    scheduleLag: summarize(lags),
    wireLag: summarize(wireLags),
  };
}
