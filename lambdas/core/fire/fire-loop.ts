/**
 * The timed fire loop: sends each scheduled request at its due time while earlier ones are
 * still streaming, and returns exactly one outcome per request.
 *
 * - Sends are started, not awaited: one slow response never delays the next due request.
 * - A request held back by `maxInFlight` fires as soon as a slot frees; it is then late and
 *   its schedule lag says so (no silent re-timing: coordinated omission stays visible).
 * - Lateness beyond `latePolicy.toleranceMs` when the loop reaches a request: fire it anyway
 *   (lag recorded) or drop it with reason `late_beyond_tolerance`.
 * - Stop (`signal`): requests not yet fired are dropped as `aborted`; those in flight are
 *   awaited. Cancel (`cancelSignal`, handed to every send): the client ends those in flight
 *   at once, each recorded as cancelled (CancelledError, code 499). A caller that stops
 *   gracefully aborts `signal` first and `cancelSignal` after a grace period.
 */
import { setMaxListeners } from 'node:events';
import type { Clock, TargetClient, TargetRequest } from '../../ports';
import { deterministicUuid } from '../ids';
import type { DropReason, FireOutcome, ScheduledRequest, TargetResult } from '../types';
import { Semaphore } from './semaphore';

export interface LatePolicy {
  toleranceMs: number;
  action: 'fire' | 'drop';
}

export interface FireLoopOptions {
  runId: string;
  target: TargetClient;
  clock: Clock;
  /** Epoch ns at which offsetMs = 0 is due. */
  startNs: bigint;
  workerId: string;
  maxInFlight?: number;
  /**
   * Permits shared with other loops (several shards in one invocation): a request fires only
   * holding one. Combined with `maxInFlight` when both are given.
   */
  sharedInFlight?: Semaphore;
  latePolicy?: LatePolicy;
  /**
   * A request reached more than this after its due time is not fired whatever the late
   * policy: it is dropped as `expired`. A redelivered shard's requests are past their run's
   * window then, and firing them would send real traffic into a run that may be finalised.
   */
  expireAfterMs?: number;
  /** Stops scheduling: requests not yet fired are dropped as `aborted`. */
  signal?: AbortSignal;
  /** Cancels requests in flight (passed to `TargetClient.send`): each ends as CancelledError (499). */
  cancelSignal?: AbortSignal;
  onOutcome?: (outcome: FireOutcome) => void;
}

/**
 * Connections a target opens ahead of the first due request (TargetClient.warm): as many as
 * requests fall due in the plan's busiest WARM_WINDOW_MS, at least WARM_MIN and at most
 * WARM_MAX (and never more than maxInFlight), WARM_AHEAD_MS before the first due time (at
 * once when that has passed). A fast target needs few of them; they are there so that the
 * first requests do not each wait for a connection of their own (socket-reserve.ts).
 */
export const WARM_WINDOW_MS = 100;
export const WARM_MIN = 4;
export const WARM_MAX = 256;
export const WARM_AHEAD_MS = 1_000;

/** The most offsets (sorted ascending) within any `windowMs`. */
export function busiestWindow(sortedOffsetsMs: ArrayLike<number>, windowMs: number): number {
  let most = 0;
  for (let hi = 0, lo = 0; hi < sortedOffsetsMs.length; hi++) {
    while ((sortedOffsetsMs[hi] as number) - (sortedOffsetsMs[lo] as number) >= windowMs) lo++;
    most = Math.max(most, hi - lo + 1);
  }
  return most;
}

function clientFailure(clock: Clock, startNs: bigint, error: unknown): TargetResult {
  const now = clock.nowNs();
  return {
    requestStartNs: startNs,
    requestAckNs: null,
    requestEndNs: now,
    contentChunkNs: [],
    httpStatus: null,
    usage: null,
    error: { code: null, type: 'ClientError', message: error instanceof Error ? error.message.slice(0, 300) : String(error).slice(0, 300) },
  };
}

export async function runFireLoop(requests: readonly ScheduledRequest[], options: FireLoopOptions): Promise<FireOutcome[]> {
  const { clock, target } = options;
  // Cancelling also stops: nothing new is sent once requests in flight are being cancelled.
  const signal = options.signal && options.cancelSignal ? AbortSignal.any([options.signal, options.cancelSignal]) : (options.signal ?? options.cancelSignal);
  // Every request in flight listens to the cancel signal: thousands at high rates, not a leak.
  if (options.cancelSignal) setMaxListeners(0, options.cancelSignal);
  const own = options.maxInFlight !== undefined && Number.isFinite(options.maxInFlight) ? new Semaphore(options.maxInFlight) : null;
  const permits = [own, options.sharedInFlight].filter((s): s is Semaphore => s !== undefined && s !== null);
  const expireNs = options.expireAfterMs !== undefined ? BigInt(Math.round(options.expireAfterMs * 1e6)) : null;
  const toleranceNs = options.latePolicy && Number.isFinite(options.latePolicy.toleranceMs) ? BigInt(Math.round(options.latePolicy.toleranceMs * 1e6)) : null;
  const dropLate = options.latePolicy?.action === 'drop';

  const ordered = requests.every((r, i) => i === 0 || (requests[i - 1] as ScheduledRequest).offsetMs <= r.offsetMs)
    ? requests
    : [...requests].sort((a, b) => a.offsetMs - b.offsetMs || a.index - b.index);

  // Everything that can be computed before the timing-critical moment is computed here.
  const prepared = ordered.map((request) => {
    const requestId = deterministicUuid(options.runId, target.name, request.index);
    const wire: TargetRequest = {
      requestId,
      correlationId: request.correlationId,
      contentType: request.contentType,
      body: request.body,
      streaming: request.streaming,
      ...(request.accept !== null ? { accept: request.accept } : {}),
    };
    return { request, requestId, wire, dueNs: options.startNs + BigInt(Math.round(request.offsetMs * 1e6)) };
  });

  const outcomes = new Map<ScheduledRequest, FireOutcome>();
  const record = (outcome: FireOutcome) => {
    outcomes.set(outcome.request, outcome);
    options.onOutcome?.(outcome);
  };
  const drop = (p: (typeof prepared)[number], reason: DropReason) =>
    record({ request: p.request, target: target.name, requestId: p.requestId, scheduledNs: p.dueNs, workerId: options.workerId, result: null, dropReason: reason });

  const inFlight = new Set<Promise<void>>();
  const release = () => {
    for (const s of permits) s.release();
  };

  let aborted = false;
  const first = prepared[0];
  if (target.warm && first) {
    const busiest = busiestWindow(prepared.map((p) => p.request.offsetMs), WARM_WINDOW_MS);
    const connections = Math.min(Math.max(busiest, WARM_MIN), WARM_MAX, options.maxInFlight ?? Infinity);
    try {
      await clock.waitUntil(first.dueNs - BigInt(WARM_AHEAD_MS * 1e6), signal);
      target.warm(connections);
    } catch (error) {
      if (!signal?.aborted) throw error;
      aborted = true;
    }
  }
  for (const p of prepared) {
    if (!aborted) {
      try {
        await clock.waitUntil(p.dueNs, signal);
        for (const s of permits) await s.acquire();
        if (signal?.aborted) release();
        signal?.throwIfAborted();
      } catch (error) {
        if (!signal?.aborted) throw error;
        aborted = true;
      }
    }
    if (aborted) {
      drop(p, 'aborted');
      continue;
    }
    const lateNs = clock.nowNs() - p.dueNs;
    if ((expireNs !== null && lateNs > expireNs) || (toleranceNs !== null && dropLate && lateNs > toleranceNs)) {
      release();
      drop(p, expireNs !== null && lateNs > expireNs ? 'expired' : 'late_beyond_tolerance');
      continue;
    }
    const fallbackStart = clock.nowNs();
    const sending: Promise<void> = target
      .send(p.wire, options.cancelSignal)
      .catch((error: unknown) => clientFailure(clock, fallbackStart, error))
      .then((result) => {
        record({ request: p.request, target: target.name, requestId: p.requestId, scheduledNs: p.dueNs, workerId: options.workerId, result, dropReason: null });
      })
      .finally(() => {
        inFlight.delete(sending);
        release();
      });
    inFlight.add(sending);
  }
  await Promise.all(inFlight);
  // Plan order, exactly one outcome per request.
  return requests.map((r) => outcomes.get(r) as FireOutcome);
}
