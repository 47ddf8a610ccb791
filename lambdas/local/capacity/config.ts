/**
 * The capacity command's configuration: its flags (program.ts defines them, their help and
 * defaults) turned once into the search's settings and objectives, and into the replay
 * configuration every step starts from (replay/config.ts: the same rules, the same defaults,
 * the same input_config in each step's results). A problem is a usage error in the flags'
 * own words.
 */
import { validateSearchSettings } from '../../core/capacity/search';
import type { CapacityObjectives, SearchSettings } from '../../core/capacity/types';
import type { CaptureWindow } from '../captures-source';
import type { CloudWatchFlags } from '../cloudwatch-output';
import { MAX_AMPLIFY } from '../../core/plan/amplify';
import { MAX_TIMER_MS, replayConfig, type ReplayCommandOptions, type ReplayConfig } from '../replay/config';

/** The flags capacity shares with replay (program.ts's option groups), as replay takes them. */
type SharedFlags = Pick<
  ReplayCommandOptions,
  | 'capturesPath'
  | 'out'
  | 'overwrite'
  | 'path'
  | 'streaming'
  | 'model'
  | 'apiKeyEnv'
  | 'startOffset'
  | 'from'
  | 'to'
  | 'region'
  | 'timeScale'
  | 'intraSecond'
  | 'seed'
  | 'maxInFlight'
  | 'workers'
  | 'wait'
  | 'rehearsal'
  | 'timeout'
  | 'lead'
  | 'lateTolerance'
  | 'latePolicy'
  | 'runId'
  | 'preflight'
  | 'responseExcerpts'
  | 'stdout'
  | 'stderr'
>;

/** `capture-replay capacity`'s flags, as commander hands them over. */
export interface CapacityCommandOptions extends SharedFlags, CloudWatchFlags {
  target: string[];
  goodput: Record<string, number>;
  minGoodput: number;
  maxErrorRate: number;
  /** ms of captured traffic each step replays. */
  window: number;
  startFactor: number;
  growth: number;
  resolution: number;
  maxFactor: number;
  /** Seconds between steps. */
  cooldown: number;
  maxClientLag: number;
  together: boolean;
  /** The progress bar of each step on a terminal (--no-progress: false). Default true. */
  progress?: boolean;
}

export interface CapacityConfig {
  runId: string;
  capturesPath: string;
  /** The search goes to <out>/<run-id>/. */
  out: string;
  /**
   * The window, in capture time from the first record (plan.ts rule 3); with --from/--to, from
   * the first record of `captureWindow`, which selects the records (and the S3 partitions read).
   */
  window: { startOffsetMs: number; endOffsetMs: number; captureWindow: CaptureWindow | null };
  objectives: CapacityObjectives;
  search: SearchSettings;
  cooldownMs: number;
  together: boolean;
  /** What every step replays with, but its run id, targets, folder and factor. */
  replay: ReplayConfig;
}

/** The flag each search setting comes from, for its problems. */
const SEARCH_FLAGS: Record<string, string> = {
  startFactor: '--start-factor',
  growth: '--growth',
  resolution: '--resolution',
  maxFactor: '--max-factor',
};

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * The captured time a step replays when --from or --to chooses it: --window from --from, or
 * up to --to; both: [from, to), no longer than --window (a longer span is refused, not cut).
 */
function timeWindow(
  from: number | undefined,
  to: number | undefined,
  windowMs: number,
): { startMs: number; endMs: number } | string {
  if (from !== undefined && to !== undefined) {
    if (from >= to) return `--from (${iso(from)}) must be before --to (${iso(to)})`;
    if (to - from > windowMs)
      return (
        `--from ${iso(from)} to --to ${iso(to)} is longer than --window (${windowMs / 1000} s), the captured ` +
        `traffic a step replays: narrow them, or give a longer --window`
      );
    return { startMs: from, endMs: to };
  }
  return from !== undefined
    ? { startMs: from, endMs: from + windowMs }
    : { startMs: (to as number) - windowMs, endMs: to as number };
}

/** The search's configuration, or what is wrong with its flags. */
export function capacityConfig(flags: CapacityCommandOptions): CapacityConfig | string {
  const search: SearchSettings = {
    startFactor: flags.startFactor,
    growth: flags.growth,
    resolution: flags.resolution,
    maxFactor: flags.maxFactor,
  };
  const problems = validateSearchSettings(search);
  if (problems.length > 0)
    return problems
      .map((p) => p.replace(/\b(startFactor|growth|resolution|maxFactor)\b/g, (m) => SEARCH_FLAGS[m] ?? m))
      .join('; ');
  if (Object.keys(flags.goodput).length === 0) return '--goodput needs at least one metric:value pair';
  // Each step replays at its factor as `--amplify` does, bounded the same; a larger one failed mid-search.
  if (flags.maxFactor > MAX_AMPLIFY)
    return `--max-factor must be at most ${MAX_AMPLIFY}, the largest amplification (got ${flags.maxFactor})`;
  if (flags.cooldown * 1000 > MAX_TIMER_MS)
    return (
      `--cooldown must be at most ${Math.floor(MAX_TIMER_MS / 1000)} s (about 24.8 days, the longest timer ` +
      `Node keeps) (got ${flags.cooldown})`
    );
  const {
    target,
    goodput,
    minGoodput,
    maxErrorRate,
    window,
    startFactor: _s,
    growth: _g,
    resolution: _r,
    maxFactor: _m,
    cooldown,
    maxClientLag,
    together,
    from,
    to,
    progress,
    ...shared
  } = flags;
  const byTime = from !== undefined || to !== undefined ? timeWindow(from, to, window) : null;
  if (typeof byTime === 'string') return byTime;
  const startOffsetMs = byTime ? 0 : (flags.startOffset ?? 0);
  const endOffsetMs = byTime ? byTime.endMs - byTime.startMs : startOffsetMs + window;
  const replay = replayConfig({
    ...shared,
    target,
    targetName: 'target',
    // By time, the window is the records': replay refuses --start-offset beside --from/--to.
    ...(byTime
      ? { from: byTime.startMs, to: byTime.endMs, startOffset: flags.startOffset }
      : { startOffset: startOffsetMs, endOffset: endOffsetMs }),
    goodput,
    // Each step's bar on a terminal, after the line that names its target and factor.
    progress: progress !== false,
  });
  if (typeof replay === 'string') return replay;
  return {
    runId: replay.runId,
    capturesPath: flags.capturesPath,
    out: flags.out,
    window: { startOffsetMs, endOffsetMs, captureWindow: replay.window },
    objectives: { slos: goodput, minGoodput, maxErrorRate, maxClientLagMs: maxClientLag },
    search,
    cooldownMs: cooldown * 1000,
    together,
    replay,
  };
}
