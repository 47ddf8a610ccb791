/**
 * `capture-replay capacity`: the flags turned into one config (config.ts; a problem is a usage
 * error, exit 2), the window read once (window.ts), each target searched (core/capacity/
 * search.ts; one target at a time unless --together), each step a full replay (step.ts) with
 * a cool-down between steps, then capacity.json and report.html at the search's root and the
 * one-line summary. Exit 0 when the search ran, 1 when it could not, 130/143 when stopped
 * (what was measured is written).
 */
import { join } from 'node:path';
import { FsArtifactStore } from '../../adapters/local/fs-artifact-store';
import { BUNDLED_CHART_ASSETS } from '../../adapters/bundled-chart-assets';
import { buildCapacityDocument, capacitySummaryLine, factorText, shareText, sustainedText } from '../../core/capacity/document';
import { conclude, searchCapacity } from '../../core/capacity/search';
import type { CapacityDocument, CapacityStep, TargetCapacity } from '../../core/capacity/types';
import { stringifyJson } from '../../core/export/json';
import { renderCapacityReportHtml } from '../../core/report/capacity-section';
import { usageMessage, USAGE_EXIT } from '../cli-usage';
import { installInterrupt } from '../interrupt';
import { fail, type CommandIo } from '../replay/io';
import { capacityConfig, type CapacityCommandOptions, type CapacityConfig } from './config';
import { runCapacityStep, SearchInterrupted, StepFailed, WARM_UP_REQUESTS, warmUp } from './step';
import { readWindow, type CapacityWindow } from './window';

export const CAPACITY_FILES = { document: 'capacity.json', report: 'report.html' } as const;

export async function capacityCommand(options: CapacityCommandOptions): Promise<number> {
  const io: CommandIo = { out: options.stdout ?? process.stdout, err: options.stderr ?? process.stderr };
  const config = capacityConfig(options);
  if (typeof config === 'string') {
    io.err.write(usageMessage('capacity', config));
    return USAGE_EXIT;
  }
  const { apiKeyEnv } = config.replay.request;
  const apiKey = apiKeyEnv ? process.env[apiKeyEnv] : undefined;
  if (apiKeyEnv && !apiKey) return fail(io, `--api-key-env ${apiKeyEnv}: that environment variable is not set`);
  const window = await readWindow(config, io);
  if (typeof window === 'number') return window;
  return runSearch(config, io, window, apiKey);
}

/** One line per step as it ends. */
function stepLine(target: string, s: CapacityStep, objectives: CapacityConfig['objectives']): string {
  const metrics = Object.keys(objectives.slos)
    .map((tag) => `${tag} p99 ${s.slo_metrics[tag]?.p99?.toFixed(1) ?? '--'}`)
    .join(', ');
  const goodput = s.goodput === null ? '--' : shareText(s.goodput);
  const errors = s.error_rate === null ? '--' : shareText(s.error_rate);
  return `  ${target} at ${factorText(s.factor)}: ${s.requests} requests, goodput ${goodput}, error rate ${errors}, ${metrics}: ${s.outcome === 'met' ? 'met' : s.reason}\n`;
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

/** Every target searched; the document written; the exit code. */
async function runSearch(config: CapacityConfig, io: CommandIo, window: CapacityWindow, apiKey: string | undefined): Promise<number> {
  const names = config.replay.targets.map((t) => t.name);
  io.err.write(`Capacity search ${config.runId}: ${window.records.length} captured requests per step at 1x, ${names.length > 1 ? (config.together ? 'targets together' : 'one target at a time') : 'one target'}\n`);
  const steps = new Map<string, CapacityStep[]>(names.map((n) => [n, []]));
  let stopped: number | null = null;
  const runStep = async (factor: number, targets: readonly string[]) => {
    const results = await runCapacityStep(config, window, apiKey, factor, targets);
    for (const [target, step] of results) {
      (steps.get(target) as CapacityStep[]).push(step);
      io.err.write(stepLine(target, step, config.objectives));
    }
    return results;
  };
  const pause = async () => {
    const code = await coolDown(config.cooldownMs, io);
    if (code !== null) throw new SearchInterrupted(code);
  };
  try {
    for (const group of config.together ? [names] : names.map((n) => [n])) {
      const runId = await warmUp(config, window, apiKey, group);
      io.err.write(`  ${group.join(', ')}: warmed up with ${Math.min(WARM_UP_REQUESTS, window.records.length)} requests at ${factorText(config.search.startFactor)}, not judged (steps/${runId}/)\n`);
      await pause();
      await searchCapacity(group, config.search, runStep, pause);
    }
  } catch (error) {
    if (error instanceof StepFailed) {
      io.err.write(error.said);
      await writeResults(config, window, names, steps, true);
      return fail(io, `a step could not be run (above); what was measured before it is in ${join(config.out, config.runId, CAPACITY_FILES.document)}`);
    }
    if (!(error instanceof SearchInterrupted)) throw error;
    stopped = error.exitCode;
  }
  const doc = await writeResults(config, window, names, steps, stopped !== null);
  io.out.write(`${capacitySummaryLine(doc)}.\n`);
  for (const t of doc.targets) io.out.write(`  ${t.name}: ${sustainedText(t)}, limited by ${t.limited_by}. ${t.note}\n`);
  io.out.write(`Capacity: ${join(config.out, config.runId, CAPACITY_FILES.document)}\nReport: ${join(config.out, config.runId, CAPACITY_FILES.report)}\n`);
  return stopped ?? 0;
}

/** The window's times in capacity.json when --from/--to chose it. */
function captureWindowOf(config: CapacityConfig): { capture_window: { start: string; end: string } } | Record<string, never> {
  const w = config.window.captureWindow;
  return w?.startMs != null && w.endMs != null ? { capture_window: { start: new Date(w.startMs).toISOString(), end: new Date(w.endMs).toISOString() } } : {};
}

/** capacity.json and report.html at the search's root, from the steps measured (all of them, or those before it stopped). */
async function writeResults(config: CapacityConfig, window: CapacityWindow, names: readonly string[], steps: ReadonlyMap<string, CapacityStep[]>, cut: boolean): Promise<CapacityDocument> {
  const targets: TargetCapacity[] = names.map((name) => {
    const result = conclude(name, steps.get(name) ?? [], config.search);
    return cut ? { ...result, note: `The search was cut short: these are the steps measured. ${result.note}` } : result;
  });
  const doc = buildCapacityDocument(
    {
      runId: config.runId,
      generatedAt: new Date().toISOString(),
      captures: config.capturesPath,
      window: { start_offset_ms: config.window.startOffsetMs, end_offset_ms: config.window.endOffsetMs, captured_requests: window.records.length, ...captureWindowOf(config) },
      objectives: config.objectives,
      search: { ...config.search, cooldownMs: config.cooldownMs, together: config.together, warmUpRequests: Math.min(WARM_UP_REQUESTS, window.records.length) },
    },
    targets,
  );
  const store = new FsArtifactStore(config.out);
  await store.put(`${config.runId}/${CAPACITY_FILES.document}`, stringifyJson(doc, 2));
  const title = `capture-replay capacity | ${config.runId}`;
  await store.put(`${config.runId}/${CAPACITY_FILES.report}`, renderCapacityReportHtml({ title, capacity: doc }, BUNDLED_CHART_ASSETS));
  return doc;
}
