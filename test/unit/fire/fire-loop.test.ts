import { describe, expect, it } from 'vitest';
import { createOpenAITarget } from '../../../lambdas/adapters/http/openai-target';
import { systemClock } from '../../../lambdas/adapters/system-clock';
import { busiestWindow, runFireLoop, WARM_AHEAD_MS, WARM_MAX, WARM_MIN, type FireLoopOptions } from '../../../lambdas/core/fire/fire-loop';
import { deterministicUuid } from '../../../lambdas/core/ids';
import type { FireOutcome } from '../../../lambdas/core/types';
import { startMockServer } from '../../../lambdas/local/mock-server';
import { FakeTarget, VirtualClock } from '../../support/virtual-clock';
import { scheduledRequest } from '../../support/fixtures';

const req = (index: number, offsetMs: number) => scheduledRequest(index, offsetMs);

const START = 1_800_000_000_000_000_000n;
const ms = (n: number) => BigInt(Math.round(n * 1e6));

function setup(latencyMs = 10, behaviour?: ConstructorParameters<typeof FakeTarget>[2]) {
  const clock = new VirtualClock(START - ms(1000));
  const target = new FakeTarget('A', clock, behaviour ?? (() => ({ latencyMs })));
  const options: FireLoopOptions = { runId: 'run', target, clock, startNs: START, workerId: 'w' };
  return { clock, target, options };
}

const lagMs = (o: FireOutcome) => Number((o.result?.requestStartNs ?? 0n) - o.scheduledNs) / 1e6;

describe('runFireLoop', () => {
  it('sends each request at its due time, with deterministic ids', async () => {
    const { target, options } = setup(50);
    const outcomes = await runFireLoop([req(0, 0), req(1, 12.5), req(2, 12.5), req(3, 1000)], options);
    expect(outcomes.map((o) => o.scheduledNs - START)).toEqual([0n, ms(12.5), ms(12.5), ms(1000)]);
    expect(outcomes.map(lagMs)).toEqual([0, 0, 0, 0]);
    expect(target.sent.map((s) => s.atNs - START)).toEqual([0n, ms(12.5), ms(12.5), ms(1000)]);
    expect(outcomes.map((o) => o.requestId)).toEqual([0, 1, 2, 3].map((i) => deterministicUuid('run', 'A', i)));
    expect(target.sent[1]!.request).toMatchObject({ correlationId: 'corr-1', contentType: 'application/json' });
    expect(outcomes.every((o) => o.dropReason === null && o.result?.error === null && o.workerId === 'w')).toBe(true);
  });

  it('does not wait for earlier responses before firing later requests', async () => {
    const { target, options } = setup(5000);
    await runFireLoop([req(0, 0), req(1, 1), req(2, 2)], options);
    expect(target.sent.map((s) => Number(s.atNs - START) / 1e6)).toEqual([0, 1, 2]);
  });

  it('a request held by maxInFlight is late by exactly the wait, and says so', async () => {
    const { options } = setup(100);
    const outcomes = await runFireLoop([req(0, 0), req(1, 10), req(2, 20)], { ...options, maxInFlight: 1 });
    expect(outcomes.map(lagMs)).toEqual([0, 90, 180]);
  });

  it.each([
    [50, ['fired', 'late_beyond_tolerance', 'late_beyond_tolerance']],
    [90, ['fired', 'fired', 'late_beyond_tolerance']],
  ])('drop policy with tolerance %i ms', async (toleranceMs, expected) => {
    const { options } = setup(100);
    const outcomes = await runFireLoop([req(0, 0), req(1, 10), req(2, 20)], { ...options, maxInFlight: 1, latePolicy: { toleranceMs, action: 'drop' } });
    expect(outcomes.map((o) => o.dropReason ?? 'fired')).toEqual(expected);
  });

  it('fire policy fires late requests and records their lag', async () => {
    const { options } = setup(100);
    const outcomes = await runFireLoop([req(0, 0), req(1, 10)], { ...options, maxInFlight: 1, latePolicy: { toleranceMs: 1, action: 'fire' } });
    expect(outcomes.map((o) => [o.dropReason, lagMs(o)])).toEqual([[null, 0], [null, 90]]);
  });

  it('on abort, unfired requests are dropped as aborted and nothing is lost', async () => {
    const { clock, options } = setup(100);
    const abort = new AbortController();
    void clock.waitUntil(START + ms(15)).then(() => abort.abort());
    const seen: number[] = [];
    const outcomes = await runFireLoop([req(0, 0), req(1, 10), req(2, 20), req(3, 30)], {
      ...options,
      signal: abort.signal,
      onOutcome: (o) => seen.push(o.request.index),
    });
    expect(outcomes.map((o) => o.dropReason ?? 'fired')).toEqual(['fired', 'fired', 'aborted', 'aborted']);
    expect(outcomes[0]!.result?.error).toBeNull();
    expect(seen.sort()).toEqual([0, 1, 2, 3]);
  });

  it('turns a throwing client into an error outcome and carries on', async () => {
    const { options } = setup(0, (r) => (r.correlationId === 'corr-1' ? { throws: 'socket exploded' } : { latencyMs: 5 }));
    const outcomes = await runFireLoop([req(0, 0), req(1, 1), req(2, 2)], options);
    expect(outcomes.map((o) => o.result?.error?.type ?? 'ok')).toEqual(['ok', 'ClientError', 'ok']);
    expect(outcomes[1]!.result?.error?.message).toBe('socket exploded');
  });

  it('fires unsorted input in offset order but returns outcomes in input order', async () => {
    const { target, options } = setup(1);
    const input = [req(0, 30), req(1, 10), req(2, 20)];
    const outcomes = await runFireLoop(input, options);
    expect(target.sent.map((s) => s.request.correlationId)).toEqual(['corr-1', 'corr-2', 'corr-0']);
    expect(outcomes.map((o) => o.request)).toEqual(input);
  });

  it('returns nothing for nothing', async () => {
    const { options } = setup();
    expect(await runFireLoop([], options)).toEqual([]);
  });

  it('runs a long schedule on virtual time (24 h of requests, one a minute)', async () => {
    const { target, options } = setup(200);
    const day = Array.from({ length: 24 * 60 }, (_, i) => req(i, i * 60_000));
    const outcomes = await runFireLoop(day, options);
    expect(outcomes).toHaveLength(1440);
    expect(target.sent.at(-1)!.atNs - START).toBe(ms(1439 * 60_000));
    expect(outcomes.every((o) => lagMs(o) === 0)).toBe(true);
  });
});

describe('runFireLoop against a real HTTP server on the real clock', () => {
  it('fires every request once, in schedule order, while earlier ones are still streaming', async () => {
    const server = await startMockServer({ ttftMs: 30, itlMs: 5, outputTokens: 10 });
    const target = createOpenAITarget({ name: 'mock', baseUrl: server.url, timeoutMs: 10_000, clock: systemClock });
    try {
      const requests = Array.from({ length: 40 }, (_, i) => ({ ...req(i, i * 2), streaming: true, body: Buffer.from(`{"messages":[{"role":"user","content":"q${i}"}],"stream":true}`) }));
      const outcomes = await runFireLoop(requests, { runId: 'real', target, clock: systemClock, startNs: systemClock.nowNs() + ms(50), workerId: 'w' });
      expect(outcomes.map((o) => o.result?.error ?? null)).toEqual(requests.map(() => null));
      expect(outcomes.every((o) => o.result!.contentChunkNs.length === 10)).toBe(true);
      // Each request once at the server, and on the wire in schedule order. (The order in which
      // this in-process server parses requests that came on different connections is not the
      // loop's: at the start it also accepts the connections the target opened ahead.)
      expect(server.requests.map((r) => r.headers['x-request-id']).sort()).toEqual(outcomes.map((o) => o.requestId).sort());
      const onWire = outcomes.map((o) => o.result!.requestWireNs as bigint);
      expect(onWire.every((ns, i) => typeof ns === 'bigint' && (i === 0 || ns >= (onWire[i - 1] as bigint)))).toBe(true);
      // Request 0 streams for ~75 ms (30 + 9 x 5); requests every 2 ms keep firing meanwhile.
      const firstEnd = outcomes[0]!.result!.requestEndNs;
      expect(outcomes.filter((o) => o.result!.requestStartNs < firstEnd).length).toBeGreaterThan(10);
    } finally {
      await target.close();
      await server.close();
    }
  });
});

describe('runFireLoop: one cancel signal shared by every request in flight', () => {
  it('raises no MaxListenersExceededWarning with dozens of requests in flight (it did past 10)', async () => {
    const server = await startMockServer({ ttftMs: 200, itlMs: 0, outputTokens: 1 });
    const target = createOpenAITarget({ name: 'mock', baseUrl: server.url, timeoutMs: 10_000, clock: systemClock });
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);
    process.on('warning', onWarning);
    try {
      const cancel = new AbortController();
      // 40 requests due within 20 ms, each answered after 200 ms: all 40 in flight at once.
      const requests = Array.from({ length: 40 }, (_, i) => ({ ...req(i, i * 0.5), body: Buffer.from(`{"messages":[{"role":"user","content":"q${i}"}]}`) }));
      const outcomes = await runFireLoop(requests, { runId: 'listeners', target, clock: systemClock, startNs: systemClock.nowNs() + ms(20), workerId: 'w', cancelSignal: cancel.signal });
      expect(outcomes.every((o) => o.result?.error === null)).toBe(true);
      // Warnings are emitted on the next tick.
      await new Promise((r) => setImmediate(r));
      expect(warnings.filter((w) => w.startsWith('MaxListenersExceededWarning'))).toEqual([]);
    } finally {
      process.off('warning', onWarning);
      await target.close();
      await server.close();
    }
  });
});

/** A fake target that records when and how much the loop warmed it. */
class WarmTarget extends FakeTarget {
  readonly warms: { connections: number; atNs: bigint; sentBefore: number }[] = [];
  constructor(private readonly virtual: VirtualClock) {
    super('A', virtual, () => ({ latencyMs: 5 }));
  }
  warm(connections: number): void {
    this.warms.push({ connections, atNs: this.virtual.nowNs(), sentBefore: this.sent.length });
  }
}

describe('runFireLoop: connections opened ahead (TargetClient.warm)', () => {
  const warmed = async (requests: ReturnType<typeof req>[], extra: Partial<FireLoopOptions> = {}, startAheadMs = 5_000) => {
    const clock = new VirtualClock(START - ms(startAheadMs));
    const target = new WarmTarget(clock);
    const outcomes = await runFireLoop(requests, { runId: 'run', target, clock, startNs: START, workerId: 'w', ...extra });
    return { target, outcomes };
  };

  it('warms once, WARM_AHEAD_MS before the first due time, for the busiest 100 ms of the plan', async () => {
    // 30 requests in the first 50 ms, then one a second.
    const requests = [...Array.from({ length: 30 }, (_, i) => req(i, i * 1.5)), ...Array.from({ length: 5 }, (_, i) => req(30 + i, 1000 * (i + 1)))];
    const { target, outcomes } = await warmed(requests);
    expect(target.warms).toEqual([{ connections: 30, atNs: START - ms(WARM_AHEAD_MS), sentBefore: 0 }]);
    expect(outcomes.every((o) => o.result?.error === null)).toBe(true);
  });

  it('at once when the first due time is nearer than WARM_AHEAD_MS', async () => {
    const { target } = await warmed([req(0, 0), req(1, 10)], {}, 200);
    expect(target.warms).toEqual([{ connections: WARM_MIN, atNs: START - ms(200), sentBefore: 0 }]);
  });

  it('at least WARM_MIN, at most WARM_MAX, never more than maxInFlight', async () => {
    const burst = Array.from({ length: 1_000 }, (_, i) => req(i, 0));
    expect((await warmed([req(0, 0)])).target.warms.map((w) => w.connections)).toEqual([WARM_MIN]);
    expect((await warmed(burst)).target.warms.map((w) => w.connections)).toEqual([WARM_MAX]);
    expect((await warmed(burst, { maxInFlight: 8 })).target.warms.map((w) => w.connections)).toEqual([8]);
  });

  it('a loop stopped before the warm-up time warms nothing and drops everything as aborted', async () => {
    const stop = new AbortController();
    stop.abort();
    const { target, outcomes } = await warmed([req(0, 0), req(1, 10)], { signal: stop.signal });
    expect(target.warms).toEqual([]);
    expect(outcomes.map((o) => o.dropReason)).toEqual(['aborted', 'aborted']);
  });

  it('nothing to fire: no warm-up', async () => {
    expect((await warmed([])).target.warms).toEqual([]);
  });
});

describe('busiestWindow', () => {
  it('counts the most offsets within any window (end exclusive)', () => {
    expect(busiestWindow([], 100)).toBe(0);
    expect(busiestWindow([0, 50, 99.9, 100, 150], 100)).toBe(3);
    expect(busiestWindow([0, 100, 200, 300], 100)).toBe(1);
    expect(busiestWindow(Float64Array.from([0, 0, 0, 1000]), 1000)).toBe(3);
  });
});
