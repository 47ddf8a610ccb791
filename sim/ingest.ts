/**
 * The ingest handler (lambdas/handlers/ingest.ts over lambdas/core/pipeline/schedule.ts) on
 * one capture file, counted call by call and timed:
 * - pass 1 streams the object (one GET) at `ingestParseMBps` (MEASURED here: bench/RESULTS.md,
 *   "Ingest of a 1 GB capture file": 1,024 MB indexed in 13.7 s on moto) and writes the ingest
 *   report; the run starts `lead` after that (file mode), fixed once (`_start.json`), so a
 *   retried ingest reuses it;
 * - scheduleRun: the run record checked (GET), the start stored, each target's ingest drops
 *   written, then windows of 8 shards: each shard's lines read back (one ranged GET, the
 *   window's in parallel), its messages for every target packed by the real `packBatches`
 *   and sent 4 batches at a time, each delay from the real `deliveryDelay` at the moment of
 *   sending; then the run record, and one collect message per target due at the deadline.
 * S3 and SQS round trips take the ASSUMED `s3.requestMs` and `sqs.sendBatchMs`.
 */
import { packBatches } from '../lambdas/core/pipeline/common';
import { deliveryDelay } from '../lambdas/core/pipeline/sqs-schedule';
import type { CollectPayload } from './collect';
import type { Effect, HandlerRun, ShardPayload } from './fire';
import type { SimSettings } from './settings';
import type { Workload } from './workload';

export interface IngestPayload {
  kind: 'notify';
}

export interface IngestCounters {
  s3Get: number;
  s3Put: number;
  shardMessages: number;
  /** Shards whose messages left after their first due time minus the lead (schedule.ts's EmissionStats). */
  lateShards: number;
  maxLateMs: number;
}

export interface IngestPorts {
  /** The run's start is fixed (ms). */
  onStart(startMs: number, deadlineMs: number): void;
  sendShards(at: number, entries: { bytes: number; payload: ShardPayload; delaySeconds: number }[]): void;
  sendCollect(at: number, entries: { bytes: number; payload: CollectPayload; delaySeconds: number }[]): void;
}

/** schedule.ts: shards loaded and sent per window, and batches in flight at once. */
const WINDOW_SHARDS = 8;
const BATCHES_AT_ONCE = 4;
/** A collect message's JSON (collect.ts collectMessage), about. */
const COLLECT_MESSAGE_BYTES = 130;
const ns = (ms: number) => BigInt(Math.round(ms * 1e6));

export class IngestHandler {
  readonly counters: IngestCounters = { s3Get: 0, s3Put: 0, shardMessages: 0, lateShards: 0, maxLateMs: 0 };
  private startMs: number | null = null;
  private readonly packed = new Map<string, number[][]>();

  constructor(
    private readonly s: SimSettings,
    private readonly workload: Workload,
    private readonly ports: IngestPorts,
  ) {}

  handle(records: readonly IngestPayload[], at: number): HandlerRun {
    const effects: Effect[] = [];
    let t = at;
    for (const _ of records) t = this.ingestFile(t, effects);
    return { endMs: t, effects };
  }

  private ingestFile(at: number, effects: Effect[]): number {
    const s3 = this.s.aws.s3.requestMs;
    const leadMs = this.s.stack.leadS * 1000;
    this.counters.s3Get++;
    let t = at + (this.workload.fileBytes / (this.s.handler.ingestParseMBps * 1e6)) * 1000;
    this.counters.s3Put++; // the ingest report
    t += s3;
    const startMs = this.startMs ?? t + leadMs;
    const deadlineMs = startMs + this.workload.durationMs + (this.s.stack.requestTimeoutS + this.s.stack.graceS) * 1000;
    if (this.startMs === null) {
      this.startMs = startMs;
      effects.push({ at: t, run: () => this.ports.onStart(startMs, deadlineMs) });
    }
    this.counters.s3Get++; // the run record, not there yet
    this.counters.s3Put += 1 + this.s.workload.targets; // the start, each target's ingest drops
    t += 3 * s3;
    const shards = this.workload.shards;
    for (let i = 0; i < shards.length; i += WINDOW_SHARDS) {
      const window = shards.slice(i, i + WINDOW_SHARDS);
      this.counters.s3Get += window.length;
      t += s3;
      const now = t;
      const entries = window.flatMap((shard) => {
        const firstDue = startMs + (shard.offsets[0] as number);
        const lateMs = now - (firstDue - leadMs);
        if (lateMs > 0) {
          this.counters.lateShards++;
          this.counters.maxLateMs = Math.max(this.counters.maxLateMs, lateMs);
        }
        const { delaySeconds } = deliveryDelay(ns(firstDue), ns(now), leadMs);
        const bytes = this.workload.messageBytes(shard.offsets.length);
        return Array.from({ length: this.s.workload.targets }, (_, target) => ({ bytes, payload: { kind: 'shard', target, shard: shard.index, hops: 0 } as ShardPayload, delaySeconds }));
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
    t += s3;
    const collect = Array.from({ length: this.s.workload.targets }, (_, target) => ({ bytes: COLLECT_MESSAGE_BYTES, payload: { kind: 'collect', target, notBeforeMs: deadlineMs } as CollectPayload, delaySeconds: 0 }));
    const sent = t + this.s.aws.sqs.sendBatchMs;
    effects.push({ at: sent, run: () => this.ports.sendCollect(sent, collect) });
    return sent;
  }

  /** The batch sizes the real packBatches makes of messages of these sizes (memoized by sizes). */
  private pack(sizes: number[]): number[] {
    const key = sizes.join(',');
    let batches = this.packed.get(key);
    if (!batches) {
      const bodies = sizes.map((n, id) => ({ id: String(id), body: 'x'.repeat(n), delaySeconds: 0 }));
      batches = packBatches(bodies).map((b) => b.map((m) => Number(m.id)));
      this.packed.set(key, batches);
    }
    return batches.map((b) => b.length);
  }
}
