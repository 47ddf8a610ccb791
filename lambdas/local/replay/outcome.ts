/**
 * The end of a replay: each target's summary table and where its results are, the comparison
 * and the report, and the exit code: the targets' verdict (exit-policy.ts), a failed fire
 * worker, an interrupt (130/143), then --fail-on (3).
 */
import { join } from 'node:path';
import { FAIL_ON_EXIT, renderComparisonTable } from '../../core/export/comparison-table';
import { RUN_FILES } from '../../core/export/run-artifacts';
import { renderSummaryTable } from '../../core/export/summary-table';
import type { RunManifest } from '../../core/types';
import { failOnMatch } from '../comparison-flags';
import { runVerdict } from '../exit-policy';
import { terminalLine, terminalText } from '../terminal-text';
import type { ReplayConfig } from './config';
import type { Fired } from './fire';
import { fail, type CommandIo } from './io';

/** Prints what the run did and where it is; returns the exit code. */
export function replayOutcome(
  config: ReplayConfig,
  io: CommandIo,
  { result, analysis, workerFailed, interrupt }: Fired,
): number {
  const { out, err } = io;
  for (const run of result.targets) {
    const columns = (out as NodeJS.WriteStream).isTTY ? (out as NodeJS.WriteStream).columns : undefined; // 80 when not a terminal
    out.write(
      terminalText(
        renderSummaryTable(run.aggregates, shownManifest(run.manifest), {
          title: `capture-replay | ${config.runId} | ${run.target}`,
          ...(columns ? { width: columns } : {}),
        }),
      ) + '\n',
    );
    out.write(`Results: ${terminalLine(join(config.out, config.runId, run.target))}/\n`);
  }
  // Per target, what failed and what only took none of the capture (exit-policy.ts).
  const verdict = runVerdict(
    result.targets.map((run) => run.manifest),
    config.exit.maxErrorRate !== null ? { maxErrorRate: config.exit.maxErrorRate } : {},
  );
  for (const note of verdict.notes) err.write(`${terminalLine(note)}\n`);
  let exitCode = 0;
  for (const failure of verdict.failures) exitCode = fail(io, failure);
  const outside = emptyOffsetWindow(result.targets.map((run) => run.manifest));
  if (outside !== null && exitCode === 0)
    exitCode = fail(io, `no capture record ${describeOffsets(config)} (${outside} outside it): nothing was sent`);
  const sampledOut = emptySample(result.targets.map((run) => run.manifest));
  if (sampledOut !== null && exitCode === 0)
    exitCode = fail(
      io,
      `${describeSampling(config)} kept none of the ${sampledOut} request(s): nothing was sent; give a ` +
        `larger ${config.plan.amplify !== undefined && config.plan.amplify < 1 ? '--amplify' : '--sample'}`,
    );
  if (!analysis) return fail(io, 'the run ended without its analysis: this is a bug, please report it');
  if (analysis.comparison) {
    out.write('\n' + terminalText(renderComparisonTable(analysis.comparison)) + '\n');
    out.write(`Comparison: ${terminalLine(join(config.out, config.runId, RUN_FILES.comparison))}\n`);
  }
  out.write(`Report: ${terminalLine(join(config.out, config.runId, RUN_FILES.report))}\n`);
  // A fire worker that failed: its unreported requests are in the results as dropped (lost).
  if (workerFailed && exitCode === 0)
    exitCode = fail(io, 'a fire worker failed (above): its requests not reported are counted as dropped, reason lost');
  exitCode = interrupt.exitCode() ?? exitCode;
  const failOn = exitCode === 0 && analysis.comparison ? failOnMatch(analysis.comparison, config.exit.failOn) : null;
  if (failOn) {
    err.write(`capture-replay: ${failOn}\n`);
    exitCode = FAIL_ON_EXIT;
  }
  return exitCode;
}

/** The manifest as the summary table shows it: error types and drop reasons (a target's words) on one line each, escaped. */
function shownManifest<M extends RunManifest>(manifest: M): M {
  const shown = (counts: Record<string, number>) => {
    const out: Record<string, number> = {};
    for (const [key, n] of Object.entries(counts)) out[terminalLine(key)] = (out[terminalLine(key)] ?? 0) + n;
    return out;
  };
  return {
    ...manifest,
    failedByType: shown(manifest.failedByType),
    droppedByReason: shown(manifest.droppedByReason) as RunManifest['droppedByReason'],
  };
}

/**
 * Records outside --start-offset/--end-offset when they were all outside (nothing scheduled for
 * any target): the selection is empty, as an empty --from/--to window is, and exits 1 the same
 * way rather than passing a CI step that replayed nothing. null otherwise.
 */
export function emptyOffsetWindow(manifests: readonly RunManifest[]): number | null {
  if (manifests.length === 0 || manifests.some((m) => m.scheduled > 0)) return null;
  const outside = Math.max(...manifests.map((m) => m.notScheduledByReason.outside_offset_window ?? 0));
  return outside > 0 ? outside : null;
}

/**
 * Requests the sampling took out (--sample, or --amplify below 1) when it took every one
 * (nothing scheduled for any target): an empty replay, which exits 1 as an empty window does,
 * not 0 for a run that sent nothing (`--amplify 1e-7`). null otherwise.
 */
export function emptySample(manifests: readonly RunManifest[]): number | null {
  if (manifests.length === 0 || manifests.some((m) => m.scheduled > 0)) return null;
  const sampled = Math.max(...manifests.map((m) => m.notScheduledByReason.sample ?? 0));
  return sampled > 0 ? sampled : null;
}

/** The flags that sample, as given: `--amplify 1e-7`, `--sample 0.001`, or both. */
function describeSampling(config: ReplayConfig): string {
  const { amplify, sampleRate } = config.plan;
  const flags = [
    ...(sampleRate !== undefined ? [`--sample ${sampleRate}`] : []),
    ...(amplify !== undefined && amplify < 1 ? [`--amplify ${amplify}`] : []),
  ];
  return flags.length > 0 ? flags.join(' with ') : 'the sampling';
}

function describeOffsets(config: ReplayConfig): string {
  const start = config.plan.startOffsetMs ?? 0;
  const end = config.plan.endOffsetMs;
  return end === undefined || end === null
    ? `from --start-offset ${start} ms on`
    : `between --start-offset ${start} ms and --end-offset ${end} ms`;
}
