/**
 * The fire handler (lambdas/handlers/fire.ts over lambdas/core/pipeline/fire-stage.ts) on one
 * batch of shard messages, its records processed in parallel (Powertools' BatchProcessor), each:
 * - still early for its own lead (the real `stillEarly`): sent on with the real `deliveryDelay` (a hop);
 * - else its parts read when it travels by reference (GETs, 16 at a time), then the claim (a
 *   conditional PUT); a claim already taken means a duplicate (its results
 *   read) or, when older than the fire timeout with no results, the shard's requests recorded
 *   as lost (`lost-after-claim`);
 * - else its requests fired (sim/fire-loop.ts), then its results PUT; a shard of the run's last
 *   slot sends the collect message.
 * Returns what happens when, for the engine to apply up to the invocation's end (or its
 * timeout).
 */
import { deliveryDelay, stillEarly } from '../lambdas/core/pipeline/sqs-delay';
import { sortFloat64InPlace } from '../lambdas/core/stats/sort';
import { ONE_VCPU_MB } from '../lib/sizing';
import type { S3Timing } from './aws/s3';
import { MinHeap } from '../lambdas/core/min-heap';
import { fireShard, type FireLoopModel, type LatenessSink } from './fire-loop';
import type { SimSettings } from './settings';
import type { SimShard, Workload } from './workload';

export interface ShardPayload {
  kind: 'shard';
  target: number;
  shard: number;
  hops: number;
  /** The message's lead (ms): the deployment's, or the ramp's. */
  leadMs: number;
}

export interface Effect {
  at: number;
  run: () => void;
}

export interface HandlerRun {
  endMs: number;
  effects: Effect[];
  /** The function's timeout stopped it (before `endMs`): Lambda ends it there, and its messages come back. */
  stopped?: boolean;
}

export interface ShardState {
  claimedAt: number;
  /** When its results object was written (Infinity: not yet). */
  resultsAt: number;
}

export interface FireCounters {
  fired: number;
  expired: number;
  lateDropped: number;
  /** Requests recorded as lost by a redelivery that found an old claim and no results. */
  lostAfterClaim: number;
  duplicates: number;
  hops: number;
  s3Put: number;
  s3Get: number;
}

export interface FirePorts {
  /** Sends one message on the replay queue (a hop) at `at`. */
  sendShard(at: number, payload: ShardPayload, delaySeconds: number): void;
  /** Sends the collect message for a target's last shard at `at`. */
  sendCollect(at: number, target: number): void;
}

const ns = (ms: number) => BigInt(Math.round(ms * 1e6));
/** shard-parts.ts: parts read at once. */
const PART_READS_AT_ONCE = 16;

export class FireHandler {
  /** Per target, per shard index. */
  readonly state: Map<number, ShardState>[];
  readonly counters: FireCounters = {
    fired: 0,
    expired: 0,
    lateDropped: 0,
    lostAfterClaim: 0,
    duplicates: 0,
    hops: 0,
    s3Put: 0,
    s3Get: 0,
  };
  /** The run's start (epoch of offset 0), ms: fixed by the ingest. */
  runStartMs = 0;

  constructor(
    private readonly s: SimSettings,
    private readonly workload: Workload,
    private readonly loop: FireLoopModel,
    private readonly sink: LatenessSink,
    private readonly s3: S3Timing,
    private readonly ports: FirePorts,
  ) {
    this.state = Array.from({ length: s.workload.targets }, () => new Map());
  }

  /** The handler on `records`, starting at `startMs`, stopped by Lambda at `timeoutAtMs` (no request is sent from then). */
  handle(records: readonly ShardPayload[], startMs: number, timeoutAtMs = Infinity): HandlerRun {
    const effects: Effect[] = [];
    let endMs = startMs;
    const toFire: { p: ShardPayload; shard: SimShard; claimedAt: number }[] = [];
    for (const p of records) {
      const shard = this.workload.shards[p.shard] as SimShard;
      const firstDue = this.runStartMs + (shard.offsets[0] as number);
      if (stillEarly(ns(firstDue), ns(startMs), p.leadMs)) {
        const { delaySeconds } = deliveryDelay(ns(firstDue), ns(startMs), p.leadMs);
        const at = startMs + this.s.aws.sqs.sendBatchMs;
        this.counters.hops++;
        effects.push({ at, run: () => this.ports.sendShard(at, { ...p, hops: p.hops + 1 }, delaySeconds) });
        endMs = Math.max(endMs, at);
        continue;
      }
      const claimedAt = startMs + this.prepareMs(shard) + this.s3.one();
      this.counters.s3Put++;
      const state = this.state[p.target] as Map<number, ShardState>;
      const prior = state.get(p.shard);
      if (prior) endMs = Math.max(endMs, this.redelivered(prior, p, shard, claimedAt, effects));
      else {
        state.set(p.shard, { claimedAt, resultsAt: Infinity });
        toFire.push({ p, shard, claimedAt });
      }
    }
    const fired = this.fire(toFire, effects, timeoutAtMs);
    return { endMs: Math.max(endMs, fired.endMs), effects, ...(fired.stopped ? { stopped: true } : {}) };
  }

  /**
   * Before the claim: the shard's parts read (16 at a time, each a round trip and, per round of
   * 16, its bytes at the ASSUMED `getMBps`), and its requests decoded at the MEASURED rate of the function's
   * share of a vCPU (memory / 1,769 MB).
   */
  private prepareMs(shard: SimShard): number {
    const bytes = shard.offsets.length * this.workload.wireBytesPerRequest;
    this.counters.s3Get += shard.parts;
    const rounds = Math.ceil(shard.parts / PART_READS_AT_ONCE);
    const readMs =
      shard.parts > 0
        ? this.s3.pool(shard.parts, PART_READS_AT_ONCE) +
          (bytes / shard.parts / (this.s.aws.s3.getMBps * 1e6)) * 1000 * rounds
        : 0;
    const vcpu = Math.min(1, this.s.stack.fire.memoryMb / ONE_VCPU_MB);
    return readMs + (bytes / (this.s.handler.fireDecodeMBpsPerVcpu * 1e6 * vcpu)) * 1000;
  }

  /** A shard whose claim is taken: a duplicate, or lost after a claimant that died. */
  private redelivered(prior: ShardState, p: ShardPayload, shard: SimShard, at: number, effects: Effect[]): number {
    this.counters.s3Get++;
    if (prior.resultsAt <= at || at - prior.claimedAt <= this.s.stack.fire.timeoutS * 1000) {
      this.counters.duplicates++;
      return at + this.s3.one();
    }
    this.counters.s3Get++;
    this.counters.s3Put++;
    const written = at + this.s3.sequence(3);
    effects.push({
      at: written,
      run: () => {
        if (prior.resultsAt !== Infinity) return;
        prior.resultsAt = written;
        this.counters.lostAfterClaim += shard.offsets.length;
      },
    });
    if (this.inLastSlot(shard)) effects.push({ at: written, run: () => this.ports.sendCollect(written, p.target) });
    return written;
  }

  private inLastSlot(shard: SimShard): boolean {
    return shard.slot === this.workload.slots.length - 1;
  }

  /** Fires the claimed shards together; a target's shards share its connection permits. */
  private fire(
    toFire: { p: ShardPayload; shard: SimShard; claimedAt: number }[],
    effects: Effect[],
    stopAtMs: number,
  ): { endMs: number; stopped: boolean } {
    const permitCount = this.s.stack.connectionsPerTarget;
    let endMs = 0;
    let stopped = false;
    const byTarget = new Map<number, typeof toFire>();
    for (const f of toFire) byTarget.set(f.p.target, [...(byTarget.get(f.p.target) ?? []), f]);
    for (const group of byTarget.values()) {
      const total = group.reduce((n, f) => n + f.shard.offsets.length, 0);
      // Within the permits, each shard's loop runs alone; beyond them, the target's shards
      // queue for the same permits, in due order (their ends are then the group's).
      const shared = total > permitCount;
      const runs = shared
        ? [this.mergedRun(group)]
        : group.map((f) => ({ members: [f], offsets: f.shard.offsets, base: this.runStartMs, start: f.claimedAt }));
      for (const run of runs) {
        const r = fireShard(
          run.offsets,
          run.base,
          run.start,
          this.loop,
          this.sink,
          shared ? new MinHeap<null>() : null,
          permitCount,
          stopAtMs,
        );
        this.counters.fired += r.fired;
        this.counters.expired += r.expired;
        this.counters.lateDropped += r.lateDropped;
        // Stopped by the timeout before its last request, the loop never writes its results.
        if (r.stopped) stopped = true;
        else for (const f of run.members) endMs = Math.max(endMs, this.writeResults(f.p, f.shard, r.endMs, effects));
      }
    }
    return { endMs, stopped };
  }

  private mergedRun(group: { p: ShardPayload; shard: SimShard; claimedAt: number }[]) {
    const offsets = new Float64Array(group.reduce((n, f) => n + f.shard.offsets.length, 0));
    let at = 0;
    for (const f of group) {
      offsets.set(f.shard.offsets, at);
      at += f.shard.offsets.length;
    }
    sortFloat64InPlace(offsets);
    return { members: group, offsets, base: this.runStartMs, start: Math.max(...group.map((f) => f.claimedAt)) };
  }

  private writeResults(p: ShardPayload, shard: SimShard, firedUntil: number, effects: Effect[]): number {
    const written = firedUntil + this.s3.one();
    this.counters.s3Put++;
    const state = (this.state[p.target] as Map<number, ShardState>).get(p.shard) as ShardState;
    effects.push({ at: written, run: () => (state.resultsAt = Math.min(state.resultsAt, written)) });
    if (!this.inLastSlot(shard)) return written;
    const sent = written + this.s.aws.sqs.sendBatchMs;
    effects.push({ at: sent, run: () => this.ports.sendCollect(sent, p.target) });
    return sent;
  }
}
