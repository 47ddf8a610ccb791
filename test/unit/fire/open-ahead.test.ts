/**
 * The CLI's connections opened ahead (lambdas/local/open-ahead.ts): how many a thread asks for
 * from its share of a plan, how long before schedule zero, and that the fire runner the CLI
 * uses in its own thread (fire-workers.ts prepareFireWorkers) asks for them once before the
 * first request is due, only as many as can be ready READY_BEFORE_MS before it, and runs the
 * loop's full collection after them, COLLECT_BEFORE_MS before it. The connections a server sees
 * are test/e2e/open-ahead.test.ts's.
 */
import { describe, expect, it } from 'vitest';
import { MAX_OPENING, type WarmOptions } from '../../../lambdas/adapters/http/socket-reserve';
import { createSystemClock } from '../../../lambdas/adapters/system-clock';
import type { ReplayPlan, TargetResult } from '../../../lambdas/core/types';
import { prepareFireWorkers } from '../../../lambdas/local/fire-workers';
import {
  connectionsAhead,
  OPEN_AHEAD_MAX,
  OPEN_BEFORE_MAX_MS,
  OPEN_BEFORE_MIN_MS,
  openAheadPlan,
  openBeforeMs,
  READY_BEFORE_MS,
  COLLECT_BEFORE_MS,
  RESPONSE_ESTIMATE_MS,
  CHEAP_CONNECT_MS,
  CHEAP_CONNECT_WINDOW_MS,
  UNMEASURED_CONNECT_MS,
} from '../../../lambdas/local/open-ahead';
import type { TargetClientSpec } from '../../../lambdas/local/target-clients';
import type { TargetClient } from '../../../lambdas/ports';
import { scheduledRequest } from '../../support/fixtures';

/** Due offsets of `rate` requests a second, evenly spread, for `seconds`. */
const evenly = (rate: number, seconds: number) => Array.from({ length: rate * seconds }, (_, i) => (i * 1000) / rate);

const plain = (ms: number) => ({ ms, tls: false });
const tls = (ms: number) => ({ ms, tls: true });

describe("connectionsAhead: one thread's share of the first second", () => {
  it('every request due within a second of the first: each may still be in flight at its end', () => {
    expect(RESPONSE_ESTIMATE_MS).toBe(1000);
    for (const connect of [tls(0.5), tls(5), plain(3), plain(40), null]) {
      expect(connectionsAhead(evenly(1000, 10), connect)).toBe(1000);
      expect(connectionsAhead(evenly(50, 10), connect)).toBe(50);
    }
    // A quiet first second and a busy tenth: the first second is what the lead can cover.
    expect(connectionsAhead([...evenly(5, 9), ...evenly(2000, 1).map((o) => 9000 + o)], tls(5))).toBe(5);
    // From the share's own first request, not from zero (a worker's share may start later).
    expect(connectionsAhead([400, 500, 1300, 1399.9, 1400], tls(5))).toBe(4);
    expect(connectionsAhead([], tls(5))).toBe(0);
  });

  it('a connect without TLS quicker than CHEAP_CONNECT_MS (loopback, a LAN): only the first CHEAP_CONNECT_WINDOW_MS', () => {
    expect([CHEAP_CONNECT_MS, CHEAP_CONNECT_WINDOW_MS]).toEqual([3, 100]);
    expect(connectionsAhead(evenly(1000, 10), plain(0.3))).toBe(100);
    expect(connectionsAhead(evenly(1000, 10), plain(2.99))).toBe(100);
    expect(connectionsAhead(evenly(1000, 10), plain(3))).toBe(1000);
    // A TLS handshake is never cheap: a hundred of them in the first tenth of a second made it late.
    expect(connectionsAhead(evenly(1000, 10), tls(0.3))).toBe(1000);
  });

  it('never more than the pool holds, nor than the thread may have in flight', () => {
    expect(connectionsAhead(evenly(5000, 2), tls(5))).toBe(OPEN_AHEAD_MAX);
    expect(connectionsAhead(evenly(1000, 2), tls(5), 64)).toBe(64);
    expect(connectionsAhead(evenly(1000, 2), tls(5), Infinity)).toBe(1000);
    expect(connectionsAhead(evenly(1000, 2), tls(5), 0)).toBe(0);
    expect(openAheadPlan(evenly(1000, 2), tls(1), 0)).toBeNull();
  });
});

describe("openBeforeMs: from the preflight's connect time", () => {
  it(
    'a second before zero when connecting is quick; two connect times and one per wave of MAX_OPENING when it ' +
      'is not; at most OPEN_BEFORE_MAX_MS',
    () => {
      expect(OPEN_BEFORE_MIN_MS).toBe(1000);
      expect(openBeforeMs(1000, 0.3)).toBe(OPEN_BEFORE_MIN_MS);
      expect(openBeforeMs(64, 300)).toBe(2 * 300 + (64 / MAX_OPENING) * 300);
      expect(openBeforeMs(1000, 100)).toBe(OPEN_BEFORE_MAX_MS);
      // Not measured (--no-preflight, a SageMaker target): a cross-region TLS connect assumed.
      expect(openBeforeMs(1000, null)).toBe(
        Math.min(OPEN_BEFORE_MAX_MS, 2 * UNMEASURED_CONNECT_MS + Math.ceil(1000 / MAX_OPENING) * UNMEASURED_CONNECT_MS),
      );
      expect(openAheadPlan(evenly(1000, 3), tls(2))).toEqual({ connections: 1000, openBeforeMs: OPEN_BEFORE_MIN_MS });
      expect(openAheadPlan(evenly(1000, 3), plain(0.5))).toEqual({
        connections: 100,
        openBeforeMs: OPEN_BEFORE_MIN_MS,
      });
    },
  );
});

describe('the fire runner in this thread', () => {
  const clock = createSystemClock();
  const http: TargetClientSpec = {
    kind: 'http',
    name: 'target',
    baseUrl: 'http://127.0.0.1:9',
    path: '/v1/chat/completions',
    timeoutMs: 5_000,
  };
  const answered = (): TargetResult => {
    const now = clock.nowNs();
    return {
      requestStartNs: now,
      requestAckNs: now,
      requestEndNs: now,
      contentChunkNs: [],
      httpStatus: 200,
      usage: null,
      error: null,
    };
  };

  async function fire(
    spec: TargetClientSpec,
    offsets: number[],
    maxInFlight?: number,
    opensAhead = true,
    connect = tls(4),
  ) {
    const events: string[] = [];
    const asked: { connections: number; withinMs: number | undefined; beforeZeroMs: number }[] = [];
    const announced: unknown[] = [];
    const collectedBeforeZeroMs: number[] = [];
    const stop = new AbortController();
    const requests = offsets.map((o, i) => scheduledRequest(i, o));
    const startNs = clock.nowNs() + 1_300_000_000n;
    const client: TargetClient & { openAhead(n: number, options?: WarmOptions): void } = {
      name: 'target',
      send: () => Promise.resolve(answered()),
      close: () => Promise.resolve(),
      openAhead(connections, options) {
        events.push('openAhead');
        asked.push({ connections, withinMs: options?.withinMs, beforeZeroMs: Number(startNs - clock.nowNs()) / 1e6 });
      },
    };
    const prepare = prepareFireWorkers(1, {
      wait: 'precise',
      specs: [spec],
      onError: (message) => events.push(`error ${message}`),
      rehearsal: 0,
      clock,
      started: () => events.push('workers started'),
      connects: [connect],
      openingAhead: (target, ahead) => announced.push({ target, ...ahead }),
    });
    if (!opensAhead) delete (client as Partial<typeof client>).openAhead;
    const runner = await prepare([{ requests } as unknown as ReplayPlan], 'parallel');
    expect(runner).not.toBeNull();
    // Nothing to send here: the schedule is stopped at the collection (when there is none, the requests are sent).
    const collect = () => {
      events.push('collect');
      collectedBeforeZeroMs.push(Number(startNs - clock.nowNs()) / 1e6);
      if (opensAhead) stop.abort();
    };
    const outcomes = await runner!(
      requests,
      {
        runId: 'r',
        target: client,
        clock,
        startNs,
        workerId: 'w',
        signal: stop.signal,
        beforeStart: collect,
        ...(maxInFlight !== undefined ? { maxInFlight } : {}),
      },
      { index: 0, name: 'target' },
    );
    return { events, asked, announced, outcomes, collectedBeforeZeroMs };
  }

  it("asks an HTTP target's client for the first second's connections once, a second before zero, then collects", async () => {
    const { events, asked, announced, outcomes, collectedBeforeZeroMs } = await fire(http, evenly(400, 3));
    expect(events).toEqual(['openAhead', 'collect']);
    // The collection after the time the connections were to be ready by, and before zero.
    expect(collectedBeforeZeroMs[0]).toBeGreaterThan(0);
    expect(collectedBeforeZeroMs[0]).toBeLessThan(READY_BEFORE_MS);
    expect(COLLECT_BEFORE_MS).toBeLessThan(READY_BEFORE_MS);
    expect(asked).toHaveLength(1);
    expect(asked[0]?.connections).toBe(400);
    // Opened before the first due time, not earlier than the plan said (Node's timers keep whole
    // milliseconds: one may fire a fraction of one early).
    expect(asked[0]?.beforeZeroMs).toBeGreaterThan(READY_BEFORE_MS);
    expect(asked[0]?.beforeZeroMs).toBeLessThan(OPEN_BEFORE_MIN_MS + 1);
    // Only those that can be ready READY_BEFORE_MS before zero.
    expect(asked[0]?.withinMs).toBeGreaterThanOrEqual((asked[0]?.beforeZeroMs ?? NaN) - READY_BEFORE_MS);
    expect(asked[0]?.withinMs).toBeLessThan(asked[0]?.beforeZeroMs ?? NaN);
    expect(announced).toEqual([{ target: 'target', connections: 400, threads: 1, openBeforeMs: OPEN_BEFORE_MIN_MS }]);
    expect(outcomes).toHaveLength(1200);
    expect(outcomes.every((o) => o.dropReason === 'aborted')).toBe(true);
  });

  it("a target a plain TCP connect takes under 3 ms to: the first 100 ms's requests", async () => {
    const { asked } = await fire(http, evenly(400, 3), undefined, true, plain(0.4));
    expect(asked.map((a) => a.connections)).toEqual([40]);
  });

  it('--max-in-flight caps what it asks for', async () => {
    const { asked } = await fire(http, evenly(400, 3), 50);
    expect(asked.map((a) => a.connections)).toEqual([50]);
  });

  it("a SageMaker target is asked the same (its SDK's agents take spares too)", async () => {
    const sagemaker: TargetClientSpec = {
      kind: 'sagemaker',
      name: 'target',
      timeoutMs: 5_000,
      sagemaker: { endpointName: 'e', region: 'us-east-1' },
    };
    const { events, asked, announced } = await fire(sagemaker, evenly(100, 2));
    expect(events).toEqual(['openAhead', 'collect']);
    expect(asked.map((a) => a.connections)).toEqual([100]);
    expect(announced).toEqual([{ target: 'target', connections: 100, threads: 1, openBeforeMs: OPEN_BEFORE_MIN_MS }]);
  });

  it('a client that cannot open ahead is fired as before', async () => {
    const { events, outcomes } = await fire(http, evenly(100, 1).slice(0, 3), undefined, false);
    expect(events).toEqual(['collect']);
    expect(outcomes.every((o) => o.result?.httpStatus === 200)).toBe(true);
  });
});
