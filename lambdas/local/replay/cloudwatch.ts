/** `replay --cloudwatch`: the run's metrics from its files, once they are all written (cloudwatch-output.ts). */
import { join } from 'node:path';
import { runEndedAtMs, runMetricSets } from '../../core/metrics/cloudwatch';
import { readTargetFigures, writeCloudWatch, type CloudWatchOutput } from '../cloudwatch-output';
import type { ReplayConfig } from './config';
import type { Fired } from './fire';
import { fail, type CommandIo } from './io';

/**
 * Writes the run's cloudwatch-emf.jsonl (and publishes it when asked) after the outcome
 * (`code`); the exit code. A run stopped by a signal gets none: its figures are of part of
 * the run. A failed publish is a failure (exit 1) of a run that was otherwise done.
 */
export async function replayCloudWatch(
  output: CloudWatchOutput,
  config: ReplayConfig,
  io: CommandIo,
  fired: Fired,
  code: number,
): Promise<number> {
  if (fired.interrupt.exitCode() !== null || !fired.analysis) {
    io.err.write('capture-replay: CloudWatch: no metrics for a run that was stopped: they would be of part of it\n');
    return code;
  }
  const runDir = join(config.out, config.runId);
  const read = await Promise.all(fired.result.targets.map((t) => readTargetFigures(join(runDir, t.target), t.target)));
  const sets = runMetricSets(output.stack, {
    schedule: null,
    targets: read.map((r) => r.figures),
    comparison: fired.analysis.comparison,
  });
  const failed = await writeCloudWatch(output, {
    dir: runDir,
    sets,
    timestampMs: runEndedAtMs(read.map((r) => r.manifest)) ?? Date.now(),
    out: io.out,
    err: io.err,
  });
  if (failed === null) return code;
  const failure = fail(io, failed);
  return code === 0 ? failure : code;
}
