/**
 * The local fire loop on more than one core. One thread holds about ONE_THREAD_RATE requests
 * per second (every request costs its own work: the HTTP exchange, stamps, parsing; the
 * precise wait naps rather than spins); above that, and when the machine has cores to spare,
 * the schedule is spread over worker threads, each with its own target clients and clock:
 * request i of a target's plan to worker i mod n, outcomes merged back into plan order,
 * `--max-in-flight` split between them, stop and cancel to every one, a crashed worker's
 * unreported requests counted `lost`. The rules as the user sees them:
 * docs/timing.md#more-than-one-core---workers.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { WaitMode } from '../adapters/system-clock';
import type { Clock } from '../ports';
import {
  autoRehearsalRequests,
  REHEARSAL_BODIES,
  rehearsalPasses,
  rehearse,
  type RehearsalPasses,
  type RehearsalResult,
} from './rehearsal';
import { runFireLoop, type FireLoopOptions } from '../core/fire/fire-loop';
import { beforeScheduleZero, openAheadPlan, type OpenAheadPlan } from './open-ahead';
import type { MeasuredConnect } from './preflight';
import { deterministicUuid } from '../core/ids';
import type { FireRunner } from '../core/run/replay';
import type { FireOutcome, ReplayPlan, ScheduledRequest } from '../core/types';
import type { FromWorker, RunJob, ToWorker, WorkerData } from './fire-worker';
import type { TargetClientSpec } from './target-clients';

/**
 * Requests per second one thread holds: on the 2-vCPU bench machine one thread used ~0.5 of a
 * core at 2,000/s (bench:lateness, bench/RESULTS.md), so it saturates near 4,000/s; a worker
 * is added per this much, below that margin.
 */
export const ONE_THREAD_RATE = 2500;
export const MAX_WORKERS = 64;
const READY_TIMEOUT_MS = 30_000;
/**
 * The built CLI (scripts/build-cli.ts) names its compiled worker, relative to this module's
 * source, by replacing CR_BUILT_FIRE_WORKER at build time; from the TypeScript sources (the
 * tests, the benchmarks) it is not defined, and the thread's entry registers tsx first.
 */
declare const CR_BUILT_FIRE_WORKER: string | undefined;
const DEFAULT_ENTRY =
  typeof CR_BUILT_FIRE_WORKER === 'string'
    ? new URL(CR_BUILT_FIRE_WORKER, import.meta.url)
    : new URL('./fire-worker-entry.mjs', import.meta.url);

/**
 * Requests in the busiest second of the run (any 1,000 ms window of due times). Targets fired
 * in parallel share the machine, so their schedules count together; sequential ones do not.
 */
export function peakRate(plans: readonly ReplayPlan[], dispatch: 'parallel' | 'sequential'): number {
  const busiest = (offsets: Float64Array) => {
    offsets.sort();
    let most = 0;
    for (let hi = 0, lo = 0; hi < offsets.length; hi++) {
      while ((offsets[hi] as number) - (offsets[lo] as number) >= 1000) lo++;
      most = Math.max(most, hi - lo + 1);
    }
    return most;
  };
  const offsetsOf = (list: readonly ReplayPlan[]) =>
    Float64Array.from(list.flatMap((plan) => plan.requests.map((r) => r.offsetMs)));
  return dispatch === 'parallel'
    ? busiest(offsetsOf(plans))
    : Math.max(0, ...plans.map((plan) => busiest(offsetsOf([plan]))));
}

/**
 * How many fire threads: `auto` is 1 (this thread, no worker) below ONE_THREAD_RATE, else one
 * per ONE_THREAD_RATE up to the cores available less one: a core is left for the rest (this
 * thread's merging, the OS, the responses' work, and often the target or a proxy on the same
 * host). Measured on 2 vCPUs with the server on the same machine, two workers were later at
 * the server than one thread at 1,000, 2,000 and 5,000/s (bench/RESULTS.md), so `auto` on
 * two cores is one thread. A number is taken as given. Never more than `--max-in-flight`
 * (each worker needs a share of it).
 */
export function workerCount(
  setting: number | 'auto',
  peak: number,
  cores = availableParallelism(),
  maxInFlight?: number,
): number {
  const wanted =
    setting === 'auto'
      ? peak < ONE_THREAD_RATE
        ? 1
        : Math.max(1, Math.min(cores - 1, Math.ceil(peak / ONE_THREAD_RATE)))
      : setting;
  return Math.max(1, Math.min(wanted, MAX_WORKERS, maxInFlight ?? Infinity));
}

export interface FireWorkersOptions {
  workers: number;
  wait: WaitMode;
  /** Per target (index as in runReplay's targets): how a worker builds its client. */
  specs: readonly TargetClientSpec[];
  /** A worker failed (crashed, or its fire loop threw): said once per worker and job. */
  onError: (message: string) => void;
  /** The worker's entry module (tests: one that crashes). */
  entry?: URL;
  /** Each worker rehearses before it is ready (rehearsal.ts): requests per target and pass, each target's plan, the passes. */
  rehearsal?: { requests: number; samples: ScheduledRequest[][]; passes: RehearsalPasses };
  /** Per target: the preflight's connect time (ms), null where none was measured (open-ahead.ts). */
  connects?: readonly (MeasuredConnect | null)[];
  /** Connections about to be opened ahead to a target: in all, by how many threads, and from how long before schedule zero at most. */
  openingAhead?: (target: string, ahead: { connections: number; threads: number; openBeforeMs: number }) => void;
}

interface PendingJob {
  name: string;
  requestsByIndex: Map<number, ScheduledRequest>;
  outcomes: Map<number, FireOutcome>;
  options: FireLoopOptions;
  /** Workers of this job that have not said done or failed. */
  open: Set<number>;
  finish: () => void;
}

export interface FireWorkers {
  readonly size: number;
  /** What each worker's rehearsal did (null: none asked). */
  readonly rehearsals: (RehearsalResult | null)[];
  /** runReplay's FireRunner: one target's plan over every worker. */
  run: FireRunner;
  /** Ends every worker (after the run, or on failure). */
  close(): Promise<void>;
}

/** The threads of one startFireWorkers and the jobs they are running. */
interface WorkerPool {
  options: FireWorkersOptions;
  workers: Worker[];
  jobs: Map<number, PendingJob>;
  nextJob: number;
  /** Set once the threads are being ended: an exit then is no death. */
  closing: boolean;
  /** Workers that have not died. */
  alive: Set<number>;
}

/** Starts `options.workers` threads and resolves once every one is loaded and ready. */
export async function startFireWorkers(options: FireWorkersOptions): Promise<FireWorkers> {
  const pool: WorkerPool = { options, workers: [], jobs: new Map(), nextJob: 0, closing: false, alive: new Set() };
  pool.workers = Array.from({ length: options.workers }, (_, w) => {
    const rehearsal =
      options.rehearsal && options.rehearsal.requests > 0
        ? { ...options.rehearsal, specs: [...options.specs] }
        : undefined;
    const worker = new Worker(options.entry ?? DEFAULT_ENTRY, {
      workerData: { wait: options.wait, ...(rehearsal ? { rehearsal } : {}) } satisfies WorkerData,
      execArgv: [],
    });
    pool.alive.add(w);
    return worker;
  });
  const rehearsals = await whenReady(pool);
  return {
    size: pool.workers.length,
    rehearsals,
    run: (requests, loop, target) => runJob(pool, requests, loop, target),
    async close() {
      pool.closing = true;
      await Promise.all(pool.workers.map((worker) => worker.terminate()));
    },
  };
}

/** Resolves with each worker's rehearsal once every one is ready; ends them all if one is not. */
async function whenReady(pool: WorkerPool): Promise<(RehearsalResult | null)[]> {
  const rehearsals: (RehearsalResult | null)[] = pool.workers.map(() => null);
  await Promise.all(
    pool.workers.map(
      (worker, w) =>
        new Promise<void>((resolve, reject) => {
          const timer = setTimeout(
            () => reject(new Error(`fire worker ${w + 1} did not start within ${READY_TIMEOUT_MS / 1000} s`)),
            READY_TIMEOUT_MS,
          );
          worker.on('message', (message: FromWorker) => {
            if (message.type === 'ready') {
              clearTimeout(timer);
              rehearsals[w] = message.rehearsal;
              resolve();
            } else receive(pool, w, message);
          });
          worker.on('error', (error) => {
            clearTimeout(timer);
            reject(error);
            died(pool, w, error instanceof Error ? error.message : String(error));
          });
          worker.on('exit', (code) => {
            clearTimeout(timer);
            reject(new Error(`fire worker ${w + 1} exited with code ${code} before it was ready`));
            if (!pool.closing) died(pool, w, `the thread exited (code ${code})`);
          });
        }),
    ),
  ).catch(async (error: unknown) => {
    pool.closing = true;
    await Promise.all(pool.workers.map((worker) => worker.terminate()));
    throw error;
  });
  return rehearsals;
}

function settle(pool: WorkerPool, job: number, w: number, failure: string | null): void {
  const pending = pool.jobs.get(job);
  if (!pending || !pending.open.delete(w)) return;
  if (failure !== null)
    pool.options.onError(
      `fire worker ${w + 1} of ${pool.workers.length} failed (${pending.name}): ${failure}; its requests not ` +
        `reported are counted as dropped (lost)`,
    );
  if (pending.open.size === 0) pending.finish();
}

function receive(pool: WorkerPool, w: number, message: FromWorker): void {
  if (message.type === 'outcomes') {
    const pending = pool.jobs.get(message.job);
    if (!pending) return;
    for (const { index, ...rest } of message.outcomes) {
      const request = pending.requestsByIndex.get(index);
      if (!request || pending.outcomes.has(index)) {
        pool.options.onError(
          `fire worker ${w + 1} reported request ${index} of ${pending.name} ` +
            `${request ? 'twice' : 'which it was not given'}: ignored (this is a bug, please report it)`,
        );
        continue;
      }
      const outcome: FireOutcome = { request, ...rest };
      pending.outcomes.set(index, outcome);
      pending.options.onOutcome?.(outcome);
    }
  } else if (message.type === 'done') settle(pool, message.job, w, null);
  else if (message.type === 'failed') settle(pool, message.job, w, message.message);
}

/** A worker that dies takes its open jobs with it: each is settled as failed, its rest lost. */
function died(pool: WorkerPool, w: number, why: string): void {
  if (!pool.alive.delete(w)) return;
  for (const [job, pending] of pool.jobs) if (pending.open.has(w)) settle(pool, job, w, why);
}

function send(pool: WorkerPool, w: number, message: ToWorker): void {
  if (pool.alive.has(w)) pool.workers[w]?.postMessage(message);
}

function broadcast(pool: WorkerPool, message: ToWorker): void {
  pool.workers.forEach((_, w) => send(pool, w, message));
}

/** runReplay's FireRunner: one target's plan dealt over every worker, its outcomes in plan order. */
async function runJob(
  pool: WorkerPool,
  requests: readonly ScheduledRequest[],
  loop: FireLoopOptions,
  target: { index: number; name: string },
): Promise<FireOutcome[]> {
  const spec = pool.options.specs[target.index];
  if (!spec) throw new Error(`no client spec for target ${target.name}`);
  const job = pool.nextJob++;
  const n = pool.workers.length;
  const shares = dealShares(requests, n);
  const done = new Promise<void>((finish) => {
    pool.jobs.set(job, {
      name: target.name,
      requestsByIndex: new Map(requests.map((r) => [r.index, r])),
      outcomes: new Map(),
      options: loop,
      open: new Set(shares.flatMap((share, w) => (share.length > 0 ? [w] : []))),
      finish,
    });
  });
  const pending = pool.jobs.get(job) as PendingJob;
  if (pending.open.size === 0) pending.finish();

  const onStop = () => broadcast(pool, { type: 'stop' });
  const onCancel = () => broadcast(pool, { type: 'cancel' });
  loop.signal?.addEventListener('abort', onStop, { once: true });
  loop.cancelSignal?.addEventListener('abort', onCancel, { once: true });
  if (loop.signal?.aborted) onStop();
  if (loop.cancelSignal?.aborted) onCancel();
  const capped = loop.maxInFlight !== undefined && Number.isFinite(loop.maxInFlight) ? loop.maxInFlight : null;
  const openAheads = openAheadsOf(
    shares.map((share, w) => ({
      share,
      maxInFlight: capped !== null ? Math.floor(capped / n) + (w < capped % n ? 1 : 0) : undefined,
    })),
    pool.options,
    target,
    loop,
  );
  shares.forEach((share, w) => {
    if (share.length === 0) return;
    if (!pool.alive.has(w)) {
      settle(pool, job, w, 'the thread had already stopped');
      return;
    }
    const maxInFlight = capped !== null ? Math.floor(capped / n) + (w < capped % n ? 1 : 0) : undefined;
    const openAhead = openAheads[w] ?? null;
    const message: RunJob = {
      type: 'run',
      job,
      spec,
      requests: share,
      runId: loop.runId,
      startNs: loop.startNs,
      workerId: loop.workerId,
      ...(maxInFlight !== undefined ? { maxInFlight } : {}),
      ...(openAhead ? { openAhead } : {}),
      ...(loop.latePolicy !== undefined ? { latePolicy: loop.latePolicy } : {}),
      ...(loop.expireAfterMs !== undefined ? { expireAfterMs: loop.expireAfterMs } : {}),
    };
    send(pool, w, message);
  });
  try {
    await done;
  } finally {
    pool.jobs.delete(job);
    loop.signal?.removeEventListener('abort', onStop);
    loop.cancelSignal?.removeEventListener('abort', onCancel);
  }
  return inPlanOrder(pending, requests, loop, target.name);
}

/**
 * What each thread opens ahead to a target for its share (open-ahead.ts; null: nothing),
 * said once to `openingAhead` (from when: the plan's time before schedule zero, or what is left
 * of the lead when that is less).
 */
function openAheadsOf(
  shares: readonly { share: readonly ScheduledRequest[]; maxInFlight: number | undefined }[],
  options: Pick<FireWorkersOptions, 'connects' | 'openingAhead'>,
  target: { index: number; name: string },
  loop: Pick<FireLoopOptions, 'startNs' | 'clock'>,
): (OpenAheadPlan | null)[] {
  const plans = shares.map(({ share, maxInFlight }) =>
    openAheadPlan(
      share.map((r) => r.offsetMs),
      options.connects?.[target.index] ?? null,
      maxInFlight,
    ),
  );
  const opening = plans.filter((p): p is OpenAheadPlan => p !== null);
  if (opening.length > 0) {
    options.openingAhead?.(target.name, {
      connections: opening.reduce((sum, p) => sum + p.connections, 0),
      threads: opening.length,
      openBeforeMs: Math.max(
        0,
        Math.min(
          Math.max(...opening.map((p) => p.openBeforeMs)),
          Math.round(Number(loop.startNs - loop.clock.nowNs()) / 1e6),
        ),
      ),
    });
  }
  return plans;
}

/**
 * The fire loop in this thread, with connections opened ahead to the target for this thread's
 * whole plan, before the loop's own `beforeStart` (the collection): open-ahead.ts.
 */
async function fireHere(
  requests: readonly ScheduledRequest[],
  loop: FireLoopOptions,
  plan: OpenAheadPlan | null,
): Promise<FireOutcome[]> {
  let cancel: () => void = () => undefined;
  try {
    return await runFireLoop(requests, {
      ...loop,
      beforeStart: () => {
        cancel = beforeScheduleZero(loop.target, plan, loop.startNs, loop.clock, () => loop.beforeStart?.());
      },
    });
  } finally {
    cancel();
  }
}

/** Request i in due order (the plan is sorted by offset; stable for ties) to worker i mod n. */
function dealShares(requests: readonly ScheduledRequest[], n: number): ScheduledRequest[][] {
  const shares: ScheduledRequest[][] = Array.from({ length: n }, () => []);
  const ordered = requests.every((r, i) => i === 0 || (requests[i - 1] as ScheduledRequest).offsetMs <= r.offsetMs)
    ? requests
    : [...requests].sort((a, b) => a.offsetMs - b.offsetMs || a.index - b.index);
  ordered.forEach((request, i) => shares[i % n]?.push(request));
  return shares;
}

/** The job's outcomes in plan order; a request no worker reported is accounted as lost, never left out. */
function inPlanOrder(
  pending: PendingJob,
  requests: readonly ScheduledRequest[],
  loop: FireLoopOptions,
  name: string,
): FireOutcome[] {
  return requests.map((request) => {
    const outcome = pending.outcomes.get(request.index);
    if (outcome) return outcome;
    const lost: FireOutcome = {
      request,
      target: name,
      requestId: deterministicUuid(loop.runId, name, request.index),
      scheduledNs: loop.startNs + BigInt(Math.round(request.offsetMs * 1e6)),
      workerId: loop.workerId,
      result: null,
      dropReason: 'lost',
    };
    loop.onOutcome?.(lost);
    return lost;
  });
}

/**
 * runReplay's `prepareFire` for the CLI: worker threads when the plans' peak rate (or
 * `--workers n`) asks for more than one, else the fire loop in this thread. Either way the
 * threads that will fire rehearse first (`rehearsal` requests per target, rehearsal.ts),
 * before any schedule zero is taken, and open connections ahead during the lead
 * (open-ahead.ts). The workers started are handed to `started` so that the caller closes them.
 */
export function prepareFireWorkers(
  setting: number | 'auto',
  settings: Omit<FireWorkersOptions, 'workers' | 'rehearsal'> & {
    maxInFlight?: number;
    /** Rehearsal requests per target and thread (0: none; auto: autoRehearsalRequests of the plans' busiest second and size). */
    rehearsal: number | 'auto';
    /** This thread's clock (the rehearsal in this thread runs on it). */
    clock: Clock;
    started: (workers: FireWorkers, peak: number) => void;
    rehearsed?: (results: RehearsalResult[], threads: number) => void;
  },
): (plans: readonly ReplayPlan[], dispatch: 'parallel' | 'sequential') => Promise<FireRunner | null> {
  return async (plans, dispatch) => {
    const peak = peakRate(plans, dispatch);
    const n = workerCount(setting, peak, availableParallelism(), settings.maxInFlight);
    const samples = plans.map((plan) => plan.requests.slice(0, REHEARSAL_BODIES));
    const largestPlan = Math.max(0, ...plans.map((plan) => plan.requests.length));
    const requests = settings.rehearsal === 'auto' ? autoRehearsalRequests(peak, n, largestPlan) : settings.rehearsal;
    const passes = rehearsalPasses(settings.connects, settings.specs.length);
    if (n <= 1) {
      // Called with none too: it forgets an earlier replay's second pass in this process (collectBeforeZero).
      const rehearsed = await rehearse(settings.specs, samples, requests, settings.clock, passes);
      if (requests > 0) settings.rehearsed?.([rehearsed], 1);
      return (planned, loop, target) =>
        fireHere(
          planned,
          loop,
          openAheadsOf([{ share: planned, maxInFlight: loop.maxInFlight }], settings, target, loop)[0] ?? null,
        );
    }
    const workers = await startFireWorkers({ ...settings, workers: n, rehearsal: { requests, samples, passes } });
    settings.started(workers, peak);
    const done = workers.rehearsals.filter((r): r is RehearsalResult => r !== null);
    if (done.length > 0) settings.rehearsed?.(done, n);
    return workers.run;
  };
}
