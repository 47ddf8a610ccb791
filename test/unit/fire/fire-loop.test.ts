import { describe, expect, it } from 'vitest';
import { createOpenAITarget } from '../../../lambdas/adapters/http/openai-target';
import { systemClock } from '../../../lambdas/adapters/system-clock';
import { CATCH_UP_TURN_NS, runFireLoop, type FireLoopOptions } from '../../../lambdas/core/fire/fire-loop';
import { deterministicUuid } from '../../../lambdas/core/ids';
import type { FireOutcome } from '../../../lambdas/core/types';
import { startMockServer } from '../../../lambdas/mocks/mock-server';
import { FakeTarget, VirtualClock } from '../../support/virtual-clock';
import { scheduledRequest } from '../../support/fixtures';
import { chatRequests } from '../../support/shard-messages';

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

  it('a client that prepares ahead gets each request that long before its due time, told when to write it', async () => {
    const { clock, options } = setup(50);
    const target = Object.assign(new FakeTarget('A', clock, () => ({ latencyMs: 50 })), { preparesAheadMs: 20 });
    const outcomes = await runFireLoop([req(0, 0), req(1, 100)], { ...options, target });
    expect(target.sent.map((s) => s.atNs - START)).toEqual([ms(-20), ms(80)]);
    expect(target.sent.map((s) => s.request.notBeforeNs)).toEqual([START, START + ms(100)]);
    // Not late: picked up ahead, no catch-up turn, nothing dropped by a late policy.
    expect(outcomes.every((o) => o.dropReason === null)).toBe(true);
    // A client that does not prepare ahead gets no write time.
    const plain = setup(50);
    await runFireLoop([req(0, 0)], plain.options);
    expect(plain.target.sent[0]!.request.notBeforeNs).toBeUndefined();
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
    const outcomes = await runFireLoop([req(0, 0), req(1, 10), req(2, 20)], {
      ...options,
      maxInFlight: 1,
      latePolicy: { toleranceMs, action: 'drop' },
    });
    expect(outcomes.map((o) => o.dropReason ?? 'fired')).toEqual(expected);
  });

  it('fire policy fires late requests and records their lag', async () => {
    const { options } = setup(100);
    const outcomes = await runFireLoop([req(0, 0), req(1, 10)], {
      ...options,
      maxInFlight: 1,
      latePolicy: { toleranceMs: 1, action: 'fire' },
    });
    expect(outcomes.map((o) => [o.dropReason, lagMs(o)])).toEqual([
      [null, 0],
      [null, 90],
    ]);
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
    const { options } = setup(0, (r) =>
      r.correlationId === 'corr-1' ? { throws: 'socket exploded' } : { latencyMs: 5 },
    );
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
      const requests = chatRequests(40, 0.5);
      const outcomes = await runFireLoop(requests, {
        runId: 'listeners',
        target,
        clock: systemClock,
        startNs: systemClock.nowNs() + ms(20),
        workerId: 'w',
        cancelSignal: cancel.signal,
      });
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

describe('runFireLoop: catching up', () => {
  it('a request picked up more than CATCH_UP_TURN_NS late is sent after a turn of the event loop; one on time at once', async () => {
    const events: string[] = [];
    let ticking = true;
    const tick = () => {
      if (!ticking) return;
      events.push('turn');
      setImmediate(tick);
    };
    // The loop starts 5 ms behind: the first three requests are overdue, the last two are not.
    const clock = new VirtualClock(START + ms(5));
    const target = new FakeTarget('A', clock, (request) => {
      events.push(`send ${request.correlationId}`);
      // Answered at once: nothing waits on the virtual clock, so it does not move during turns.
      return { latencyMs: 0 };
    });
    setImmediate(tick);
    const late = Number(CATCH_UP_TURN_NS) / 1e6;
    const outcomes = await runFireLoop([req(0, 0), req(1, 1), req(2, 5 - late - 0.5), req(3, 5), req(4, 5)], {
      runId: 'run',
      target,
      clock,
      startNs: START,
      workerId: 'w',
    });
    ticking = false;
    const sends = events.map((e, i) => [e, i] as const).filter(([e]) => e.startsWith('send'));
    // Each overdue request waited for a turn: never sent right after the send before it.
    for (const [name, at] of sends.slice(0, 3)) expect(events[at - 1], `${name}: ${events.join(', ')}`).toBe('turn');
    // On time (the virtual clock has not moved: 0 ms late): sent at once, back to back.
    expect(sends[4]![1] - sends[3]![1], events.join(', ')).toBe(1);
    expect(outcomes.map(lagMs)).toEqual([5, 4, late + 0.5, 0, 0]);
  });
});

describe('runFireLoop: beforeStart', () => {
  it('is called once, after the requests are prepared and before the first is sent', async () => {
    const { target, options } = setup(5);
    const calls: number[] = [];
    const outcomes = await runFireLoop([req(0, 0), req(1, 10)], {
      ...options,
      beforeStart: () => calls.push(target.sent.length),
    });
    expect(calls).toEqual([0]);
    expect(outcomes.every((o) => o.result?.error === null)).toBe(true);
  });
});
