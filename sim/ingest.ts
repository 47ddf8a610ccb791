/**
 * The ingest handler (lambdas/handlers/ingest.ts over lambdas/core/pipeline/dispatch.ts) on
 * one capture file, counted call by call and timed: pass 1, the dispatch, slot by slot.
 *
 * The rules, each with its source (DOCUMENTED, ASSUMED or MEASURED):
 * docs/simulator-model.md#the-ingest-handler.
 */
import { packBatches } from '../lambdas/core/pipeline/common';
import { MAX_RANGE_BYTES } from '../lambdas/core/plan/read-back';
import { deliveryDelay, rampLeads } from '../lambdas/core/pipeline/sqs-delay';
import { schedulingOf } from '../lambdas/handlers/run-input';
import type { S3Timing } from './aws/s3';
import type { CollectPayload } from './collect';
import type { Effect, HandlerRun, ShardPayload } from './fire';
import type { SimSettings } from './settings';
import type { SimShard, SimSlot, Workload } from './workload';

export interface IngestPayload {
  kind: 'notify';
}

export interface IngestCounters {
  s3Get: number;
  s3Put: number;
  shardMessages: number;
  /** Shards whose messages left after their first due time minus their lead (dispatch.ts's EmissionStats). */
  lateShards: number;
  maxLateMs: number;
  /** Messages delivered earlier than the plain lead, for the ramp, and the longest lead given. */
  rampedMessages: number;
  maxLeadMs: number;
  /** How much later than `lead` after pass 1 the run starts (the ramp's slots written first), ms. */
  startMovedMs: number;
}

export interface IngestPorts {
  /** The run's start is fixed (ms). */
  onStart(startMs: number, deadlineMs: number): void;
  sendShards(at: number, entries: { bytes: number; payload: ShardPayload; delaySeconds: number }[]): void;
  sendCollect(at: number, entries: { bytes: number; payload: CollectPayload; delaySeconds: number }[]): void;
}

/** dispatch.ts: batches in flight at once; slot-writer.ts: part PUTs at once; dispatch.ts's SEND_ALLOWANCE_MS. */
const BATCHES_AT_ONCE = 4;
const PUTS_AT_ONCE = 16;
const SEND_ALLOWANCE_MS = 2000;
/** A collect message's JSON (collect.ts collectMessage), about. */
const COLLECT_MESSAGE_BYTES = 130;
const ns = (ms: number) => BigInt(Math.round(ms * 1e6));

export class IngestHandler {
  readonly counters: IngestCounters = {
    s3Get: 0,
    s3Put: 0,
    shardMessages: 0,
    lateShards: 0,
    maxLateMs: 0,
    rampedMessages: 0,
    maxLeadMs: 0,
    startMovedMs: 0,
  };
  private startMs: number | null = null;
  private readonly packed = new Map<string, number[][]>();

  constructor(
    private readonly s: SimSettings,
    private readonly workload: Workload,
    private readonly s3: S3Timing,
    private readonly ports: IngestPorts,
  ) {}

  handle(records: readonly IngestPayload[], at: number): HandlerRun {
    const effects: Effect[] = [];
    let t = at;
    for (const _ of records) t = this.ingestFile(t, effects);
    return { endMs: t, effects };
  }

  /** Each shard's lead (ms), one per shard (its targets' messages share their due time). */
  private leads(): Float64Array {
    const st = this.s.stack;
    const leadMs = st.leadS * 1000;
    const { ramp } = schedulingOf({
      slotMs: Math.round(st.slotS * 1000),
      maxShardRequests: st.maxShardRequests,
      fireTimeoutMs: st.fire.timeoutS * 1000,
      requestTimeoutMs: st.requestTimeoutS * 1000,
      leadMs,
    });
    const shards = this.workload.shards;
    const targets = this.s.workload.targets;
    if (!ramp || !st.ramp) return new Float64Array(shards.length).fill(leadMs);
    // Messages in due order: shards are (slot by slot, lanes in order of their first request), every target's together.
    const shardOf = (k: number) => shards[Math.floor(k / targets)] as SimShard;
    const dues = Float64Array.from({ length: shards.length * targets }, (_, k) => shardOf(k).offsets[0] as number);
    const perMessage = rampLeads(
      dues,
      Int32Array.from({ length: dues.length }, (_, k) => shardOf(k).slot),
      { leadMs, ...ramp },
    );
    return Float64Array.from(shards, (_, i) => perMessage[i * targets] as number);
  }

  /** Reads a slot back and writes its by-reference lanes' parts, from `at`: when it is done. */
  private writeSlot(slot: SimSlot, at: number): number {
    const byRef = this.workload.shards
      .slice(slot.firstShard, slot.firstShard + slot.lanes)
      .filter((sh) => sh.parts > 0).length;
    let t = at;
    for (const requests of slot.chunks) {
      const bytes = requests * this.s.workload.recordBytes;
      this.counters.s3Get += Math.ceil(bytes / MAX_RANGE_BYTES);
      t += Math.max(this.s3.one(), (bytes / (this.s.handler.ingestParseMBps * 1e6)) * 1000);
      this.counters.s3Put += byRef;
      t += this.s3.pool(byRef, PUTS_AT_ONCE);
    }
    return t;
  }

  private ingestFile(at: number, effects: Effect[]): number {
    const leadMs = this.s.stack.leadS * 1000;
    const targets = this.s.workload.targets;
    this.counters.s3Get++;
    let t = at + (this.workload.fileBytes / (this.s.handler.ingestParseMBps * 1e6)) * 1000;
    this.counters.s3Put++; // the ingest report
    t += this.s3.one();
    const askedStart = t + leadMs;
    this.counters.s3Get++; // the run record, not there yet
    t += this.s3.one();
    const shards = this.workload.shards;
    const leads = this.leads();
    // The first slot is written before the start is fixed; the later ones at its pace.
    const written = new Map<SimSlot, number>();
    const slots = this.workload.slots;
    const first = slots[0];
    let ahead = -Infinity;
    if (first) {
      const began = t;
      t = this.writeSlot(first, t);
      written.set(first, t);
      const perRequest = (t - began) / Math.max(1, first.requests);
      let after = 0;
      slots.forEach((slot, m) => {
        if (m > 0) after += slot.requests * perRequest;
        for (let i = slot.firstShard; i < slot.firstShard + slot.lanes; i++)
          ahead = Math.max(ahead, after + (leads[i] as number) - ((shards[i] as SimShard).offsets[0] as number));
      });
    }
    const startMs =
      this.startMs ?? Math.max(askedStart, first ? t + ahead + (ahead > leadMs ? SEND_ALLOWANCE_MS : 0) : askedStart);
    const deadlineMs = startMs + this.workload.durationMs + (this.s.stack.requestTimeoutS + this.s.stack.graceS) * 1000;
    if (this.startMs === null) {
      this.startMs = startMs;
      this.counters.startMovedMs = startMs - askedStart;
      effects.push({ at: t, run: () => this.ports.onStart(startMs, deadlineMs) });
    }
    this.counters.s3Put += 1 + targets; // the start, then each target's ingest drops together
    t += this.s3.one() + this.s3.pool(targets, targets);
    for (const slot of this.workload.slots) {
      t = written.has(slot) ? t : this.writeSlot(slot, t);
      const now = t;
      const entries = shards.slice(slot.firstShard, slot.firstShard + slot.lanes).flatMap((shard) => {
        const lead = leads[shard.index] as number;
        const firstDue = startMs + (shard.offsets[0] as number);
        const lateMs = now - (firstDue - lead);
        if (lateMs > 0) {
          this.counters.lateShards++;
          this.counters.maxLateMs = Math.max(this.counters.maxLateMs, lateMs);
        }
        if (lead > leadMs) this.counters.rampedMessages += targets;
        this.counters.maxLeadMs = Math.max(this.counters.maxLeadMs, lead);
        const { delaySeconds } = deliveryDelay(ns(firstDue), ns(now), lead);
        const bytes = this.workload.shardMessageBytes(shard, lead !== leadMs);
        return Array.from({ length: targets }, (_, target) => ({
          bytes,
          payload: { kind: 'shard', target, shard: shard.index, hops: 0, leadMs: lead } as ShardPayload,
          delaySeconds,
        }));
      });
      const batches = this.pack(entries.map((e) => e.bytes));
      let k = 0;
      batches.forEach((size, b) => {
        const sentAt = now + (Math.floor(b / BATCHES_AT_ONCE) + 1) * this.s.aws.sqs.sendBatchMs;
        const batch = entries.slice(k, k + size);
        k += size;
        effects.push({ at: sentAt, run: () => this.ports.sendShards(sentAt, batch) });
      });
      this.counters.shardMessages += entries.length;
      t = now + Math.ceil(batches.length / BATCHES_AT_ONCE) * this.s.aws.sqs.sendBatchMs;
    }
    this.counters.s3Put++; // the run record
    t += this.s3.one();
    const collect = Array.from({ length: targets }, (_, target) => ({
      bytes: COLLECT_MESSAGE_BYTES,
      payload: { kind: 'collect', target, notBeforeMs: deadlineMs } as CollectPayload,
      delaySeconds: 0,
    }));
    const sent = t + this.s.aws.sqs.sendBatchMs;
    effects.push({ at: sent, run: () => this.ports.sendCollect(sent, collect) });
    return sent;
  }

  /**
   * The batch sizes the real packBatches makes of messages of these sizes (memoized by sizes).
   * Messages of one size share one body: a slot's thousands of lanes come in a few sizes, and
   * a body apiece would hold the slot's every message at once.
   */
  private pack(sizes: number[]): number[] {
    const key = sizes.join(',');
    let batches = this.packed.get(key);
    if (!batches) {
      const body = new Map<number, string>();
      const of = (n: number) => body.get(n) ?? (body.set(n, 'x'.repeat(n)), body.get(n) as string);
      const bodies = sizes.map((n, id) => ({ id: String(id), body: of(n), delaySeconds: 0 }));
      batches = packBatches(bodies).map((b) => b.map((m) => Number(m.id)));
      this.packed.set(key, batches);
    }
    return batches.map((b) => b.length);
  }
}
