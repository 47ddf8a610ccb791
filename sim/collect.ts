/**
 * The collector (lambdas/handlers/collect.ts over lambdas/core/pipeline/collect-batch.ts,
 * collect.ts and run-analysis.ts), counted call by call, on one batch of collect messages.
 *
 * The rules, each with its source (DOCUMENTED, ASSUMED or MEASURED):
 * docs/simulator-model.md#the-collector.
 */
import { lookPlan, RESULT_READ_CONCURRENCY } from '../lambdas/core/pipeline/collect';
import type { S3Timing } from './aws/s3';
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
  readonly counters: CollectCounters = {
    s3Get: 0,
    s3Put: 0,
    s3List: 0,
    finals: 0,
    pendings: 0,
    interims: 0,
    analyses: 0,
  };
  /** Per target: requests counted lost by its latest manifest (null: no manifest yet). */
  readonly lost: (number | null)[];
  private analysedFingerprint: string | null = null;
  deadlineMs = Infinity;

  constructor(
    private readonly s: SimSettings,
    private readonly workload: Workload,
    private readonly shardStates: readonly Map<number, ShardState>[],
    private readonly s3: S3Timing,
    private readonly resend: (
      at: number,
      entries: readonly { payload: CollectPayload; delaySeconds: number }[],
    ) => void,
  ) {
    this.lost = Array.from({ length: s.workload.targets }, () => null);
  }

  handle(records: readonly CollectPayload[], startMs: number): HandlerRun {
    const effects: Effect[] = [];
    const groups = new Map<number, CollectPayload[]>();
    for (const p of records) groups.set(p.target, [...(groups.get(p.target) ?? []), p]);
    const manifests = [...this.lost];
    let t = startMs;
    let analyse = false;
    for (const [target, group] of groups) {
      const look = this.look(target, group, t, effects);
      t = look.at;
      if (look.final) manifests[target] = look.final.lost;
      analyse ||= look.analyse;
    }
    if (analyse) t = this.analyse(t, manifests);
    return { endMs: t, effects };
  }

  /** lookAtTarget on one target's messages of the batch. */
  private look(
    target: number,
    group: readonly CollectPayload[],
    at: number,
    effects: Effect[],
  ): { at: number; final?: { lost: number }; analyse: boolean } {
    const { hops, dueAtNs } = lookPlan(group, (p) => ns(p.notBeforeMs), ns(at));
    const dueAt = dueAtNs === null ? null : Number(dueAtNs) / 1e6;
    let t = at;
    if (hops.length > 0) {
      t += this.s.aws.sqs.sendBatchMs;
      const sentAt = t;
      const entries = hops.map((h) => ({
        payload: { kind: 'collect' as const, target, notBeforeMs: h.message.notBeforeMs },
        delaySeconds: h.delaySeconds,
      }));
      effects.push({ at: sentAt, run: () => this.resend(sentAt, entries) });
    }
    if (dueAt !== null && dueAt >= t) t = dueAt + 1e-6;
    const run = this.collectRun(target, t, hops.length > 0, effects);
    return { ...run, analyse: dueAt !== null && run.final !== undefined };
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
    return this.s3.pool(n, RESULT_READ_CONCURRENCY);
  }

  private list(objects: number): number {
    const pages = Math.max(1, Math.ceil(objects / LIST_PAGE));
    this.counters.s3List += pages;
    return this.s3.sequence(pages);
  }

  private collectRun(
    target: number,
    at: number,
    interimAsked: boolean,
    effects: Effect[],
  ): { at: number; final?: { lost: number } } {
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
    t += this.s3.pool(ARTIFACT_PUTS - 1, ARTIFACT_PUTS - 1) + this.s3.one(); // the data files together, then the manifest
    if (interim) {
      this.counters.interims++;
      return { at: t };
    }
    this.counters.finals++;
    effects.push({ at: t, run: () => (this.lost[target] = missingRequests) });
    return { at: t, final: { lost: missingRequests } };
  }

  /** analyseRunIfFinal: the manifests as they stand (`lost` per target, null: none yet), the marker as last written. */
  private analyse(at: number, lost: readonly (number | null)[]): number {
    let t = at + this.reads(1);
    const firstMissing = lost.findIndex((l) => l === null);
    t += this.reads(firstMissing === -1 ? lost.length : firstMissing + 1);
    if (firstMissing !== -1) return t;
    t += this.reads(1);
    const fingerprint = JSON.stringify(lost);
    if (fingerprint === this.analysedFingerprint) return t;
    this.analysedFingerprint = fingerprint;
    this.counters.analyses++;
    for (let i = 0; i < lost.length; i++) {
      const { present } = this.present(i, t);
      t += this.list(present + 1) + this.reads(present + 1);
    }
    this.counters.s3Put += (lost.length > 1 ? 2 : 1) + 1;
    return t + this.s3.sequence(2);
  }
}
