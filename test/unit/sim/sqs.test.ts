/**
 * SQS in the simulator (sim/aws/sqs.ts, sim/consumer.ts): billing by 64 KB chunk, delayed
 * delivery, redelivery after the visibility timeout, the redrive to the dead-letter queue, the
 * batching window, and a throttled batch coming back only after its visibility timeout.
 */
import { describe, expect, it } from 'vitest';
import { EventSourceScaler } from '../../../sim/aws/event-source';
import { Account, FunctionModel } from '../../../sim/aws/lambda';
import { SqsQueue, type SimMessage } from '../../../sim/aws/sqs';
import { Consumer } from '../../../sim/consumer';
import { Agenda } from '../../../sim/events';
import { Rng } from '../../../sim/random';
import { settingsFor } from '../../../sim/settings';

const KB = 1024;
const queue = (
  agenda: Agenda,
  o: Partial<{ visibilityTimeoutS: number; maxReceiveCount: number; delayJitterMaxMs: number }> = {},
) =>
  new SqsQueue<string>(
    { name: 'q', visibilityTimeoutS: 30, maxReceiveCount: 3, delayJitterMaxMs: 0, ...o },
    agenda,
    new Rng(1),
  );

const { settings } = settingsFor({ ratePerTarget: 200, targets: 1, seconds: 60, latencyP50S: 0.01, latencyP99S: 0.01 });
const pickup = settings.aws.esm.pickupMs;

/** A queue's event source (standard mode, at most 10 batches) and a function with no cold-start time. */
function consumer(
  agenda: Agenda,
  q: SqsQueue<string>,
  o: { batchSize: number; batchingWindowMs?: number; reserved?: number; receiveRoundTripMs?: number },
  handle: (records: string[], at: number) => number,
) {
  const scaler = new EventSourceScaler(
    {
      mode: 'standard',
      maxConcurrency: 10,
      minPollers: 2,
      maxPollers: 200,
      esm: settings.aws.esm,
      provisioned: settings.aws.provisioned,
    },
    false,
  );
  const fn = new FunctionModel(
    {
      name: 'f',
      memoryMb: 1024,
      reservedConcurrency: o.reserved ?? null,
      init: { mu: 0, sigma: 0 },
      scalePer10s: 1000,
      invokeOverheadMs: 0,
      coldPlatformMs: 0,
      envReclaimMinutes: 10,
    },
    new Account(1000),
    new Rng(1),
  );
  return new Consumer(
    agenda,
    q,
    scaler,
    fn,
    {
      batchSize: o.batchSize,
      batchingWindowMs: o.batchingWindowMs ?? 0,
      timeoutS: 900,
      tickMs: 200,
      receiveRoundTripMs: o.receiveRoundTripMs ?? 0,
    },
    (records, at) => ({ endMs: handle(records, at), effects: [] }),
  );
}

describe('billing by 64 KB chunk', () => {
  it('a send is billed per 64 KB of the whole batch, a receive per 64 KB of what it returned, a delete once', () => {
    const agenda = new Agenda();
    const q = queue(agenda);
    q.sendBatch(0, [{ bytes: 440 * KB, payload: 'a', delaySeconds: 0 }]);
    expect(q.bill.requests).toBe(7);
    q.sendBatch(0, [
      { bytes: 300 * KB, payload: 'b', delaySeconds: 0 },
      { bytes: 300 * KB, payload: 'c', delaySeconds: 0 },
    ]);
    expect(q.bill.requests).toBe(7 + 10);
    q.sendBatch(0, [{ bytes: 100, payload: 'd', delaySeconds: 0 }]);
    expect(q.bill.requests).toBe(18);
    agenda.runUntil();
    const got = q.receive(0, 2);
    expect(got.map((m) => m.payload)).toEqual(['a', 'b']);
    expect(q.bill.requests).toBe(18 + Math.ceil((740 * KB) / (64 * KB)));
    q.deleteBatch(got);
    expect(q.bill.requests).toBe(18 + 12 + 1);
    expect(q.receive(0, 10).length).toBe(2);
    expect(q.receive(0, 10)).toEqual([]);
    expect(q.bill.receiveCalls).toBe(2);
  });
});

describe('delivery', () => {
  it('a delayed message becomes visible after its delay, plus the assumed jitter', () => {
    const agenda = new Agenda();
    const seen: number[] = [];
    const plain = queue(agenda);
    plain.onVisible = () => seen.push(agenda.now);
    plain.sendBatch(1000, [{ bytes: 10, payload: 'x', delaySeconds: 19 }]);
    const jittered = queue(agenda, { delayJitterMaxMs: 500 });
    jittered.onVisible = () => seen.push(agenda.now);
    jittered.sendBatch(1000, [{ bytes: 10, payload: 'y', delaySeconds: 19 }]);
    agenda.runUntil();
    expect(seen[0]).toBe(20_000);
    expect(seen[1]).toBeGreaterThan(20_000);
    expect(seen[1]).toBeLessThan(20_500);
  });

  it('a message not deleted comes back a visibility timeout after its receive, and goes to the DLQ after maxReceiveCount receives', () => {
    const agenda = new Agenda();
    const q = queue(agenda, { visibilityTimeoutS: 30, maxReceiveCount: 2 });
    const dead: SimMessage<string>[] = [];
    q.onDeadLetter = (m) => dead.push(m);
    q.sendBatch(0, [{ bytes: 10, payload: 'x', delaySeconds: 0 }]);
    agenda.runUntil();
    const first = q.receive(5_000, 1);
    q.releaseAfterVisibilityTimeout(first);
    agenda.runUntil(34_999);
    expect(q.visibleCount).toBe(0);
    agenda.runUntil(35_000);
    expect(q.visibleCount).toBe(1);
    q.releaseAfterVisibilityTimeout(q.receive(40_000, 1));
    agenda.runUntil();
    expect(q.receive(70_000, 1)).toEqual([]);
    expect(dead.map((m) => m.receiveCount)).toEqual([2]);
    expect(q.bill.deadLettered).toBe(1);
    expect(q.outstanding).toBe(0);
  });
});

describe('batching', () => {
  it('messages that become visible at the same moment share a batch; a millisecond apart, they do not', () => {
    const agenda = new Agenda();
    const q = queue(agenda);
    const batches: string[][] = [];
    consumer(agenda, q, { batchSize: 2 }, (records, at) => {
      batches.push(records);
      return at + 10;
    });
    q.sendBatch(0, [
      { bytes: 10, payload: 'a1', delaySeconds: 5 },
      { bytes: 10, payload: 'a2', delaySeconds: 5 },
    ]);
    q.sendBatch(1, [{ bytes: 10, payload: 'b1', delaySeconds: 5 }]);
    q.sendBatch(2, [{ bytes: 10, payload: 'b2', delaySeconds: 5 }]);
    agenda.runUntil();
    expect(batches).toEqual([['a1', 'a2'], ['b1'], ['b2']]);
  });
});

describe('batching window', () => {
  it('gathers what becomes visible within the window into one invocation, each receive billed, and waits no longer', () => {
    const agenda = new Agenda();
    const q = queue(agenda);
    const batches: { at: number; records: string[] }[] = [];
    consumer(agenda, q, { batchSize: 3, batchingWindowMs: 1000 }, (records, at) => {
      batches.push({ at: agenda.now, records });
      return at + 10;
    });
    for (const [at, payload] of [
      [0, 'a'],
      [300, 'b'],
      [600, 'c'],
      [5000, 'd'],
      [5500, 'e'],
    ] as const)
      q.sendBatch(at, [{ bytes: 10, payload, delaySeconds: 0 }]);
    agenda.runUntil();
    expect(batches).toEqual([
      // Full at c: invoked then, not at the window's end.
      { at: 600 + pickup, records: ['a', 'b', 'c'] },
      // Not full: the window opened by d is waited out, e gathered within it.
      { at: 6000 + pickup, records: ['d', 'e'] },
    ]);
    // Five sends, a receive per arrival (the poller takes each as it becomes visible), a delete per batch.
    expect(q.bill).toMatchObject({ sendCalls: 5, receiveCalls: 5, deleteCalls: 2, requests: 12 });
  });

  it('a receive returns what became visible while it was outstanding: one round trip after the first message, all of them', () => {
    const run = (receiveRoundTripMs: number) => {
      const agenda = new Agenda();
      const q = queue(agenda);
      const batches: { at: number; records: string[] }[] = [];
      consumer(agenda, q, { batchSize: 10, batchingWindowMs: 1000, receiveRoundTripMs }, (records, at) => {
        batches.push({ at: agenda.now, records });
        return at + 10;
      });
      // A pair 0.2 ms apart (two targets' lanes), one 3 ms later, one 10 ms later, one just before the window closes.
      for (const [at, payload] of [
        [0, 'a1'],
        [0.2, 'a2'],
        [3, 'b'],
        [10, 'c'],
        [1003, 'd'],
      ] as const)
        q.sendBatch(at, [{ bytes: 10, payload, delaySeconds: 0 }]);
      agenda.runUntil();
      return { batches, receives: q.bill.receiveCalls };
    };
    // 5 ms: the receive issued at a1 returns at 5 ms with a1, a2 and b; c (10 ms) needs the next one,
    // which returns at 15 ms; the window, opened at 5 ms, closes at 1,005 ms while a receive issued
    // for d (1,003 ms) is outstanding: it returns d into the batch at 1,008 ms.
    expect(run(5)).toEqual({ batches: [{ at: 1008 + pickup, records: ['a1', 'a2', 'b', 'c', 'd'] }], receives: 3 });
    // No round trip: each message its own receive, the window from a1, d after it.
    expect(run(0)).toEqual({
      batches: [
        { at: 1000 + pickup, records: ['a1', 'a2', 'b', 'c'] },
        { at: 2003 + pickup, records: ['d'] },
      ],
      receives: 5,
    });
  });

  it('invokes at once when the next message would take the payload past 6 MB', () => {
    const agenda = new Agenda();
    const q = queue(agenda);
    const batches: { at: number; size: number }[] = [];
    consumer(agenda, q, { batchSize: 10, batchingWindowMs: 1000 }, (records, at) => {
      batches.push({ at: agenda.now, size: records.length });
      return at + 10;
    });
    // Seven messages of SQS's largest size (1 MiB): six make 6 MB.
    q.sendBatch(
      0,
      Array.from({ length: 7 }, (_, i) => ({ bytes: 1024 * KB, payload: `m${i}`, delaySeconds: 0 })),
    );
    agenda.runUntil();
    expect(batches).toEqual([
      { at: pickup, size: 6 },
      { at: 1000 + pickup, size: 1 },
    ]);
  });
});

describe('throttling', () => {
  it('a batch Lambda throttles is received again only after the visibility timeout', () => {
    const agenda = new Agenda();
    const q = queue(agenda, { visibilityTimeoutS: 100, maxReceiveCount: 5 });
    const handled: { payload: string; at: number }[] = [];
    const c = consumer(agenda, q, { batchSize: 1, reserved: 1 }, (records, at) => {
      for (const r of records) handled.push({ payload: r, at });
      return at + 10_000;
    });
    q.sendBatch(0, [
      { bytes: 10, payload: 'a', delaySeconds: 0 },
      { bytes: 10, payload: 'b', delaySeconds: 0 },
    ]);
    agenda.runUntil();
    expect(c.stats.throttledInvocations).toBe(1);
    expect(handled.map((h) => h.payload)).toEqual(['a', 'b']);
    // b was received with a, throttled, and only seen again 100 s after that receive.
    expect(handled[1]?.at).toBeGreaterThanOrEqual(100_000 + pickup);
    expect(handled[1]?.at).toBeLessThan(100_000 + pickup + 1000);
    expect(q.outstanding).toBe(0);
  });
});
