/**
 * One shard's requests through the fire loop (lambdas/core/fire/fire-loop.ts), computed in a
 * loop rather than as events: each request is picked up at max(its due time, the loop's
 * start) (later when the target's connection permits are all held), then:
 * - reached more than `expireMs` after its due time: dropped as `expired` (whatever the policy);
 * - more than `toleranceMs` late under the `drop` policy: dropped as `late_beyond_tolerance`;
 * - else sent: it reaches the server its pick-up lateness plus the handler's own lateness
 *   later (measured: sim/measured.ts), and its response ends a draw of the target's response time
 *   after that, at most the request timeout.
 * The shard ends with its last response. `requestFate` is the loop's rule, checked against the
 * real runFireLoop in test/unit/sim/fire-loop.test.ts.
 */
import { sortFloat64InPlace } from '../lambdas/core/stats/sort';
import type { Lognormal, Rng } from './random';
import { drawOwnLateness, type OwnLateness } from './measured';
import type { MinHeap } from '../lambdas/core/min-heap';

export type RequestFate = 'fire' | 'expired' | 'late_beyond_tolerance';

export function requestFate(
  lateMs: number,
  expireMs: number,
  toleranceMs: number,
  policy: 'fire' | 'drop',
): RequestFate {
  if (lateMs > expireMs) return 'expired';
  if (policy === 'drop' && lateMs > toleranceMs) return 'late_beyond_tolerance';
  return 'fire';
}

export interface FireLoopModel {
  expireMs: number;
  toleranceMs: number;
  policy: 'fire' | 'drop';
  requestTimeoutMs: number;
  /** The handler's own lateness at the server (sim/measured.ts). */
  own: OwnLateness;
  latency: Lognormal;
  rng: Rng;
}

export interface ShardFire {
  fired: number;
  expired: number;
  lateDropped: number;
  /** When the last response ended (the loop's start when nothing was sent). */
  endMs: number;
  /** Stopped at `stopAtMs` with requests still to send. */
  stopped: boolean;
}

/** Where the lateness (ms, at the server) of every request sent goes. */
export class LatenessSink {
  values: Float64Array;
  count = 0;

  constructor(capacity: number) {
    this.values = new Float64Array(Math.max(16, capacity));
  }

  push(ms: number): void {
    if (this.count === this.values.length) {
      const grown = new Float64Array(this.values.length * 2);
      grown.set(this.values);
      this.values = grown;
    }
    this.values[this.count++] = ms;
  }

  /** Sorted lateness values (sorts in place once). */
  sorted(): Float64Array {
    return sortFloat64InPlace(this.values.subarray(0, this.count));
  }
}

/**
 * Fires one shard whose due times are `base + offsets[i]` (ms, ascending) from `startMs`, sharing
 * the target's `permits` connection slots with the invocation's other shards of that target:
 * `permits` holds the end times of requests in flight (a min-heap), or is null when the
 * invocation's requests for that target fit the permits anyway. Lambda stops the invocation at
 * `stopAtMs` (its timeout): a request not picked up by then is not sent.
 */
export function fireShard(
  offsets: ArrayLike<number>,
  base: number,
  startMs: number,
  m: FireLoopModel,
  sink: LatenessSink,
  permits: MinHeap<null> | null,
  permitCount: number,
  stopAtMs = Infinity,
): ShardFire {
  const out: ShardFire = { fired: 0, expired: 0, lateDropped: 0, endMs: startMs, stopped: false };
  for (let i = 0; i < offsets.length; i++) {
    const due = base + (offsets[i] as number);
    let pickup = due > startMs ? due : startMs;
    if (permits && permits.size >= permitCount) pickup = Math.max(pickup, permits.popKey()!);
    if (pickup >= stopAtMs) {
      out.stopped = true;
      break;
    }
    const fate = requestFate(pickup - due, m.expireMs, m.toleranceMs, m.policy);
    if (fate !== 'fire') {
      if (fate === 'expired') out.expired++;
      else out.lateDropped++;
      continue;
    }
    const onWire = pickup + drawOwnLateness(m.own, m.rng.uniform());
    sink.push(onWire - due);
    const end = onWire + Math.min(m.requestTimeoutMs, m.rng.lognormal(m.latency));
    permits?.push(end, null);
    out.fired++;
    if (end > out.endMs) out.endMs = end;
  }
  return out;
}
