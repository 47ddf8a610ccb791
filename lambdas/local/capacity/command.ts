/**
 * `capture-replay capacity`: the flags turned into one config (config.ts; a problem is a usage
 * error, exit 2), the search's folder claimed as replay claims its run's (an earlier run's
 * results refused unless --overwrite), the window read once (window.ts) and checked (every
 * target takes some of it; a streamed objective has streamed requests; no step larger than
 * this replayer's memory: step-size.ts), each target searched (core/capacity/search.ts; one
 * target at a time unless --together), each step a full replay (step.ts), announced with its
 * size and shown with replay's progress bar, with a cool-down between steps; then
 * capacity.json and report.html at the search's root and the one-line summary (with
 * --cloudwatch, each target's sustained factor as a metric: cloudwatch-output.ts). Exit 0 when
 * the search ran, 1 when it could not (a step that could not be run, a target broken or
 * never measured), 130/143 when stopped (what was measured is written).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FsArtifactStore } from '../../adapters/local/fs-artifact-store';
import { BUNDLED_CHART_ASSETS } from '../../adapters/bundled-chart-assets';
import {
  buildCapacityDocument,
  capacitySummaryLine,
  factorText,
  shareText,
  sustainedText,
} from '../../core/capacity/document';
import { conclude, searchCapacity, type SearchCut } from '../../core/capacity/search';
import type { CapacityDocument, CapacityStep, TargetCapacity } from '../../core/capacity/types';
import { exitCodeOf, InterruptedError, StepFailed } from '../../core/errors';
import { capacityMetricSets } from '../../core/metrics/cloudwatch';
import type { ReplayPlan, TargetKind } from '../../core/types';
import { stringifyJson } from '../../core/export/json';
import { buildPlan } from '../../core/plan/plan';
import { renderCapacityReportHtml } from '../../core/report/capacity-section';
import { STREAMED_GOODPUT_TAGS, unstreamedGoodputWarning, usageMessage, USAGE_EXIT } from '../cli-usage';
import { cloudWatchOutputOf, writeCloudWatch, type CloudWatchOutput } from '../cloudwatch-output';
import { INTERRUPT_EXIT, INTERRUPT_SIGNALS, installInterrupt, type InterruptSignal } from '../interrupt';
import { claimRunFolder, createOutputFolder } from '../output-folder';
import { fail, type CommandIo } from '../replay/io';
import { terminalLine } from '../terminal-text';
import { capacityConfig, type CapacityCommandOptions, type CapacityConfig } from './config';
import { runCapacityStep, stepPlanOptions, warmUp, type StepIo } from './step';
import { largestFactorFor, maxStepRequests, memoryText, plannedRequests, STEP_BYTES_PER_REQUEST } from './step-size';
import { readWindow, type CapacityWindow } from './window';

export const CAPACITY_FILES = { document: 'capacity.json', report: 'report.html' } as const;

export async function capacityCommand(options: CapacityCommandOptions): Promise<number> {
  const io: CommandIo = { out: options.stdout ?? process.stdout, err: options.stderr ?? process.stderr };
  const config = capacityConfig(options);
  if (typeof config === 'string') return usage(io, config);
  const cloudwatch = cloudWatchOutputOf(options);
  if (typeof cloudwatch === 'string') return usage(io, cloudwatch);
  const stepLimit = maxStepRequests();
  if (typeof stepLimit === 'string') return usage(io, stepLimit);
  // As replay: an unwritable --out said before anything is sent, an earlier run's results never replaced silently.
  const unwritable = await createOutputFolder(config.out);
  if (unwritable) return fail(io, `--out ${config.out}: ${unwritable}`);
  const claimed = await claimRunFolder(join(config.out, config.runId), config.runId, config.replay.overwrite);
  if (claimed) return usage(io, claimed);
  const unstreamed = unstreamedGoodputWarning(config.objectives.slos, config.replay.plan.forceStreaming === true);
  if (unstreamed) io.err.write(`capture-replay: ${unstreamed}\n`);
  const { apiKeyEnv } = config.replay.request;
  // Set: replayConfig refuses an --api-key-env that is not.
  const apiKey = apiKeyEnv ? process.env[apiKeyEnv] : undefined;
  const window = await readWindow(config, io);
  if (typeof window === 'number') return window;
  const sized = checkWindow(config, window, stepLimit, io);
  if (typeof sized === 'number') return sized;
  const code = await runSearch(sized, io, window, apiKey, stepLimit);
  return cloudwatch ? capacityCloudWatch(cloudwatch, sized, io, code) : code;
}

/**
 * Each target's sustained factor from the search's capacity.json, as a metric at the search's
 * time; the exit code. A search stopped by a signal, or that wrote no document, gets none.
 */
async function capacityCloudWatch(
  output: CloudWatchOutput,
  config: CapacityConfig,
  io: CommandIo,
  code: number,
): Promise<number> {
  const dir = join(config.out, config.runId);
  const doc = await readFile(join(dir, CAPACITY_FILES.document), 'utf8').then(
    (text) => JSON.parse(text) as CapacityDocument,
    () => null,
  );
  if (!doc || Object.values(INTERRUPT_EXIT).includes(code)) {
    io.err.write('capture-replay: CloudWatch: no metrics for a search that was stopped or wrote no capacity.json\n');
    return code;
  }
  const failed = await writeCloudWatch(output, {
    dir,
    sets: capacityMetricSets(output.stack, doc),
    timestampMs: Date.parse(doc.generated_at),
    out: io.out,
    err: io.err,
  });
  if (failed === null) return code;
  const failure = fail(io, failed);
  return code === 0 ? failure : code;
}

function usage(io: CommandIo, message: string): number {
  io.err.write(usageMessage('capacity', terminalLine(message)));
  return USAGE_EXIT;
}

/**
 * What the window holds for the search, checked before any step: every target takes some of
 * its requests (a chat target takes no CSV); an objective on a streamed metric has a request
 * that streams; and no step plans more requests than this replayer's memory holds (the search
 * goes no higher, said here). The config to search with, or the exit code of a search refused.
 */
function checkWindow(
  config: CapacityConfig,
  window: CapacityWindow,
  stepLimit: number,
  io: CommandIo,
): CapacityConfig | number {
  const n = window.records.length;
  let streamed = 0;
  const plans = new Map<TargetKind, ReplayPlan>();
  for (const target of config.replay.targets) {
    const kind: TargetKind = target.kind === 'sagemaker' ? 'sagemaker' : 'openai-chat';
    const plan =
      plans.get(kind) ??
      buildPlan(window.records, { ...stepPlanOptions(config), runId: config.runId, targetKind: kind });
    if (!plans.has(kind)) streamed += plan.requests.filter((r) => r.streaming).length;
    plans.set(kind, plan);
    if (plan.requests.length === 0) {
      const reasons = new Map<string, number>();
      for (const r of plan.incompatible) reasons.set(r.reason, (reasons.get(r.reason) ?? 0) + 1);
      const why = [...reasons].map(([reason, count]) => `${reason} ${count}`).join(', ');
      const example = plan.incompatible[0]?.detail;
      return fail(
        io,
        `none of the window's ${n} captured requests can go to ${target.name}, an OpenAI-compatible target ` +
          `(${why}${example ? `: ${example}` : ''}): nothing to search; give it a window of chat requests, or ` +
          `search a sagemaker:<endpoint> target, which takes every content type`,
      );
    }
  }
  const streamedOnly = Object.keys(config.objectives.slos).filter((tag) => STREAMED_GOODPUT_TAGS.includes(tag));
  if (streamed === 0 && streamedOnly.length > 0 && config.replay.plan.forceStreaming !== true) {
    const tags = streamedOnly.join(', ');
    return usage(
      io,
      `--goodput ${tags}: measured on streamed answers only, and none of the window's ${n} requests asks to ` +
        `stream, so no request could meet it: add --streaming`,
    );
  }
  // Targets searched together share a step: each plans its own requests.
  const perTarget = Math.floor(stepLimit / (config.together ? config.replay.targets.length : 1));
  const limit = largestFactorFor(n, perTarget, config.search.resolution);
  const held =
    `more than one step holds in this replayer's memory (${perTarget.toLocaleString('en-US')} ` +
    `requests${config.together ? ' per target' : ''}, about ${STEP_BYTES_PER_REQUEST / 1024} KB each)`;
  const { startFactor, maxFactor } = config.search;
  if (limit === null || startFactor > limit) {
    return fail(
      io,
      `a step at --start-factor ${startFactor} plans ` +
        `${plannedRequests(n, startFactor).toLocaleString('en-US')} requests of the window's ` +
        `${n.toLocaleString('en-US')}, ${held}: a shorter --window or a lower --start-factor`,
    );
  }
  if (maxFactor <= limit) return config;
  io.err.write(
    `--max-factor ${maxFactor} would plan ${plannedRequests(n, maxFactor).toLocaleString('en-US')} requests ` +
      `in one step, ${held}: the search goes up to ${factorText(limit)} (a shorter --window goes further)\n`,
  );
  return {
    ...config,
    search: {
      ...config.search,
      maxFactor: limit,
      capHint:
        `the largest factor one step of this window holds in this replayer's memory ` +
        `(${perTarget.toLocaleString('en-US')} requests): a shorter --window to look further`,
    },
  };
}

const requestsText = (n: number): string => `${n.toLocaleString('en-US')} request${n === 1 ? '' : 's'}`;

/** One line per step as it ends. */
function stepLine(target: string, s: CapacityStep, objectives: CapacityConfig['objectives']): string {
  const metrics = Object.keys(objectives.slos)
    .map((tag) => `${tag} p99 ${s.slo_metrics[tag]?.p99?.toFixed(1) ?? '--'}`)
    .join(', ');
  const goodput = s.goodput === null ? '--' : shareText(s.goodput);
  const errors = s.error_rate === null ? '--' : shareText(s.error_rate);
  return (
    `  ${target} at ${factorText(s.factor)}: ${requestsText(s.requests)}, goodput ${goodput}, error rate ` +
    `${errors}, ${metrics}: ${s.outcome === 'met' ? 'met' : terminalLine(s.reason)}\n`
  );
}

/** The line before a step: which targets, which factor, how many requests; and the memory it takes when that is large. */
function stepStartLine(targets: readonly string[], factor: number, n: number, stepLimit: number): string {
  const planned = plannedRequests(n, factor);
  const total = planned * targets.length;
  const memory =
    total > stepLimit / 4
      ? `, about ${memoryText(total * STEP_BYTES_PER_REQUEST)} of memory until its results are written`
      : '';
  return (
    `  ${targets.join(', ')} at ${factorText(factor)}: ` +
    `${factor < 1 ? 'about ' : ''}${requestsText(planned)}${targets.length > 1 ? ' each' : ''}${memory}...\n`
  );
}

/** Waits `ms`, or less when a signal arrives; the signal's exit code, or null. */
async function coolDown(ms: number, io: CommandIo): Promise<number | null> {
  if (ms <= 0) return null;
  const interrupt = installInterrupt({ stderr: io.err, graceMs: 0 });
  try {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      interrupt.stop.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
    });
    return interrupt.exitCode();
  } finally {
    interrupt.dispose();
  }
}

/** The signal an interrupted search's exit code stands for. */
function signalOf(exitCode: number): string {
  return Object.entries(INTERRUPT_EXIT).find(([, code]) => code === exitCode)?.[0] ?? `exit ${exitCode}`;
}

/** What a failed step's replay said last (`capture-replay: fire worker 43 did not start`), as its cause. */
function causeOf(error: StepFailed): string {
  const said = error.said
    .split('\n')
    .filter((line) => line.startsWith('capture-replay: '))
    .at(-1);
  return said ? terminalLine(said.slice('capture-replay: '.length)) : `its replay exited ${error.stepExitCode}`;
}

/**
 * SIGINT/SIGTERM between two steps: a step's replay installs its own handlers and removes them
 * when it ends (interrupt.ts), and a signal with none installed ends the process at once, the
 * steps measured unwritten. The search listens for its whole length, and stops at the next
 * step or cool-down.
 */
function guardSignals(): { exitCode: () => number | null; dispose: () => void } {
  let received: InterruptSignal | null = null;
  const handlers = INTERRUPT_SIGNALS.map((signal) => [signal, () => (received ??= signal)] as const);
  for (const [signal, handler] of handlers) process.on(signal, handler);
  return {
    exitCode: () => (received ? INTERRUPT_EXIT[received] : null),
    dispose: () => {
      for (const [signal, handler] of handlers) process.removeListener(signal, handler);
    },
  };
}

/** Every target searched; the document written; the exit code. */
async function runSearch(
  config: CapacityConfig,
  io: CommandIo,
  window: CapacityWindow,
  apiKey: string | undefined,
  stepLimit: number,
): Promise<number> {
  const guard = guardSignals();
  try {
    return await searchAndWrite(config, io, window, apiKey, stepLimit, guard.exitCode);
  } finally {
    guard.dispose();
  }
}

async function searchAndWrite(
  config: CapacityConfig,
  io: CommandIo,
  window: CapacityWindow,
  apiKey: string | undefined,
  stepLimit: number,
  signalled: () => number | null,
): Promise<number> {
  const names = config.replay.targets.map((t) => t.name);
  io.err.write(
    `Capacity search ${config.runId}: ${window.records.length} captured requests per step at 1x, ` +
      `${names.length > 1 ? (config.together ? 'targets together' : 'one target at a time') : 'one target'}\n`,
  );
  const steps = new Map<string, CapacityStep[]>(names.map((n) => [n, []]));
  const stepIo: StepIo = { progress: io.err };
  let warmUpSent = 0;
  let cut: SearchCut | null = null;
  let exitCode = 0;
  const stopIfSignalled = () => {
    const code = signalled();
    if (code !== null) throw new InterruptedError(code);
  };
  const runStep = async (factor: number, targets: readonly string[]) => {
    stopIfSignalled();
    io.err.write(stepStartLine(targets, factor, window.records.length, stepLimit));
    const results = await runCapacityStep(config, window, apiKey, factor, targets, stepIo);
    for (const [target, step] of results) {
      (steps.get(target) as CapacityStep[]).push(step);
      io.err.write(stepLine(target, step, config.objectives));
    }
    return results;
  };
  const pause = async () => {
    stopIfSignalled();
    const code = await coolDown(config.cooldownMs, io);
    if (code !== null) throw new InterruptedError(code);
    stopIfSignalled();
  };
  try {
    for (const group of config.together ? [names] : names.map((n) => [n])) {
      io.err.write(`  ${group.join(', ')}: warming up at ${factorText(config.search.startFactor)}...\n`);
      const { runId, sent } = await warmUp(config, window, apiKey, group, stepIo);
      warmUpSent = Math.max(warmUpSent, sent);
      io.err.write(
        `  ${group.join(', ')}: warmed up with ${sent} request${sent === 1 ? '' : 's'} at ` +
          `${factorText(config.search.startFactor)}, not judged (steps/${runId}/)\n`,
      );
      await pause();
      await searchCapacity(group, config.search, runStep, pause);
    }
  } catch (error) {
    if (error instanceof StepFailed) {
      io.err.write(error.said);
      cut = { by: 'step_failed', cause: causeOf(error) };
      exitCode = exitCodeOf(error);
    } else if (error instanceof InterruptedError) {
      cut = { by: 'stopped', signal: signalOf(error.exitCode) };
      exitCode = exitCodeOf(error);
      io.err.write(`capture-replay: ${cut.signal}: the search stops here; the steps measured are written\n`);
    } else throw error;
  }
  const doc = await writeResults(config, window, names, steps, cut, { warmUpSent, stepLimit });
  io.out.write(`${capacitySummaryLine(doc)}.\n`);
  for (const t of doc.targets)
    io.out.write(`  ${t.name}: ${sustainedText(t)}, limited by ${t.limited_by}. ${terminalLine(t.note)}\n`);
  io.out.write(
    `Capacity: ${join(config.out, config.runId, CAPACITY_FILES.document)}\nReport: ` +
      `${join(config.out, config.runId, CAPACITY_FILES.report)}\n`,
  );
  return finalExit(config, doc, cut, exitCode, io);
}

/**
 * The exit code: a signal's (130/143), 1 for a step that could not be run, for a broken target
 * (no request of a step succeeded: as replay's "no request to <target> succeeded") and for a
 * target no step measured; else 0. Each said in one line, last.
 */
function finalExit(
  config: CapacityConfig,
  doc: CapacityDocument,
  cut: SearchCut | null,
  exitCode: number,
  io: CommandIo,
): number {
  const where = join(config.out, config.runId, CAPACITY_FILES.document);
  let code = exitCode;
  for (const t of doc.targets) {
    if (t.limited_by === 'broken') {
      const broken = t.steps.find((st) => st.outcome === 'broken') as CapacityStep;
      const seen = broken.errors.map((e) => `${e.error} ${e.count}`).join(', ');
      const failed = fail(
        io,
        `no request to ${t.name} succeeded at ${factorText(broken.factor)} (${broken.failed} of ` +
          `${broken.requests} failed${seen ? `: ${seen}` : ''}): the target is broken or down, not at its ` +
          `capacity; check that it is up, its URL and --path (the steps are in ${where})`,
      );
      if (code === 0) code = failed;
    } else if (t.limited_by === 'empty') {
      const failed = fail(
        io,
        `no step held a request for ${t.name}: the window's requests sampled at up to ` +
          `${factorText(config.search.maxFactor)} kept none; a longer --window holds more`,
      );
      if (code === 0) code = failed;
    }
  }
  if (cut?.by === 'step_failed')
    fail(io, `a step could not be run (${cut.cause}); what was measured before it is in ${where}`);
  return code;
}

/** The window's times in capacity.json when --from/--to chose it. */
function captureWindowOf(
  config: CapacityConfig,
): { capture_window: { start: string; end: string } } | Record<string, never> {
  const w = config.window.captureWindow;
  return w?.startMs != null && w.endMs != null
    ? { capture_window: { start: new Date(w.startMs).toISOString(), end: new Date(w.endMs).toISOString() } }
    : {};
}

/** capacity.json and report.html at the search's root, from the steps measured (all of them, or those before it ended early: `cut`). */
async function writeResults(
  config: CapacityConfig,
  window: CapacityWindow,
  names: readonly string[],
  steps: ReadonlyMap<string, CapacityStep[]>,
  cut: SearchCut | null,
  sizes: { warmUpSent: number; stepLimit: number },
): Promise<CapacityDocument> {
  const targets: TargetCapacity[] = names.map((name) =>
    conclude(name, steps.get(name) ?? [], config.search, cut ?? undefined),
  );
  const { capHint: _hint, ...search } = config.search;
  const doc = buildCapacityDocument(
    {
      runId: config.runId,
      generatedAt: new Date().toISOString(),
      captures: config.capturesPath,
      window: {
        start_offset_ms: config.window.startOffsetMs,
        end_offset_ms: config.window.endOffsetMs,
        captured_requests: window.records.length,
        ...captureWindowOf(config),
      },
      objectives: config.objectives,
      search: {
        ...search,
        cooldownMs: config.cooldownMs,
        together: config.together,
        warmUpRequests: sizes.warmUpSent,
        maxStepRequests: sizes.stepLimit,
      },
    },
    targets,
  );
  const store = new FsArtifactStore(config.out);
  await store.put(`${config.runId}/${CAPACITY_FILES.document}`, stringifyJson(doc, 2));
  const title = `capture-replay capacity | ${config.runId}`;
  await store.put(
    `${config.runId}/${CAPACITY_FILES.report}`,
    renderCapacityReportHtml({ title, capacity: doc }, BUNDLED_CHART_ASSETS),
  );
  return doc;
}
