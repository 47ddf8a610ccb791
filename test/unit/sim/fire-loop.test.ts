/**
 * The simulator's fire loop (sim/fire-loop.ts) against the real one: the same requests reached
 * the same amount late are fired, expired or dropped alike; and its own accounting (permits,
 * the shard's end, lateness at the server).
 */
import { describe, expect, it } from 'vitest';
import { runFireLoop } from '../../../lambdas/core/fire/fire-loop';
import { MinHeap } from '../../../lambdas/core/min-heap';
import { fireShard, LatenessSink, requestFate, type FireLoopModel } from '../../../sim/fire-loop';
import { Rng } from '../../../sim/random';
import { scheduledRequest } from '../../support/fixtures';
import { FakeTarget, VirtualClock } from '../../support/virtual-clock';

const NOW = 1_800_000_000_000_000_000n;
const MS = 1_000_000n;
/** How late each request is when the loop starts (negative: due later). */
const LATE_MS = [200_000, 130_000, 120_001, 119_999, 100_000, 5_001, 4_999, 0, -3_000];

async function realFates(policy: 'fire' | 'drop'): Promise<string[]> {
  const clock = new VirtualClock(NOW);
  const target = new FakeTarget('t', clock, () => ({ latencyMs: 10 }));
  const startNs = NOW - 200_000n * MS;
  const requests = LATE_MS.map((late, i) => scheduledRequest(i, 200_000 - late));
  const outcomes = await runFireLoop(requests, {
    runId: 'r',
    target,
    clock,
    startNs,
    workerId: 'w',
    expireAfterMs: 120_000,
    latePolicy: { toleranceMs: 5000, action: policy },
  });
  return outcomes.map((o) => o.dropReason ?? 'fire');
}

describe('requestFate', () => {
  it.each(['fire', 'drop'] as const)('agrees with the real fire loop, policy %s', async (policy) => {
    const simulated = LATE_MS.map((late) => requestFate(late, 120_000, 5000, policy));
    expect(simulated).toEqual(await realFates(policy));
    expect(simulated.filter((f) => f === 'expired').length).toBe(3);
  });
});

const model = (o: Partial<FireLoopModel> = {}): FireLoopModel => ({
  expireMs: 120_000,
  toleranceMs: 5000,
  policy: 'fire',
  requestTimeoutMs: 300_000,
  own: { minMs: 0.5, p50Ms: 0.5, p90Ms: 0.5, p99Ms: 0.5, p999Ms: 0.5, maxMs: 0.5 },
  latency: { mu: Math.log(2000), sigma: 0 },
  rng: new Rng(1),
  ...o,
});

describe('fireShard', () => {
  it('on time: each request reaches the server its own lateness after its due time; the shard ends with the last response', () => {
    const sink = new LatenessSink(4);
    const r = fireShard([1000, 1500, 2000], 0, 0, model(), sink, null, 10);
    expect(r).toEqual({ fired: 3, expired: 0, lateDropped: 0, endMs: 2000 + 0.5 + 2000, stopped: false });
    expect(Array.from(sink.sorted())).toEqual([0.5, 0.5, 0.5]);
  });

  it('started late: overdue requests go at the start, those past the grace period expire', () => {
    const sink = new LatenessSink(4);
    const r = fireShard([0, 10_000, 200_000], 0, 130_000, model(), sink, null, 10);
    expect(r.expired).toBe(1);
    expect(r.fired).toBe(2);
    expect(Array.from(sink.sorted())).toEqual([0.5, 120_000.5]);
  });

  it('a request timeout cuts the response', () => {
    const r = fireShard(
      [0],
      0,
      0,
      model({ latency: { mu: Math.log(900_000), sigma: 0 } }),
      new LatenessSink(1),
      null,
      10,
    );
    expect(r.endMs).toBe(0.5 + 300_000);
  });

  it("the function's timeout stops the loop: a request not picked up by then is not sent, and the shard says it was stopped", () => {
    const sink = new LatenessSink(4);
    const r = fireShard([1000, 1500, 2000], 0, 0, model(), sink, null, 10, 1500);
    expect(r).toMatchObject({ fired: 1, expired: 0, lateDropped: 0, stopped: true });
    expect(Array.from(sink.sorted())).toEqual([0.5]);
  });

  it('more requests than permits: the next waits for the earliest response', () => {
    const sink = new LatenessSink(4);
    const r = fireShard([0, 0, 0], 0, 0, model(), sink, new MinHeap<null>(), 2);
    const [a, b, c] = Array.from(sink.sorted());
    expect([a, b]).toEqual([0.5, 0.5]);
    expect(c).toBeCloseTo(2000.5 + 0.5, 6);
    expect(r.endMs).toBeCloseTo(2001 + 2000, 6);
  });
});

describe('MinHeap', () => {
  it('pops in ascending order', () => {
    const heap = new MinHeap<number>();
    const rng = new Rng(3);
    const values = Array.from({ length: 200 }, () => rng.uniform());
    values.forEach((v, i) => heap.push(v, i));
    expect(heap.peekKey()).toBe(Math.min(...values));
    const popped = values.slice(0, 100).map(() => heap.popKey());
    const rest = values.slice(100).map(() => values[heap.pop()!]);
    expect([...popped, ...rest]).toEqual([...values].sort((a, b) => a - b));
    expect(heap.pop()).toBeUndefined();
    expect(heap.popKey()).toBeUndefined();
  });
});
