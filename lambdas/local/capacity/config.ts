/**
 * The capacity command's configuration: its flags (program.ts defines them, their help and
 * defaults) turned once into the search's settings and objectives, and into the replay
 * configuration every step starts from (replay/config.ts: the same rules, the same defaults,
 * the same input_config in each step's results). A problem is a usage error in the flags'
 * own words.
 */
import { validateSearchSettings } from '../../core/capacity/search';
import type { CapacityObjectives, SearchSettings } from '../../core/capacity/types';
import type { WaitMode } from '../../adapters/system-clock';
import { replayConfig, type ReplayConfig } from '../replay/config';

/** `capture-replay capacity`'s flags, as commander hands them over. */
export interface CapacityCommandOptions {
  capturesPath: string;
  target: string[];
  out: string;
  goodput: Record<string, number>;
  minGoodput: number;
  maxErrorRate: number;
  /** ms of captured traffic each step replays. */
  window: number;
  startOffset?: number;
  startFactor: number;
  growth: number;
  resolution: number;
  maxFactor: number;
  /** Seconds between steps. */
  cooldown: number;
  maxClientLag: number;
  together: boolean;
  path: string;
  streaming: boolean;
  model?: string;
  apiKeyEnv?: string;
  timeScale: number;
  intraSecond: 'spread' | 'burst';
  seed: number;
  maxInFlight?: number;
  workers?: number | 'auto';
  wait?: WaitMode;
  rehearsal?: number;
  timeout: number;
  lead: number;
  lateTolerance?: number;
  latePolicy: 'fire' | 'drop';
  runId?: string;
  preflight?: boolean;
  responseExcerpts?: boolean;
  stdout?: NodeJS.WritableStream;
  stderr?: NodeJS.WritableStream;
}

export interface CapacityConfig {
  runId: string;
  capturesPath: string;
  /** The search goes to <out>/<run-id>/. */
  out: string;
  /** The window, in capture time from the first record (plan.ts rule 3). */
  window: { startOffsetMs: number; endOffsetMs: number };
  objectives: CapacityObjectives;
  search: SearchSettings;
  cooldownMs: number;
  together: boolean;
  /** What every step replays with, but its run id, targets, folder and factor. */
  replay: ReplayConfig;
}

/** The flag each search setting comes from, for its problems. */
const SEARCH_FLAGS: Record<string, string> = { startFactor: '--start-factor', growth: '--growth', resolution: '--resolution', maxFactor: '--max-factor' };

/** The search's configuration, or what is wrong with its flags. */
export function capacityConfig(flags: CapacityCommandOptions): CapacityConfig | string {
  const search: SearchSettings = { startFactor: flags.startFactor, growth: flags.growth, resolution: flags.resolution, maxFactor: flags.maxFactor };
  const problems = validateSearchSettings(search);
  if (problems.length > 0) return problems.map((p) => p.replace(/\b(startFactor|growth|resolution|maxFactor)\b/g, (m) => SEARCH_FLAGS[m] ?? m)).join('; ');
  if (Object.keys(flags.goodput).length === 0) return '--goodput needs at least one metric:value pair';
  const startOffsetMs = flags.startOffset ?? 0;
  const replay = replayConfig({
    capturesPath: flags.capturesPath,
    target: flags.target,
    targetName: 'target',
    out: flags.out,
    path: flags.path,
    streaming: flags.streaming,
    ...(flags.model !== undefined ? { model: flags.model } : {}),
    ...(flags.apiKeyEnv !== undefined ? { apiKeyEnv: flags.apiKeyEnv } : {}),
    startOffset: startOffsetMs,
    endOffset: startOffsetMs + flags.window,
    timeScale: flags.timeScale,
    intraSecond: flags.intraSecond,
    seed: flags.seed,
    ...(flags.maxInFlight !== undefined ? { maxInFlight: flags.maxInFlight } : {}),
    ...(flags.workers !== undefined ? { workers: flags.workers } : {}),
    ...(flags.wait !== undefined ? { wait: flags.wait } : {}),
    ...(flags.rehearsal !== undefined ? { rehearsal: flags.rehearsal } : {}),
    timeout: flags.timeout,
    lead: flags.lead,
    ...(flags.lateTolerance !== undefined ? { lateTolerance: flags.lateTolerance } : {}),
    latePolicy: flags.latePolicy,
    ...(flags.runId !== undefined ? { runId: flags.runId } : {}),
    // Each step's own bar would be one of dozens: the search prints a line per step instead.
    progress: false,
    preflight: flags.preflight !== false,
    goodput: flags.goodput,
    responseExcerpts: flags.responseExcerpts !== false,
  });
  if (typeof replay === 'string') return replay;
  return {
    runId: replay.runId,
    capturesPath: flags.capturesPath,
    out: flags.out,
    window: { startOffsetMs, endOffsetMs: startOffsetMs + flags.window },
    objectives: { slos: flags.goodput, minGoodput: flags.minGoodput, maxErrorRate: flags.maxErrorRate, maxClientLagMs: flags.maxClientLag },
    search,
    cooldownMs: flags.cooldown * 1000,
    together: flags.together,
    replay,
  };
}
