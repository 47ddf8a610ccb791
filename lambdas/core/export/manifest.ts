/**
 * The run manifest: every scheduled request is succeeded, failed or dropped (with a reason).
 * `balanced` is computed from the outcomes, not assumed, so a bug that loses a request shows.
 */
import { summarize, type StatSummary } from '../metrics/stats';
import type { FireOutcome, RunManifest } from '../types';

export function buildManifest(args: {
  runId: string;
  target: string;
  outcomes: readonly FireOutcome[];
  notScheduledByReason: RunManifest['notScheduledByReason'];
  startedAt: string;
  endedAt: string;
}): RunManifest & { scheduleLag: StatSummary | null } {
  let succeeded = 0;
  let failed = 0;
  let dropped = 0;
  const droppedByReason: RunManifest['droppedByReason'] = {};
  const failedByType: Record<string, number> = {};
  const lags: number[] = [];
  for (const o of args.outcomes) {
    if (o.result === null) {
      dropped++;
      const reason = o.dropReason ?? 'lost';
      droppedByReason[reason] = (droppedByReason[reason] ?? 0) + 1;
      continue;
    }
    lags.push(Number(o.result.requestStartNs - o.scheduledNs) / 1e6);
    if (o.result.error) {
      failed++;
      failedByType[o.result.error.type] = (failedByType[o.result.error.type] ?? 0) + 1;
    } else succeeded++;
  }
  const scheduled = args.outcomes.length;
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
    balanced: scheduled === succeeded + failed + dropped && new Set(args.outcomes.map((o) => o.requestId)).size === scheduled,
    startedAt: args.startedAt,
    endedAt: args.endedAt,
    scheduleLag: summarize(lags),
  };
}
