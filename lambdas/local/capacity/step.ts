/**
 * One step of a capacity search: the window replayed at one factor to one target (or, with
 * --together, to the targets that want that factor), a full replay through the replay
 * command's own firing (replay/fire.ts: its clients, worker threads, rehearsal, interrupt
 * handling, and its results in AIPerf's formats with a report), into
 * <out>/<run-id>/steps/<step-id>/; then each target's step measured and judged (core/capacity).
 * What a step's replay says is kept and shown only when the step fails; its progress bar goes
 * to the terminal.
 */
import { join } from 'node:path';
import { InterruptedError, StepFailed } from '../../core/errors';
import { judgeStep, measureStep } from '../../core/capacity/measure';
import { factorText } from '../../core/capacity/document';
import type { CapacityStep } from '../../core/capacity/types';
import type { ReplayConfig } from '../replay/config';
import { fireReplay, type Fired } from '../replay/fire';
import type { CommandIo } from '../replay/io';
import type { CapacityConfig } from './config';
import type { CapacityWindow } from './window';

/** The folder of the steps, under the search's own. */
export const STEPS_DIR = 'steps';

/**
 * A step's run id and folder: `A-2.4x`, or `together-2.4x` for targets searched together. The
 * factor is on the search's grid and written exactly (digits and a point, never `-`), so the
 * last `-` splits a name into one target and one factor: distinct steps never share a folder.
 */
export function stepRunId(factor: number, targets: readonly string[], together: boolean): string {
  return `${together ? 'together' : (targets[0] as string)}-${factorText(factor)}`;
}

/** The warm-up's run id and folder: `A-warm-up` (`together-warm-up`), never a step's, which ends in `x`. */
export function warmUpRunId(targets: readonly string[], together: boolean): string {
  return `${together ? 'together' : (targets[0] as string)}-warm-up`;
}

/** A stream that keeps what a step says, to show only when the step fails. */
function bufferStream(): { stream: NodeJS.WritableStream; text: () => string } {
  const chunks: string[] = [];
  const stream = {
    write: (chunk: string | Uint8Array) => (
      chunks.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString()), true
    ),
  } as unknown as NodeJS.WritableStream;
  return { stream, text: () => chunks.join('') };
}

/** The requests of the warm-up: the window's first, replayed before the first step and not judged. */
export const WARM_UP_REQUESTS = 50;

/** The plan's options every step starts from: the window's records are the window, so no offsets again. */
export function stepPlanOptions(config: CapacityConfig): Omit<ReplayConfig['plan'], 'startOffsetMs' | 'endOffsetMs'> {
  const { startOffsetMs: _start, endOffsetMs: _end, ...plan } = config.replay.plan;
  return plan;
}

/** Where a step shows its progress bar (stderr, on a terminal); what it says otherwise is kept, shown when it fails. */
export interface StepIo {
  progress: NodeJS.WritableStream;
}

/** One replay of `records` at `factor` to `targets`, into steps/<runId>/; what the replay command's firing returned. */
async function replayAt(
  config: CapacityConfig,
  records: CapacityWindow,
  apiKey: string | undefined,
  at: { factor: number; targets: readonly string[]; runId: string; rehearse: boolean },
  stepIo: StepIo,
): Promise<Fired> {
  const plan = stepPlanOptions(config);
  const replay: ReplayConfig = {
    ...config.replay,
    runId: at.runId,
    out: join(config.out, config.runId, STEPS_DIR),
    targets: config.replay.targets.filter((t) => at.targets.includes(t.name)),
    // The window's records are the window: no offsets again. Factor 1 plans as `replay` does.
    plan: { ...plan, ...(at.factor !== 1 ? { amplify: at.factor } : {}) },
    // Reachability was checked once, before the first step.
    preflight: false,
    fire: { ...config.replay.fire, rehearsal: at.rehearse ? config.replay.fire.rehearsal : 0 },
  };
  const said = bufferStream();
  const io: CommandIo = { out: said.stream, err: said.stream };
  const fired = await fireReplay(
    replay,
    io,
    { inMemory: records.records, ingest: records.ingest },
    apiKey,
    stepIo.progress,
  );
  if (typeof fired === 'number') throw new StepFailed(fired, said.text());
  const interrupted = fired.interrupt.exitCode();
  if (interrupted !== null) throw new InterruptedError(interrupted);
  if (fired.workerFailed) throw new StepFailed(1, said.text());
  return fired;
}

/**
 * Before the first step of `targets`: the window's first WARM_UP_REQUESTS at the start factor,
 * not judged, so that no step measures a cold replayer (its code compiled, its rehearsal
 * done) or a cold target. Its results are kept (steps/<target>-warm-up/); returns its run id
 * and the requests it sent a target (the most, when several: a sample below 1x sends fewer
 * than it takes, copies above more).
 */
export async function warmUp(
  config: CapacityConfig,
  window: CapacityWindow,
  apiKey: string | undefined,
  targets: readonly string[],
  stepIo: StepIo,
): Promise<{ runId: string; sent: number }> {
  const runId = warmUpRunId(targets, config.together);
  const fired = await replayAt(
    config,
    { records: window.records.slice(0, WARM_UP_REQUESTS), ingest: window.ingest },
    apiKey,
    { factor: config.search.startFactor, targets, runId, rehearse: true },
    stepIo,
  );
  return { runId, sent: Math.max(0, ...fired.result.targets.map((run) => run.manifest.fired)) };
}

/** Runs the step at `factor` for `targets` (after their warm-up: no rehearsal); one judged result per target. */
export async function runCapacityStep(
  config: CapacityConfig,
  window: CapacityWindow,
  apiKey: string | undefined,
  factor: number,
  targets: readonly string[],
  stepIo: StepIo,
): Promise<Map<string, CapacityStep>> {
  const runId = stepRunId(factor, targets, config.together);
  const fired = await replayAt(config, window, apiKey, { factor, targets, runId, rehearse: false }, stepIo);
  const results = new Map<string, CapacityStep>();
  for (const run of fired.result.targets) {
    const measure = measureStep(factor, run.records, run.manifest, config.objectives.slos);
    results.set(run.target, {
      ...measure,
      ...judgeStep(measure, config.objectives),
      run_id: runId,
      results: `${STEPS_DIR}/${runId}/`,
    });
  }
  return results;
}
