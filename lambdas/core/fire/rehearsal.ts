/**
 * A rehearsal before the first due time: the hot path compiled before the first request is due.
 * Shared by both drivers: the CLI rehearses before schedule zero (lambdas/local/rehearsal.ts),
 * the fire function during its lead, once per execution environment
 * (lambdas/runtime/fire-warm-up.ts).
 *
 * V8 runs new code in its interpreter and optimises a function only after it has run often.
 * A replay that opens at a high rate runs its first requests (undici's pool, client and HTTP
 * parser, the target's measuring, the fire loop) through cold code, several times slower per
 * request: requests fall behind, the pool opens a connection for every one that finds the
 * others busy, and the whole first second is late (bench/RESULTS.md).
 *
 * How: rehearseTwins.
 */
import type { Clock, TargetClient } from '../../ports';
import type { ScheduledRequest } from '../types';
import { runFireLoop } from './fire-loop';

/** Bodies taken from the plan (cycled): enough for their sizes and shapes, few to hold. */
export const REHEARSAL_BODIES = 64;
/** `auto`'s most requests per target and thread: what keeps a replay opening at 1,000-2,000/s on time (bench/RESULTS.md). */
export const AUTO_REHEARSAL_MOST = 2_000;

/**
 * `--rehearsal auto`: requests per target for a thread that fires `threads`' share of plans
 * whose busiest second holds `busiestSecond` requests and the largest of which holds
 * `largestPlan`: twice the busiest second's share, so that the code is warm before a burst like
 * it; at least REHEARSAL_BODIES, so that every body shape has been through the code (its first
 * run, which compiles it, the costliest); at most AUTO_REHEARSAL_MOST, and never more than the
 * thread sends a target. A replay of a few requests a second has no burst for cold code to make
 * late, and waits a fraction of a second instead of seconds.
 */
export function autoRehearsalRequests(busiestSecond: number, threads: number, largestPlan: number): number {
  const share = (n: number) => Math.ceil(n / Math.max(1, threads));
  return Math.min(AUTO_REHEARSAL_MOST, share(largestPlan), Math.max(REHEARSAL_BODIES, 2 * share(busiestSecond)));
}

/** Requests in flight at once to the sink. */
const REHEARSAL_IN_FLIGHT = 32;
/** Due-time spacing of the rehearsal's requests (ms): the precise wait is rehearsed too. */
const REHEARSAL_SPACING_MS = 0.1;

export interface RehearsalResult {
  /** Requests the twins sent, over every target. */
  requests: number;
  /** Of those, answered without an error by the sink (a twin that fails everything compiles the wrong path). */
  succeeded: number;
  /** Wall time of the whole rehearsal (ms). */
  ms: number;
}

/** A target's twin, pointed at a sink in this process; `close` stops both. */
export interface Twin {
  twin: TargetClient;
  close(): Promise<void>;
}

/** Builds the twin of one target (its sink started). */
export type TwinFactory = () => Promise<Twin>;

/** `count` requests to the sink with the first bodies of `plan` (cycled), due REHEARSAL_SPACING_MS apart. */
export function rehearsalRequests(plan: readonly ScheduledRequest[], count: number): ScheduledRequest[] {
  const sample = plan.slice(0, REHEARSAL_BODIES);
  if (sample.length === 0) return [];
  return Array.from({ length: count }, (_, i) => ({
    ...(sample[i % sample.length] as ScheduledRequest),
    index: i,
    offsetMs: i * REHEARSAL_SPACING_MS,
  }));
}

/**
 * Runs each target's twin `requests` times against its sink, with that target's planned
 * requests (`samples[i]`, the first REHEARSAL_BODIES are used). Targets with nothing planned
 * are skipped; the sinks are stopped whatever happens. `signal` stops the rehearsal early
 * (the fire function's first due time coming): what was not sent is not counted.
 *
 * So each target's client code first runs `requests` times against a sink in the same process
 * (answering at once, with the same streaming or not): a twin of the target's client (same
 * kind, same options, the sink's address), fed by the fire loop with the plan's own bodies.
 * Nothing is sent to the target; the twin's connections and outcomes are discarded. The
 * functions compiled are the ones the run uses (V8 keeps optimised code per function, shared by
 * every client the same code builds). Each driver builds its twins and sinks (`TwinFactory`).
 */
export async function rehearseTwins(
  twins: readonly TwinFactory[],
  samples: readonly (readonly ScheduledRequest[])[],
  requests: number,
  clock: Clock,
  signal?: AbortSignal,
): Promise<RehearsalResult> {
  const startedNs = clock.nowNs();
  let sent = 0;
  let succeeded = 0;
  for (const [i, makeTwin] of twins.entries()) {
    const batch = requests > 0 ? rehearsalRequests(samples[i] ?? [], requests) : [];
    if (batch.length === 0 || signal?.aborted) continue;
    const { twin, close } = await makeTwin();
    try {
      const outcomes = await runFireLoop(batch, {
        runId: 'rehearsal',
        target: twin,
        clock,
        startNs: clock.nowNs(),
        workerId: 'rehearsal',
        maxInFlight: REHEARSAL_IN_FLIGHT,
        ...(signal ? { signal } : {}),
      });
      const done = outcomes.filter((o) => o.result !== null);
      sent += done.length;
      succeeded += done.filter((o) => o.result?.error === null).length;
    } finally {
      await close();
    }
  }
  return { requests: sent, succeeded, ms: Number(clock.nowNs() - startedNs) / 1e6 };
}
