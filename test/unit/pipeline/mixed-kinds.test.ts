/**
 * Targets of different kinds in one pipeline run: an HTTP chat target and a SageMaker
 * endpoint each get their own plan of the same records (plan.ts rule 6), as the local CLI
 * does (core/run/replay.ts). One set of shards is cut and read once; each target's message
 * carries the records it takes; the run record lists each target's shards; each target's
 * manifest accounts for every record, what it could not take counted as dropped.
 */
import { describe, expect, it } from 'vitest';
import { MemoryObjectStore } from '../../../lambdas/adapters/local/memory-store';
import { MemoryQueue } from '../../../lambdas/adapters/local/memory-queue';
import { DuplicateFilter } from '../../../lambdas/core/capture/duplicates';
import { IngestReportBuilder } from '../../../lambdas/core/capture/ingest-report';
import { parseCaptureStream } from '../../../lambdas/core/capture/stream';
import { runFireLoop } from '../../../lambdas/core/fire/fire-loop';
import { runRecordSchema } from '../../../lambdas/core/pipeline/common';
import { runRecordKey } from '../../../lambdas/core/pipeline/keys';
import { fromReplayPlan, type DispatchablePlan } from '../../../lambdas/core/pipeline/dispatch';
import type { ShardMessage } from '../../../lambdas/core/pipeline/shards';
import { collectRun, handleShard, dispatchRun, type HandleShardDeps } from '../../../lambdas/core/pipeline/stages';
import { buildPlan, incompatibleAs, indexRecord, planIndexed, type PlanOptions } from '../../../lambdas/core/plan/plan';
import type { CaptureRecord, ReplayPlan, TargetKind } from '../../../lambdas/core/types';
import { FakeTarget, VirtualClock } from '../../support/virtual-clock';

const S = 1_800_000_000_000_000_000n;
const SEC = 1_000_000_000n;

const chat = (n: number) => `{"messages":[{"role":"user","content":"hi ${n}"}]}`;
/** [eventId, inferenceTime, content type, data]: chat and CSV records, one CSV alone in its second. */
const LINES: [string, string, string, string][] = [
  ['c0', '2026-04-29T00:00:00.000Z', 'application/json', chat(0)],
  ['v1', '2026-04-29T00:00:00.100Z', 'text/csv', '1,2,3'],
  ['c2', '2026-04-29T00:00:00.200Z', 'application/json', chat(2)],
  ['j3', '2026-04-29T00:00:00.300Z', 'application/json', '{"instances":[[1,2]]}'],
  ['v4', '2026-04-29T00:00:02.500Z', 'text/csv', '4,5,6'],
  ['c5', '2026-04-29T00:00:04.000Z', 'application/json', chat(5)],
];
const FILE = Buffer.from(
  LINES.map(([id, t, type, data]) =>
    JSON.stringify({
      captureData: {
        endpointInput: {
          observedContentType: type,
          mode: 'INPUT',
          data,
          encoding: type === 'text/csv' ? 'CSV' : 'JSON',
        },
      },
      eventMetadata: { eventId: id, inferenceTime: t },
      eventVersion: '0',
    }),
  ).join('\n') + '\n',
);
const OPTIONS = {
  runId: 'run-m',
  timeScale: 1,
  intraSecond: 'spread',
  forceStreaming: true,
  modelOverride: 'm2',
} as const satisfies Omit<PlanOptions, 'targetKind'>;

async function records(): Promise<CaptureRecord[]> {
  const out: CaptureRecord[] = [];
  const chunks = (async function* () {
    yield FILE;
  })();
  for await (const r of parseCaptureStream(chunks, 'f.jsonl', new IngestReportBuilder(), new DuplicateFilter()))
    out.push(r);
  return out;
}

const planOf = async (kind: TargetKind): Promise<ReplayPlan> =>
  buildPlan(await records(), { ...OPTIONS, targetKind: kind });

/** A plan whose loads are counted: which indices each load call asked for. */
function counted(plan: ReplayPlan): { plan: DispatchablePlan; loads: number[][] } {
  const inner = fromReplayPlan(plan);
  const loads: number[][] = [];
  return {
    loads,
    plan: {
      ...inner,
      load: async (items) => {
        loads.push(items.map((i) => i.index));
        return inner.load(items);
      },
    },
  };
}

function pipeline() {
  const clock = new VirtualClock(S);
  const store = new MemoryObjectStore();
  const queue = new MemoryQueue(() => clock.nowNs());
  const targets = {
    A: new FakeTarget('A', clock, () => ({ latencyMs: 5 })),
    B: new FakeTarget('B', clock, () => ({ latencyMs: 5 })),
  };
  const deps: HandleShardDeps = {
    store,
    queue,
    clock,
    leadMs: 20_000,
    claimLeaseMs: 900_000,
    workerId: 'fire-1',
    fire: (requests, message, onOutcome) =>
      runFireLoop(requests, {
        runId: message.runId,
        target: targets[message.target as 'A' | 'B'],
        clock,
        startNs: BigInt(message.startNs),
        workerId: 'fire-1',
        onOutcome,
      }),
  };
  const drain = async () => {
    for (let next = queue.nextDueNs(); next !== null; next = queue.nextDueNs()) {
      clock.advanceTo(next);
      for (const m of queue.takeDue(clock.nowNs())) await handleShard(m.body, deps);
    }
  };
  return { clock, store, queue, targets, deps, drain };
}

const args = (
  p: ReturnType<typeof pipeline>,
  plan: ReplayPlan | DispatchablePlan,
  targetPlans: Record<string, ReplayPlan | DispatchablePlan>,
) => ({
  runId: 'run-m',
  plan,
  targets: ['A', 'B'],
  targetPlans,
  startNs: S + 30n * SEC,
  leadMs: 20_000,
  graceMs: 60_000,
  inputConfig: null,
  notScheduledByReason: {},
  store: p.store,
  queue: p.queue,
  clock: p.clock,
});

describe('one plan per target kind', () => {
  it('the kinds agree on indices, due times and bodies; they differ only in what they take', async () => {
    const [forChat, forSageMaker] = [await planOf('openai-chat'), await planOf('sagemaker')];
    expect(forSageMaker.incompatible).toEqual([]);
    expect(forSageMaker.requests.map((r) => r.index)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(forChat.incompatible.map((i) => [i.request.index, i.reason])).toEqual([
      [1, 'unsupported_content_type'],
      [3, 'not_chat_request'],
      [4, 'unsupported_content_type'],
    ]);
    // The scheduler shares one body per index between kinds: it must be the same request.
    for (const r of forChat.requests) expect(forSageMaker.requests[r.index]).toEqual(r);
    // The CSV body goes to SageMaker as captured, byte for byte.
    expect(Buffer.from(forSageMaker.requests[1]!.body).toString()).toBe('1,2,3');
    expect(forSageMaker.requests[1]!.contentType).toBe('text/csv');
  });

  it("two-pass indexing keeps every kind's verdict from one parse", async () => {
    const recs = await records();
    const kinds: TargetKind[] = ['openai-chat', 'sagemaker'];
    const indexed = planIndexed(
      recs.map((r) => indexRecord(r, { ...OPTIONS, targetKind: 'openai-chat' }, kinds)),
      { ...OPTIONS, targetKind: 'openai-chat' },
    );
    for (const kind of kinds) {
      const onePass = buildPlan(recs, { ...OPTIONS, targetKind: kind });
      expect(
        indexed.entries.flatMap((e) =>
          incompatibleAs(e.record, kind) ? [[e.index, incompatibleAs(e.record, kind)!.reason]] : [],
        ),
      ).toEqual(onePass.incompatible.map((i) => [i.request.index, i.reason]));
    }
    // Indexed for one kind only: asking for another is an error, not a guess.
    const single = indexRecord(recs[1]!, { ...OPTIONS, targetKind: 'sagemaker' }, ['sagemaker']);
    expect(() => incompatibleAs(single, 'openai-chat')).toThrow(/not indexed for target kind openai-chat/);
  });
});

describe('scheduling targets of different kinds', () => {
  it('cuts one set of shards, reads each record once, and sends each target what it takes', async () => {
    const p = pipeline();
    const chatPlan = counted(await planOf('openai-chat'));
    const smPlan = counted(await planOf('sagemaker'));
    const result = await dispatchRun(args(p, chatPlan.plan, { B: smPlan.plan }));
    if (result.status !== 'scheduled') throw new Error('not scheduled');
    // Every record is loaded once, by the plan that has them all.
    expect(chatPlan.loads).toEqual([]);
    expect(smPlan.loads.flat().sort()).toEqual([0, 1, 2, 3, 4, 5]);

    const messages = p.queue.messages.map((m) => ({
      delay: m.delaySeconds,
      message: JSON.parse(m.body) as ShardMessage,
    }));
    const view = messages.map(
      ({ message: m }) =>
        `${m.target}:${m.shardId}:${m.requests.map((r) => r.index).join(',')}${m.last ? ':last' : ''}`,
    );
    // Slot 2 holds only a CSV record: A (chat) gets no message for it; A's last shard is 4-0.
    expect(view).toEqual(['A:0-0:0,2', 'B:0-0:0,1,2,3', 'B:2-0:4', 'A:4-0:5:last', 'B:4-0:5:last']);
    expect(result.shardsByTarget).toEqual({ A: 2, B: 3 });
    expect(result.shards).toBe(3);
    // Each message is due at its own first request.
    const firstDue = (t: string, shard: string) =>
      messages.find((m) => m.message.target === t && m.message.shardId === shard)!.message.firstDueNs;
    expect(BigInt(firstDue('A', '0-0'))).toBe(S + 30n * SEC);
    expect(BigInt(firstDue('B', '2-0'))).toBe(S + 30n * SEC + 2500n * 1_000_000n);

    const run = runRecordSchema.parse(JSON.parse(p.store.text(runRecordKey('run-m'))!));
    expect(run.targetShards).toEqual({
      A: [
        { shardId: '0-0', requests: 2 },
        { shardId: '4-0', requests: 1 },
      ],
      B: [
        { shardId: '0-0', requests: 4 },
        { shardId: '2-0', requests: 1 },
        { shardId: '4-0', requests: 1 },
      ],
    });

    await p.drain();
    expect(p.targets.A.sent.map((s) => s.request.contentType)).toEqual([
      'application/json',
      'application/json',
      'application/json',
    ]);
    expect(p.targets.B.sent.map((s) => Buffer.from(s.request.body).toString())).toContain('1,2,3');
    expect(p.targets.B.sent).toHaveLength(6);
    const a = await collectRun('run-m', 'A', p);
    const b = await collectRun('run-m', 'B', p);
    expect(a).toMatchObject({ status: 'complete', missing: [] });
    expect(a.manifest).toMatchObject({
      scheduled: 6,
      succeeded: 3,
      dropped: 3,
      droppedByReason: { unsupported_content_type: 2, not_chat_request: 1 },
      balanced: true,
    });
    expect(b).toMatchObject({ status: 'complete', missing: [] });
    expect(b.manifest).toMatchObject({ scheduled: 6, succeeded: 6, dropped: 0, balanced: true });
    // The same run again schedules nothing.
    expect((await dispatchRun(args(p, chatPlan.plan, { B: smPlan.plan }))).status).toBe('duplicate');
  });

  it('a target that takes none of the records gets no message and is complete at once', async () => {
    const p = pipeline();
    const csvOnly = (await records()).filter((r) => r.input.contentType === 'text/csv');
    const chatPlan = buildPlan(csvOnly, { ...OPTIONS, targetKind: 'openai-chat' });
    const smPlan = buildPlan(csvOnly, { ...OPTIONS, targetKind: 'sagemaker' });
    const result = await dispatchRun(args(p, chatPlan, { B: smPlan }));
    if (result.status !== 'scheduled') throw new Error('not scheduled');
    expect(result.shardsByTarget).toEqual({ A: 0, B: 2 });
    expect(p.queue.messages.map((m) => (JSON.parse(m.body) as ShardMessage).target)).toEqual(['B', 'B']);
    const a = await collectRun('run-m', 'A', p);
    expect(a).toMatchObject({ status: 'complete' });
    expect(a.manifest).toMatchObject({
      scheduled: 2,
      succeeded: 0,
      dropped: 2,
      droppedByReason: { unsupported_content_type: 2 },
      balanced: true,
    });
    // B is still waiting for its shards, then complete.
    expect((await collectRun('run-m', 'B', p)).status).toBe('pending');
    await p.drain();
    expect((await collectRun('run-m', 'B', p)).manifest).toMatchObject({ scheduled: 2, succeeded: 2, balanced: true });
  });

  it('counts a missing shard as lost for the target it belongs to only', async () => {
    const p = pipeline();
    await dispatchRun(args(p, await planOf('openai-chat'), { B: await planOf('sagemaker') }));
    // B's only-CSV shard 2-0 never reports; past the deadline it is lost for B, not for A.
    const lostShard = p.queue.messages.findIndex((m) => (JSON.parse(m.body) as ShardMessage).shardId === '2-0');
    p.queue.messages.splice(lostShard, 1);
    await p.drain();
    p.clock.advanceTo(S + 3600n * SEC);
    const a = await collectRun('run-m', 'A', p);
    const b = await collectRun('run-m', 'B', p);
    expect(a).toMatchObject({ status: 'complete', missing: [] });
    expect(b).toMatchObject({ status: 'deadline', missing: ['2-0'] });
    expect(b.manifest).toMatchObject({
      scheduled: 6,
      succeeded: 5,
      dropped: 1,
      droppedByReason: { lost: 1 },
      balanced: true,
    });
  });

  it('refuses plans that do not come from the same records, and a plan for a target not in the run', async () => {
    const p = pipeline();
    const chatPlan = await planOf('openai-chat');
    const fewer = buildPlan((await records()).slice(0, 3), { ...OPTIONS, targetKind: 'sagemaker' });
    await expect(dispatchRun(args(p, chatPlan, { B: fewer }))).rejects.toThrow(/same records/);
    await expect(dispatchRun({ ...args(p, chatPlan, { C: fewer }) })).rejects.toThrow(
      /C, which is not one of the run's targets/,
    );
  });

  it('one kind for every target: messages and run record exactly as before (no targetShards)', async () => {
    const p = pipeline();
    const smPlan = await planOf('sagemaker');
    const result = await dispatchRun({ ...args(p, smPlan, {}), targetPlans: { B: smPlan } });
    if (result.status !== 'scheduled') throw new Error('not scheduled');
    const run = runRecordSchema.parse(JSON.parse(p.store.text(runRecordKey('run-m'))!));
    expect(run.targetShards).toBeUndefined();
    expect(
      p.queue.messages.map(
        (m) => `${(JSON.parse(m.body) as ShardMessage).target}:${(JSON.parse(m.body) as ShardMessage).shardId}`,
      ),
    ).toEqual(['A:0-0', 'B:0-0', 'A:2-0', 'B:2-0', 'A:4-0', 'B:4-0']);
  });
});
