/**
 * The timed fire loop: sends each scheduled request at its due time while earlier ones are
 * still streaming, and returns exactly one outcome per request:
 * - Sends are started, not awaited: one slow response never delays the next due request.
 * - A client with work of its own before a write (TargetClient.preparesAheadMs: the AWS SDK's
 *   signing) gets each request that long ahead, with the time to write it (`notBeforeNs`).
 * - A request held back by `maxInFlight` fires as soon as a slot frees; it is then late and
 *   its schedule lag says so (no silent re-timing: coordinated omission stays visible).
 * - Lateness beyond `latePolicy.toleranceMs` when the loop reaches a request: fire it anyway
 *   (lag recorded) or drop it with reason `late_beyond_tolerance`.
 * - Stop (`signal`): requests not yet fired are dropped as `aborted`; those in flight are
 *   awaited. Cancel (`cancelSignal`, handed to every send): the client ends those in flight
 *   at once, each recorded as cancelled (CancelledError, code 499); a graceful stop aborts
 *   `signal` first and `cancelSignal` after a grace period.
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
  /**
   * Called once the requests are prepared, before the wait for the first one: the CLI collects
   * garbage here, so that neither a major collection left over from before the run lands in it
   * nor its first scavenges copy what was prepared for it (adapters/full-gc.ts).
   */
  beforeStart?: () => void;
}

/**
 * Behind schedule by more than this at pick-up, a request waits one turn of the event loop
 * before it is sent. A loop that fell behind (a garbage collection, a busy machine) finds many
 * requests overdue at once, and `waitUntil` returns at once for each: sent back to back, with
 * no I/O in between, they all found their connections still busy (the responses that came
 * during the stall not yet read) and the pool opened a new connection for each; at 2,000
 * requests/s one stall led to 261. A turn (setImmediate runs after the poll phase) reads
 * those responses first, so an overdue request goes out on a connection that is free again.
 */
export const CATCH_UP_TURN_NS = 1_000_000n;
const turnOfTheLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

function clientFailure(clock: Clock, startNs: bigint, error: unknown): TargetResult {
  const now = clock.nowNs();
  return {
    requestStartNs: startNs,
    requestAckNs: null,
    requestEndNs: now,
    contentChunkNs: [],
    httpStatus: null,
    usage: null,
    error: {
      code: null,
      type: 'ClientError',
      message: error instanceof Error ? error.message.slice(0, 300) : String(error).slice(0, 300),
    },
  };
}

/**
 * The loop: every request's outcome handed to `options.onOutcome` once, as it ends; none kept
 * (a fire invocation writes each as it comes, so a lane's thousands of results are not held
 * while it fires: fire-stage.ts).
 */
export async function fireEach(requests: readonly ScheduledRequest[], options: FireLoopOptions): Promise<void> {
  const { clock, target } = options;
  // Cancelling also stops: nothing new is sent once requests in flight are being cancelled.
  const signal =
    options.signal && options.cancelSignal
      ? AbortSignal.any([options.signal, options.cancelSignal])
      : (options.signal ?? options.cancelSignal);
  // Every request in flight listens to the cancel signal: thousands at high rates, not a leak.
  if (options.cancelSignal) setMaxListeners(0, options.cancelSignal);
  const own =
    options.maxInFlight !== undefined && Number.isFinite(options.maxInFlight)
      ? new Semaphore(options.maxInFlight)
      : null;
  const permits = [own, options.sharedInFlight].filter((s): s is Semaphore => s !== undefined && s !== null);
  const expireNs = options.expireAfterMs !== undefined ? BigInt(Math.round(options.expireAfterMs * 1e6)) : null;
  const toleranceNs =
    options.latePolicy && Number.isFinite(options.latePolicy.toleranceMs)
      ? BigInt(Math.round(options.latePolicy.toleranceMs * 1e6))
      : null;
  const dropLate = options.latePolicy?.action === 'drop';

  const ordered = requests.every((r, i) => i === 0 || (requests[i - 1] as ScheduledRequest).offsetMs <= r.offsetMs)
    ? requests
    : [...requests].sort((a, b) => a.offsetMs - b.offsetMs || a.index - b.index);

  // A client that prepares a request ahead (TargetClient.preparesAheadMs) gets it that long
  // before its due time, told when to write it.
  const aheadNs = BigInt(Math.round(Math.max(0, target.preparesAheadMs ?? 0) * 1e6));
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
    const dueNs = options.startNs + BigInt(Math.round(request.offsetMs * 1e6));
    if (aheadNs > 0n) wire.notBeforeNs = dueNs;
    return { request, requestId, wire, dueNs };
  });

  const record = (outcome: FireOutcome) => options.onOutcome?.(outcome);
  const drop = (p: (typeof prepared)[number], reason: DropReason) =>
    record({
      request: p.request,
      target: target.name,
      requestId: p.requestId,
      scheduledNs: p.dueNs,
      workerId: options.workerId,
      result: null,
      dropReason: reason,
    });

  const inFlight = new Set<Promise<void>>();
  const release = () => {
    for (const s of permits) s.release();
  };

  options.beforeStart?.();
  let aborted = false;
  for (const p of prepared) {
    if (!aborted) {
      try {
        await clock.waitUntil(p.dueNs - aheadNs, signal);
        for (const s of permits) await s.acquire();
        if (clock.nowNs() - p.dueNs > CATCH_UP_TURN_NS) await turnOfTheLoop();
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
        record({
          request: p.request,
          target: target.name,
          requestId: p.requestId,
          scheduledNs: p.dueNs,
          workerId: options.workerId,
          result,
          dropReason: null,
        });
      })
      .finally(() => {
        inFlight.delete(sending);
        release();
      });
    inFlight.add(sending);
  }
  await Promise.all(inFlight);
}

/** The loop, its outcomes returned in plan order: exactly one per request. */
export async function runFireLoop(
  requests: readonly ScheduledRequest[],
  options: FireLoopOptions,
): Promise<FireOutcome[]> {
  const outcomes = new Map<ScheduledRequest, FireOutcome>();
  await fireEach(requests, {
    ...options,
    onOutcome: (outcome) => {
      outcomes.set(outcome.request, outcome);
      options.onOutcome?.(outcome);
    },
  });
  return requests.map((r) => outcomes.get(r) as FireOutcome);
}
