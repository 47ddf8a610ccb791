/**
 * The fire function's warm-up (lambdas/handlers/fire-warm-up.ts) on stand-in deps: when it
 * rehearses (once per environment and target kind and streaming mode, only with time to spare),
 * and that the collection and the connections opened ahead come once, before the invocation's
 * first due time, and never after the batch is done. The warm-up on a real bundle,
 * cold, against a real server: test/integration/fire-warm-up.test.ts.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { systemClock } from '../../../lambdas/adapters/system-clock';
import type { ShardMessage } from '../../../lambdas/core/pipeline/shards';
import type { ScheduledRequest, TargetResult } from '../../../lambdas/core/types';
import {
  connectionsAhead,
  createWarmUpState,
  dueWithin,
  FIRE_REHEARSAL_REQUESTS,
  InvocationWarmUp,
  KEEP_OPENING,
  type WarmUpState,
} from '../../../lambdas/handlers/fire-warm-up';
import type { WarmOptions } from '../../../lambdas/adapters/http/socket-reserve';
import type { TargetClient } from '../../../lambdas/ports';
import type { Deps } from '../../../lambdas/runtime/deps';
import { chatRequests } from '../../support/shard-messages';

const collected = vi.hoisted(() => ({ count: 0, atNs: [] as bigint[] }));
vi.mock('../../../lambdas/adapters/full-gc', async () => {
  const { systemClock: clock } = await import('../../../lambdas/adapters/system-clock');
  return { collectGarbage: () => (collected.count++, collected.atNs.push(clock.nowNs()), true) };
});

const MS = 1_000_000n;
const nowNs = () => systemClock.nowNs();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

afterEach(() => {
  collected.count = 0;
  collected.atNs = [];
});

const ok = (): TargetResult => ({
  requestStartNs: nowNs(),
  requestAckNs: nowNs(),
  requestEndNs: nowNs(),
  contentChunkNs: [],
  httpStatus: 200,
  usage: null,
  error: null,
});

/** Deps with one HTTP target "A": twins that answer at once, counted; openAhead recorded. */
function standIn() {
  const seen = {
    twins: 0,
    sent: 0,
    openAhead: [] as number[],
    atOnce: [] as (number | undefined)[],
    logs: [] as string[],
  };
  const twin: TargetClient = {
    name: 'A-rehearsal',
    send: async () => {
      seen.sent++;
      return ok();
    },
    close: async () => undefined,
  };
  const deps = {
    config: {
      targets: [{ kind: 'http', name: 'A', url: 'http://target.invalid', path: '/v1/chat/completions' }],
      leadMs: 20_000,
    },
    clock: systemClock,
    logger: { info: (m: string) => seen.logs.push(m), warn: (m: string) => seen.logs.push(m) },
    rehearsalTwin: async () => {
      seen.twins++;
      return { twin, close: async () => undefined };
    },
    targets: async () =>
      new Map([
        [
          'A',
          {
            openAhead: (n: number, options?: WarmOptions) => {
              seen.openAhead.push(n);
              seen.atOnce.push(options?.atOnce);
            },
          },
        ],
      ]),
  } as unknown as Deps;
  return { deps, seen };
}

/** A shard of `requests` for target A whose first request is due `inMs` from now. */
function shardDueIn(
  inMs: number,
  requests: ScheduledRequest[],
): { message: ShardMessage; requests: ScheduledRequest[] } {
  const startNs = nowNs() + BigInt(inMs) * MS;
  return {
    message: {
      target: 'A',
      startNs: startNs.toString(),
      firstDueNs: (startNs + BigInt(Math.round((requests[0]?.offsetMs ?? 0) * 1e6))).toString(),
    } as ShardMessage,
    requests,
  };
}

async function invocation(
  deps: Deps,
  state: WarmUpState,
  ...shards: ReturnType<typeof shardDueIn>[]
): Promise<InvocationWarmUp> {
  const warmUp = new InvocationWarmUp(deps, state);
  await Promise.all(shards.map((s) => warmUp.beforeClaim(s.message, s.requests)));
  return warmUp;
}

describe('connectionsAhead', () => {
  it('per target: its requests due within 1.5 s of its first, at least 1, at most 256', () => {
    const at = (...ms: number[]) => ms.map((m) => 1_000_000_000_000n + BigInt(Math.round(m * 1e6)));
    const dense = at(...Array.from({ length: 1000 }, (_, i) => i));
    expect(
      connectionsAhead(
        new Map([
          ['A', at(100, 101, 1_599.9, 1_600, 3_000, 99)],
          ['B', at(500)],
          ['C', dense],
          ['D', []],
        ]),
      ),
    ).toEqual(
      new Map([
        ['A', 3],
        ['B', 1],
        ['C', 256],
      ]),
    );
  });
});

describe('dueWithin', () => {
  it('counts the due times in [from, from + ahead)', () => {
    const at = (...ms: number[]) => ms.map((m) => 1_000_000_000_000n + BigInt(Math.round(m * 1e6)));
    const dues = at(0, 10, 10, 99.999, 100, 250, 400);
    const from = (ms: number) => 1_000_000_000_000n + BigInt(ms * 1e6);
    expect(dueWithin(dues, from(0), 100)).toBe(4);
    expect(dueWithin(dues, from(10), 240)).toBe(4);
    expect(dueWithin(dues, from(-50), 50)).toBe(0);
    expect(dueWithin(dues, from(401), 1000)).toBe(0);
    expect(dueWithin([], from(0), 100)).toBe(0);
  });
});

describe('InvocationWarmUp', () => {
  it(
    'while the shards fire, keeps connections ready for the requests due next: each tick asks for those due ' +
      'within 250 ms, KEEP_OPENING at a time, none before, none once ended',
    async () => {
      const { deps, seen } = standIn();
      // 40 requests 10 ms apart from 1,500 ms on: too soon to rehearse; collected at 500 ms.
      const requests = chatRequests(40, 10);
      const warmUp = await invocation(deps, createWarmUpState(), shardDueIn(1_500, requests));
      await sleep(300);
      expect(seen.openAhead, 'nothing asked for yet').toEqual([]);
      await sleep(1_400);
      // At 1,700 ms: the opening ahead at 500 ms (all 40: the requests span 400 ms of the first
      // 1.5 s), then the ticks from 1,250 ms, each for the requests due in the next 250 ms (at most 25).
      expect(seen.openAhead[0]).toBe(40);
      const ticks = seen.openAhead.slice(1);
      expect(ticks.length).toBeGreaterThan(10);
      expect(Math.max(...ticks)).toBe(25);
      expect(Math.min(...ticks)).toBeGreaterThan(0);
      // Opened ahead before the first due time at the reserve's own pace; while firing, KEEP_OPENING at a time.
      expect(seen.atOnce[0]).toBeUndefined();
      expect(new Set(seen.atOnce.slice(1))).toEqual(new Set([KEEP_OPENING]));
      warmUp.end();
      const asked = seen.openAhead.length;
      await sleep(100);
      expect(seen.openAhead.length, 'none once the batch is done').toBe(asked);
    },
  );

  it('rehearses once per environment and streaming mode, before the claim; a new mode is rehearsed again', async () => {
    const { deps, seen } = standIn();
    const state = createWarmUpState();
    (await invocation(deps, state, shardDueIn(5_000, chatRequests(3, 1)), shardDueIn(5_500, chatRequests(3, 1)))).end();
    expect(seen).toMatchObject({ twins: 1, sent: FIRE_REHEARSAL_REQUESTS });
    (await invocation(deps, state, shardDueIn(5_000, chatRequests(3, 1)))).end();
    expect(seen).toMatchObject({ twins: 1, sent: FIRE_REHEARSAL_REQUESTS });
    (await invocation(deps, state, shardDueIn(5_000, chatRequests(3, 1, true)))).end();
    expect(seen).toMatchObject({ twins: 2, sent: 2 * FIRE_REHEARSAL_REQUESTS });
    expect(seen.logs.filter((l) => l === 'rehearsed')).toHaveLength(2);
  });

  it('does not rehearse without time to spare before the first due time', async () => {
    const { deps, seen } = standIn();
    (await invocation(deps, createWarmUpState(), shardDueIn(2_200, chatRequests(3, 1)))).end();
    expect(seen.twins).toBe(0);
  });

  it('collects garbage, then opens connections ahead, once, before the earliest first due time', async () => {
    const { deps, seen } = standIn();
    const early = shardDueIn(1_300, chatRequests(4, 1));
    const warmUp = await invocation(deps, createWarmUpState(), shardDueIn(1_800, chatRequests(2, 1)), early);
    expect(collected.count).toBe(0);
    const firstDueNs = BigInt(early.message.firstDueNs);
    while (collected.count === 0 && nowNs() < firstDueNs) await sleep(5);
    expect(collected.atNs[0], 'collected before the first due time').toBeLessThan(firstDueNs);
    await sleep(700);
    expect(collected.count).toBe(1);
    // The early shard's four requests 1 ms apart, and the other shard's two 500 ms later: within the first 1.5 s.
    expect(seen.openAhead).toEqual([6]);
    warmUp.end();
  });

  it('no collection while another invocation of the process is under way (it may be in its slot), one once it has ended', async () => {
    const { deps } = standIn();
    const state = createWarmUpState();
    const firing = await invocation(deps, state, shardDueIn(100, chatRequests(2, 1)));
    const next = await invocation(deps, state, shardDueIn(1_100, chatRequests(2, 1)));
    await sleep(400);
    expect(collected.count).toBe(0);
    firing.end();
    next.end();
    const alone = await invocation(deps, state, shardDueIn(1_100, chatRequests(2, 1)));
    await sleep(400);
    expect(collected.count).toBe(1);
    alone.end();
    expect(state.active).toBe(0);
  });

  it('nothing is collected once the batch is done, nor for an invocation that arrives too late', async () => {
    const { deps } = standIn();
    (await invocation(deps, createWarmUpState(), shardDueIn(1_300, chatRequests(2, 1)))).end();
    (await invocation(deps, createWarmUpState(), shardDueIn(100, chatRequests(2, 1)))).end();
    await sleep(500);
    expect(collected.count).toBe(0);
  });
});
