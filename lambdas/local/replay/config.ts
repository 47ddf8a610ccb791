/**
 * The replay command's configuration: the flags as commander parsed them (program.ts defines
 * them, their help, parsers and defaults), turned once into one validated, typed config that
 * the run reads and the results record (`inputConfigOf`). A problem is a usage error in the
 * flags' own words.
 */
import { randomBytes } from 'node:crypto';
import type { WaitMode } from '../../adapters/system-clock';
import type { CompareOptions } from '../../core/compare/types';
import { replayInputConfig, type ExportInputConfig } from '../../core/export/input-config';
import { validatePlanOptions, type PlanOptions } from '../../core/plan/plan';
import { MAX_REHEARSAL_REQUESTS } from '../cli-usage';
import { compareOptionsOf, type ComparisonFlags } from '../comparison-flags';
import { capturesLocation, type CaptureWindow } from '../captures-source';
import type { CloudWatchFlags } from '../cloudwatch-output';
import { planFlag, planProblemsAsFlags } from './plan-flags';
import { targetsOf, type CliTarget, type TargetFlags } from './targets';

/** `capture-replay replay`'s flags, as commander hands them over (or a caller that runs it in-process). */
export interface ReplayCommandOptions extends TargetFlags, ComparisonFlags, CloudWatchFlags {
  capturesPath: string;
  dispatch?: 'parallel' | 'sequential';
  out: string;
  path: string;
  streaming: boolean;
  model?: string;
  apiKeyEnv?: string;
  startOffset?: number;
  endOffset?: number;
  /** --from/--to: the captured window by inferenceTime, epoch ms ([from, to)); they select the S3 partitions read. */
  from?: number;
  to?: number;
  /** --region: the s3:// captures' bucket region (default: the SDK's default chain). */
  region?: string;
  timeScale: number;
  intraSecond: 'spread' | 'burst';
  limit?: number;
  sample?: number;
  /** k times the captured requests per unit of time (plan.ts rule 4; k < 1 samples). */
  amplify?: number;
  seed: number;
  maxInFlight?: number;
  /**
   * Fire threads: `auto` (default) is this thread up to ~2,500 requests/s at the plan's peak,
   * else a worker thread per ~2,500/s up to the cores less one (fire-workers.ts); a number as given.
   */
  workers?: number | 'auto';
  /** `precise` (default): sub-millisecond; `coarse`: timers only, ~1 ms, less CPU (system-clock.ts). */
  wait?: WaitMode;
  /**
   * Requests per target and firing thread sent to an in-process sink before schedule zero (rehearsal.ts); default
   * `auto` (autoRehearsalRequests), 0: none.
   */
  rehearsal?: number | 'auto';
  timeout: number;
  lead: number;
  lateTolerance?: number;
  latePolicy: 'fire' | 'drop';
  maxErrorRate?: number;
  runId?: string;
  /** Replace the results of an earlier run with the same run id in `out` (output-folder.ts). */
  overwrite?: boolean;
  progress: boolean;
  /** Check that every target can be reached before the schedule starts (--no-preflight: false). Default true. */
  preflight?: boolean;
  /** Goodput SLOs (--goodput): metric tag -> threshold in the metric's unit. */
  goodput?: Record<string, number>;
  /** Keep excerpts of response text in error messages (--no-response-excerpts: false). Default true. */
  responseExcerpts?: boolean;
  /** After SIGINT/SIGTERM, how long requests in flight may finish before they are cancelled (ms; interrupt.ts). */
  cancelGrace?: number;
  /** Where to write human output (the summary table); errors go to stderr. */
  stdout?: NodeJS.WritableStream;
  stderr?: NodeJS.WritableStream;
}

/** The plan's options but the run id and the target kind, which are the run's and each target's. */
export type ReplayPlanOptions = Omit<PlanOptions, 'runId' | 'targetKind'>;

/** What a replay does, every default applied and every rule checked. */
export interface ReplayConfig {
  runId: string;
  capturesPath: string;
  /** Results go to <out>/<run-id>/<target>/. */
  out: string;
  /** An earlier run's results in <out>/<run-id>/ are replaced (removed first), not refused. */
  overwrite: boolean;
  targets: CliTarget[];
  dispatch: 'parallel' | 'sequential';
  /** --from/--to; null: the whole capture, or the plan's offsets. */
  window: CaptureWindow | null;
  /** The s3:// captures' region; null: the SDK's default chain. */
  region: string | null;
  plan: ReplayPlanOptions;
  /** --seed: the plan takes it with --sample only; the results record it always. */
  seed: number;
  /** How each request is sent. */
  request: { path: string; timeoutMs: number; apiKeyEnv: string | null; responseExcerpts: boolean };
  /** How the schedule is fired. */
  fire: {
    leadMs: number;
    maxInFlight: number | null;
    workers: number | 'auto';
    wait: WaitMode;
    rehearsal: number | 'auto';
    late: { toleranceMs: number | null; action: 'fire' | 'drop' };
    cancelGraceMs: number | null;
  };
  goodput: Record<string, number> | null;
  preflight: boolean;
  progress: boolean;
  compare: CompareOptions;
  /** What fails the run beyond the exit policy's rules (exit-policy.ts). */
  exit: { maxErrorRate: number | null; failOn: string[] | null };
}

export function newRunId(now = new Date()): string {
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  return `${stamp}-${randomBytes(3).toString('hex')}`;
}

const RUN_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** The plan's options from the flags (each optional one only when given). */
function planOptionsOf(flags: ReplayCommandOptions): ReplayPlanOptions {
  return {
    timeScale: flags.timeScale,
    intraSecond: flags.intraSecond,
    forceStreaming: flags.streaming,
    ...(flags.startOffset !== undefined ? { startOffsetMs: flags.startOffset } : {}),
    ...(flags.endOffset !== undefined ? { endOffsetMs: flags.endOffset } : {}),
    ...(flags.limit !== undefined ? { limit: flags.limit } : {}),
    ...(flags.sample !== undefined ? { sampleRate: flags.sample, seed: flags.seed } : {}),
    // Below 1 it samples, by --seed as --sample does.
    ...(flags.amplify !== undefined && flags.amplify !== 1 ? { amplify: flags.amplify, seed: flags.seed } : {}),
    ...(flags.model !== undefined ? { modelOverride: flags.model } : {}),
  };
}

/** --from/--to and --region, or what is wrong with them. */
function capturesOf(flags: ReplayCommandOptions): { window: CaptureWindow | null; region: string | null } | string {
  const location = capturesLocation(flags.capturesPath);
  if (typeof location === 'string') return location;
  if (flags.region !== undefined && location.kind !== 's3')
    return '--region is the region of s3:// captures (a SageMaker target takes its own: sagemaker:<endpoint>?region=...)';
  const region = flags.region ?? null;
  if (flags.from === undefined && flags.to === undefined) return { window: null, region };
  if (flags.startOffset !== undefined || flags.endOffset !== undefined)
    return '--from/--to and --start-offset/--end-offset both choose the window: use one or the other';
  const iso = (ms: number) => new Date(ms).toISOString();
  if (flags.from !== undefined && flags.to !== undefined && flags.from >= flags.to)
    return `--from (${iso(flags.from)}) must be before --to (${iso(flags.to)})`;
  return { window: { startMs: flags.from ?? null, endMs: flags.to ?? null }, region };
}

/** Node's longest timer (2^31 - 1 ms, ~24.8 days): a longer request timeout fired after 1 ms, with a TimeoutOverflowWarning per request. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * The limits commander's parsers leave to the config: numbers past what the run can hold, and
 * an API key variable that is not set (said before the preflight and the captures' reading,
 * as a usage error, not after them as a failed run).
 */
function limitsProblem(flags: ReplayCommandOptions, env: NodeJS.ProcessEnv): string | null {
  if (flags.timeout > MAX_TIMER_MS)
    return `--timeout must be at most ${MAX_TIMER_MS} ms (about 24.8 days, the longest timer Node keeps) (got ${flags.timeout})`;
  if (flags.lead > MAX_TIMER_MS)
    return `--lead must be at most ${MAX_TIMER_MS} ms (about 24.8 days, the longest timer Node keeps) (got ${flags.lead})`;
  if (typeof flags.rehearsal === 'number' && flags.rehearsal > MAX_REHEARSAL_REQUESTS)
    return `--rehearsal must be at most ${MAX_REHEARSAL_REQUESTS} (got ${flags.rehearsal})`;
  if (flags.apiKeyEnv && !env[flags.apiKeyEnv])
    return `--api-key-env ${flags.apiKeyEnv}: that environment variable is not set (or is empty)`;
  return null;
}

/** The config of a replay, or what is wrong with its flags (a usage error, in the flags' words). */
export function replayConfig(flags: ReplayCommandOptions, env: NodeJS.ProcessEnv = process.env): ReplayConfig | string {
  const runId = flags.runId ?? newRunId();
  if (!RUN_ID_PATTERN.test(runId)) return `--run-id must be letters, digits, '.', '_' or '-' (got "${runId}")`;
  const targets = targetsOf(flags);
  if (typeof targets === 'string') return targets;
  const plan = planOptionsOf(flags);
  const problems = validatePlanOptions({ ...plan, runId, targetKind: 'openai-chat' }, planFlag);
  if (problems.length > 0) return planProblemsAsFlags(problems);
  const captures = capturesOf(flags);
  if (typeof captures === 'string') return captures;
  const limits = limitsProblem(flags, env);
  if (limits) return limits;
  return {
    runId,
    capturesPath: flags.capturesPath,
    out: flags.out,
    overwrite: flags.overwrite === true,
    targets,
    dispatch: flags.dispatch ?? 'parallel',
    ...captures,
    plan,
    seed: flags.seed,
    request: {
      path: flags.path,
      timeoutMs: flags.timeout,
      apiKeyEnv: flags.apiKeyEnv ? flags.apiKeyEnv : null,
      responseExcerpts: flags.responseExcerpts !== false,
    },
    fire: {
      leadMs: flags.lead,
      maxInFlight: flags.maxInFlight ?? null,
      workers: flags.workers ?? 'auto',
      wait: flags.wait ?? 'precise',
      rehearsal: flags.rehearsal ?? 'auto',
      late: { toleranceMs: flags.lateTolerance ?? null, action: flags.latePolicy },
      cancelGraceMs: flags.cancelGrace ?? null,
    },
    goodput: flags.goodput ?? null,
    preflight: flags.preflight !== false,
    progress: flags.progress,
    compare: compareOptionsOf(flags),
    exit: { maxErrorRate: flags.maxErrorRate ?? null, failOn: flags.failOn ?? null },
  };
}

const isoOrNull = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** One target's export configuration (AIPerf's `input_config` + our `capture_replay`): input-config.ts. */
export function inputConfigOf(config: ReplayConfig, target: string): ExportInputConfig {
  const spec = config.targets.find((t) => t.name === target) ?? null;
  const { plan, fire } = config;
  return replayInputConfig({
    target,
    url: spec?.kind === 'http' ? spec.url.toString() : null,
    path: spec?.kind === 'http' ? config.request.path : null,
    model: plan.modelOverride ?? null,
    streaming: plan.forceStreaming ? true : null,
    timeoutMs: config.request.timeoutMs,
    capture: config.capturesPath,
    limit: plan.limit ?? null,
    maxInFlight: fire.maxInFlight,
    extra: {
      run_id: config.runId,
      ...(config.goodput ? { goodput: config.goodput } : {}),
      ...(spec?.kind === 'sagemaker' ? { sagemaker: { spec: spec.spec, ...spec.sagemaker } } : {}),
      schedule: {
        start_offset_ms: plan.startOffsetMs ?? null,
        end_offset_ms: plan.endOffsetMs ?? null,
        ...(config.window
          ? { capture_window: { start: isoOrNull(config.window.startMs), end: isoOrNull(config.window.endMs) } }
          : {}),
        time_scale: plan.timeScale,
        intra_second: plan.intraSecond,
        sample: plan.sampleRate ?? null,
        ...(plan.amplify !== undefined ? { amplify: plan.amplify } : {}),
        seed: config.seed,
        lead_ms: fire.leadMs,
      },
      load: {
        late_tolerance_ms: fire.late.toleranceMs,
        late_policy: fire.late.action,
        workers: fire.workers,
        wait: fire.wait,
        rehearsal: fire.rehearsal,
      },
    },
  });
}
