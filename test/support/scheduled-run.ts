/**
 * A two-target pipeline run (A, B) as the ingest and fire stages leave it in the results
 * store, for the run-analysis tests and bench: B's first token ~20 % later, one drop, a
 * failure every 50 requests, and a secret-looking string in every body and error text.
 */
import { computeProfileRecord } from '../../lambdas/core/metrics/record-metrics';
import { INGEST_SHARD, type RunRecord } from '../../lambdas/core/pipeline/common';
import { resultsKey, runRecordKey } from '../../lambdas/core/pipeline/keys';
import { encodeResultLines, type ResultLine } from '../../lambdas/core/pipeline/results';
import type { ScheduledRunInfo } from '../../lambdas/core/scheduled-runs/contract';
import type { Notifier, ObjectStore } from '../../lambdas/ports';
import { scheduledRequest } from './fixtures';

export const S = 1_800_000_000_000_000_000n;
export const MS = 1_000_000n;
export const START = S + 30_000n * MS;
export const SECRET = 'sk-live-SECRET-body-7f3a9c';

export const INFO: ScheduledRunInfo = {
  name: 'nightly',
  scheduledTime: '2026-11-23T02:00:00.000Z',
  timezone: 'UTC',
  window: { start: '2026-11-22T14:00:00.000Z', end: '2026-11-22T15:00:00.000Z' },
  targets: ['A', 'B'],
  dispatch: 'parallel',
};

export class RecordingNotifier implements Notifier {
  readonly published: { subject: string; message: string }[] = [];
  async publish(subject: string, message: string): Promise<void> {
    this.published.push({ subject, message });
  }
}

/** A small deterministic spread (no Math.random: the same run every time). */
const jitter = (i: number) => ((i * 7919) % 97) / 97;

/**
 * One target's results for request `index`: B's first token ~20 % later than A's; B drops
 * index 3 (expired) and fails every 50th; every request's body and B's error text carry a
 * secret-looking string, which must never reach a summary.
 */
export function resultLine(runId: string, target: string, index: number): ResultLine {
  const offsetMs = index * 10;
  const scheduledNs = START + BigInt(offsetMs) * MS;
  const requestId = `${runId}-${target}-${index}`;
  if (target === 'B' && index === 3) return { kind: 'drop', requestId, index, scheduledNs, dropReason: 'expired' };
  const ttftMs = (target === 'B' ? 120 : 100) + 20 * jitter(index);
  const start = scheduledNs + MS;
  const failed = target === 'B' && index % 50 === 49;
  const record = computeProfileRecord(
    {
      request: scheduledRequest(index, offsetMs, {
        body: Buffer.from(`{"messages":[{"role":"user","content":"${SECRET}"}]}`),
        streaming: true,
      }),
      target,
      requestId,
      scheduledNs,
      workerId: 'w',
      result: {
        requestStartNs: start,
        requestAckNs: start + 2n * MS,
        requestEndNs: start + BigInt(Math.round((ttftMs + 200) * 1e6)),
        contentChunkNs: failed
          ? []
          : [
              start + BigInt(Math.round(ttftMs * 1e6)),
              start + BigInt(Math.round((ttftMs + 100) * 1e6)),
              start + BigInt(Math.round((ttftMs + 200) * 1e6)),
            ],
        httpStatus: failed ? 500 : 200,
        usage: failed ? null : { promptTokens: 10, completionTokens: 3 },
        error: failed ? { code: 500, type: 'HTTPError', message: `upstream said: ${SECRET}` } : null,
      },
      dropReason: null,
    },
    'w',
  );
  return { kind: 'record', record };
}

/** Writes a run as the ingest and fire stages leave it: run record, ingest results, every shard's results (except `unreported`). */
export async function writeRun(
  store: ObjectStore,
  runId: string,
  opts: {
    requests: number;
    shardSize?: number;
    scheduled?: boolean;
    unreported?: { target: string; shardId: string }[];
  },
): Promise<RunRecord> {
  const shardSize = opts.shardSize ?? 50;
  const shards: { shardId: string; requests: number; first: number }[] = [];
  for (let first = 0, k = 0; first < opts.requests; first += shardSize, k++)
    shards.push({ shardId: `${k}-0`, requests: Math.min(shardSize, opts.requests - first), first });
  const record: RunRecord = {
    v: 1,
    runId,
    targets: ['A', 'B'],
    startNs: START.toString(),
    deadlineNs: (START + 3_600_000n * MS).toString(),
    createdAt: '2026-11-23T02:00:05.000Z',
    shards: shards.map(({ shardId, requests }) => ({ shardId, requests })),
    notScheduledByReason: {},
    inputConfig: { mode: 'window', ...(opts.scheduled ? { schedule: INFO } : {}) },
  };
  for (const target of record.targets) {
    await store.put(resultsKey(runId, target, INGEST_SHARD), encodeResultLines([]));
    for (const s of shards) {
      if (opts.unreported?.some((u) => u.target === target && u.shardId === s.shardId)) continue;
      const lines = Array.from({ length: s.requests }, (_, j) => resultLine(runId, target, s.first + j));
      await store.put(resultsKey(runId, target, s.shardId), encodeResultLines(lines));
    }
  }
  await store.put(runRecordKey(runId), JSON.stringify(record));
  return record;
}
