/**
 * The collector (lambdas/handlers/collect.ts over lambdas/core/pipeline/collect.ts and
 * run-analysis.ts), counted call by call, on one batch of collect messages:
 * - a message not yet due (the real `deliveryDelay` with no lead) is sent on, and the target's
 *   interim results are written (collectRun with `interim`);
 * - else collectRun: the run record, the results listing; with shards missing before the
 *   deadline, pending; else final: every present results object read, the four artifacts
 *   written (records, AIPerf JSON and CSV, manifest), and the run's analysis once every target
 *   is final (its manifests read, then each target's results read again, the comparison and
 *   the report written, and the marker), or nothing new when the accounting is unchanged.
 * A target's `lost` requests are those of shards with no results when its manifest was last
 * written. Durations: S3 round trips only (reads 16 at a time); the collector's CPU is not
 * modelled.
 */
import { RESULT_READ_CONCURRENCY } from '../lambdas/core/pipeline/collect';
import { deliveryDelay } from '../lambdas/core/pipeline/sqs-delay';
import type { Effect, HandlerRun, ShardState } from './fire';
import type { SimSettings } from './settings';
import type { Workload } from './workload';

export interface CollectPayload {
  kind: 'collect';
  target: number;
  notBeforeMs: number;
}

export interface CollectCounters {
  s3Get: number;
  s3Put: number;
  s3List: number;
  finals: number;
  pendings: number;
  interims: number;
  analyses: number;
}

/** ListObjectsV2 returns at most 1,000 keys a page. https://docs.aws.amazon.com/AmazonS3/latest/API/API_ListObjectsV2.html */
const LIST_PAGE = 1000;
const ARTIFACT_PUTS = 4;
const ns = (ms: number) => BigInt(Math.round(ms * 1e6));

export class CollectHandler {
  readonly counters: CollectCounters = { s3Get: 0, s3Put: 0, s3List: 0, finals: 0, pendings: 0, interims: 0, analyses: 0 };
  /** Per target: requests counted lost by its latest manifest (null: no manifest yet). */
  readonly lost: (number | null)[];
  private analysedFingerprint: string | null = null;
  deadlineMs = Infinity;

  constructor(
    private readonly s: SimSettings,
    private readonly workload: Workload,
    private readonly shardStates: readonly Map<number, ShardState>[],
    private readonly resend: (at: number, payload: CollectPayload, delaySeconds: number) => void,
  ) {
    this.lost = Array.from({ length: s.workload.targets }, () => null);
  }

  /**
   * The batch's records run in parallel (Powertools' BatchProcessor): each finaliser's analysis
   * sees the manifests its peers in the batch wrote, but not their analysis marker, so every
   * finaliser of the batch analyses the run, as records that run in lockstep do; on a loaded
   * machine moto's records drift apart and some see a peer's marker and skip (bench/RESULTS.md,
   * the simulator against moto).
   */
  handle(records: readonly CollectPayload[], startMs: number): HandlerRun {
    const effects: Effect[] = [];
    let endMs = startMs;
    const finals: { target: number; at: number; lost: number }[] = [];
    for (const p of records) {
      const { delaySeconds } = deliveryDelay(ns(p.notBeforeMs), ns(startMs), 0);
      let t = startMs;
      if (delaySeconds >= 1) {
        t += this.s.aws.sqs.sendBatchMs;
        effects.push({ at: t, run: () => this.resend(t, p, delaySeconds) });
      }
      const run = this.collectRun(p.target, t, delaySeconds >= 1, effects);
      // handleCollect runs the analysis only for a due message, after collectRun.
      if (run.final && delaySeconds < 1) finals.push({ target: p.target, at: run.at, lost: run.final.lost });
      endMs = Math.max(endMs, run.at);
    }
    const manifests = [...this.lost];
    for (const f of finals) manifests[f.target] = f.lost;
    const markedBefore = this.analysedFingerprint;
    for (const f of finals) endMs = Math.max(endMs, this.analyse(f.at, manifests, markedBefore));
    return { endMs, effects };
  }

  private present(target: number, at: number): { present: number; missingRequests: number } {
    const states = this.shardStates[target] as Map<number, ShardState>;
    let present = 0;
    let missingRequests = 0;
    for (const shard of this.workload.shards) {
      const st = states.get(shard.index);
      if (st && st.resultsAt <= at) present++;
      else missingRequests += shard.offsets.length;
    }
    return { present, missingRequests };
  }

  /** Reads of `n` objects, RESULT_READ_CONCURRENCY at a time: their duration. */
  private reads(n: number): number {
    this.counters.s3Get += n;
    return Math.ceil(n / RESULT_READ_CONCURRENCY) * this.s.aws.s3.requestMs;
  }

  private list(objects: number): number {
    const pages = Math.max(1, Math.ceil(objects / LIST_PAGE));
    this.counters.s3List += pages;
    return pages * this.s.aws.s3.requestMs;
  }

  private collectRun(target: number, at: number, interimAsked: boolean, effects: Effect[]): { at: number; final?: { lost: number } } {
    const s3 = this.s.aws.s3.requestMs;
    let t = at + this.reads(1);
    const { present, missingRequests } = this.present(target, t);
    t += this.list(present + 1);
    const pastDeadline = t > this.deadlineMs;
    const interim = interimAsked && missingRequests > 0 && !pastDeadline;
    if (missingRequests > 0 && !pastDeadline && !interim) {
      this.counters.pendings++;
      return { at: t };
    }
    t += this.reads(present + 1);
    this.counters.s3Put += ARTIFACT_PUTS;
    t += 2 * s3; // the data files together, then the manifest
    if (interim) {
      this.counters.interims++;
      return { at: t };
    }
    this.counters.finals++;
    effects.push({ at: t, run: () => (this.lost[target] = missingRequests) });
    return { at: t, final: { lost: missingRequests } };
  }

  /** analyseRunIfFinal: the manifests as they stand (`lost` per target, null: none yet), the marker as last written. */
  private analyse(at: number, lost: readonly (number | null)[], marked: string | null): number {
    let t = at + this.reads(1);
    const firstMissing = lost.findIndex((l) => l === null);
    t += this.reads(firstMissing === -1 ? lost.length : firstMissing + 1);
    if (firstMissing !== -1) return t;
    t += this.reads(1);
    const fingerprint = JSON.stringify(lost);
    if (fingerprint === marked) return t;
    this.analysedFingerprint = fingerprint;
    this.counters.analyses++;
    for (let i = 0; i < lost.length; i++) {
      const { present } = this.present(i, t);
      t += this.list(present + 1) + this.reads(present + 1);
    }
    this.counters.s3Put += (lost.length > 1 ? 2 : 1) + 1;
    return t + 2 * this.s.aws.s3.requestMs;
  }
}
