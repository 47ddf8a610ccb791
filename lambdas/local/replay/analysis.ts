/** The replay's comparison and report (analysis.ts in the core) from its targets' outcomes. */
import { analyse, TargetAccumulator, type Analysis } from '../../core/compare/analysis';
import type { CompareOptions } from '../../core/compare/types';
import type { ReportTargetSummary } from '../../core/report/types';
import type { ReplayRunResult } from '../../core/run/replay';
import type { RunManifest } from '../../core/types';

/** The run's comparison and report from its targets' outcomes. */
export function analyseRun(
  targets: readonly ReplayRunResult['targets'][number][],
  runId: string,
  compare: CompareOptions,
): Analysis {
  return analyse({
    title: `capture-replay | ${runId}`,
    runId,
    generatedAt: new Date().toISOString(),
    compare,
    targets: targets.map((run) => ({
      accumulator: TargetAccumulator.fromRun(run.target, run.outcomes, run.records),
      summary: summaryOf(run.target, run.manifest),
    })),
  });
}

function summaryOf(name: string, manifest: RunManifest): ReportTargetSummary {
  return {
    name,
    scheduled: manifest.scheduled,
    succeeded: manifest.succeeded,
    failed: manifest.failed,
    dropped: manifest.dropped,
    droppedByReason: { ...manifest.droppedByReason } as Record<string, number>,
    failedByType: { ...manifest.failedByType },
  };
}
