/**
 * The timed fire loop: sends each scheduled request at its due time while earlier ones are
 * still streaming, and returns exactly one outcome per request.
 *
 * - Sends are started, not awaited: one slow response never delays the next due request.
 * - A request held back by `maxInFlight` fires as soon as a slot frees; it is then late and
 *   its schedule lag says so (no silent re-timing: coordinated omission stays visible).
 * - Lateness beyond `latePolicy.toleranceMs` when the loop reaches a request: fire it anyway
 *   (lag recorded) or drop it with reason `late_beyond_tolerance`.
 * - Abort: requests not yet fired are dropped as `aborted`; those in flight are awaited (the
 *   client's timeout bounds them).
 */
import type { Clock, TargetClient, TargetRequest } from '../../ports';
import { deterministicUuid } from '../ids';
import type { DropReason, FireOutcome, ScheduledRequest, TargetResult } from '../types';

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
  latePolicy?: LatePolicy;
  signal?: AbortSignal;
  onOutcome?: (outcome: FireOutcome) => void;
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
  const { clock, target, signal } = options;
  const maxInFlight = options.maxInFlight ?? Infinity;
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
  let slotFreed: (() => void) | null = null;
  const waitForSlot = () => new Promise<void>((resolve) => (slotFreed = resolve));

  let aborted = false;
  for (const p of prepared) {
    if (!aborted) {
      try {
        await clock.waitUntil(p.dueNs, signal);
        while (inFlight.size >= maxInFlight) await waitForSlot();
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
    if (toleranceNs !== null && dropLate && clock.nowNs() - p.dueNs > toleranceNs) {
      drop(p, 'late_beyond_tolerance');
      continue;
    }
    const fallbackStart = clock.nowNs();
    const sending: Promise<void> = target
      .send(p.wire)
      .catch((error: unknown) => clientFailure(clock, fallbackStart, error))
      .then((result) => {
        record({ request: p.request, target: target.name, requestId: p.requestId, scheduledNs: p.dueNs, workerId: options.workerId, result, dropReason: null });
      })
      .finally(() => {
        inFlight.delete(sending);
        const wake = slotFreed;
        slotFreed = null;
        wake?.();
      });
    inFlight.add(sending);
  }
  await Promise.all(inFlight);
  // Plan order, exactly one outcome per request.
  return requests.map((r) => outcomes.get(r) as FireOutcome);
}
