/**
 * Lanes, shards by reference and the event source's ramp, on the pipeline's pure core (memory
 * store and queue, virtual time): a slot is dealt to lanes that each send at a bounded rate
 * over the whole slot; a lane too large for a message is written as parts and read back byte
 * for byte by the fire stage; the run's first shards are delivered along the ramp of an event
 * source scaling from idle, with their own lead, and the fire stage does not send them on.
 */
import { describe, expect, it } from 'vitest';
import { MemoryObjectStore } from '../../../lambdas/adapters/local/memory-store';
import { MemoryQueue } from '../../../lambdas/adapters/local/memory-queue';
import { runFireLoop } from '../../../lambdas/core/fire/fire-loop';
import { shardPartsPrefix } from '../../../lambdas/core/pipeline/keys';
import { partRequests } from '../../../lambdas/core/pipeline/shard-parts';
import { cutShards, lanesFor, shardMessageSchema, type ShardMessage } from '../../../lambdas/core/pipeline/shards';
import { EVENT_SOURCE_SCALING, PLANNED_RAMP_PER_MINUTE, rampLeads } from '../../../lambdas/core/pipeline/sqs-delay';
import { handleShard, dispatchRun, type HandleShardDeps } from '../../../lambdas/core/pipeline/stages';
import type { ScheduledRequest } from '../../../lambdas/core/types';
import { scheduledRequest } from '../../support/fixtures';
import { FakeTarget, VirtualClock } from '../../support/virtual-clock';

const S = 1_800_000_000_000_000_000n;
const SEC = 1_000_000_000n;

/** Offsets of `perSecond[s]` requests in second s, evenly spread. */
function offsets(perSecond: readonly number[]): { offsetMs: number; i: number }[] {
  const out: { offsetMs: number; i: number }[] = [];
  perSecond.forEach((n, s) => {
    for (let k = 0; k < n; k++) out.push({ offsetMs: s * 1000 + (k * 1000) / n, i: out.length });
  });
  return out;
}

describe('lanes', () => {
  it('deals a slot round-robin: request i of the slot to lane i mod n, every request once, each lane spread over the whole slot', () => {
    const items = offsets(Array.from({ length: 60 }, () => 1000)); // 60 s at 1,000/s
    const shards = cutShards(items, { slotMs: 60_000, maxShardRequests: 6000 });
    expect(shards.map((s) => s.shardId)).toEqual(Array.from({ length: 10 }, (_, l) => `0-${l}`));
    shards.forEach((s, lane) => {
      expect(s.requests.map((r) => r.i)).toEqual(Array.from({ length: 6000 }, (_, k) => lane + 10 * k));
      // Spread: the lane's first and last request are the slot's first and last second.
      expect(s.requests[0]!.offsetMs).toBeLessThan(1000);
      expect(s.requests.at(-1)!.offsetMs).toBeGreaterThan(59_000);
    });
  });

  it('bounds each lane to maxShardRequests / slot requests in every whole second: a burst gets more lanes, not faster ones', () => {
    // 10 s slot, at most 1,000 a lane (100/s); second 3 holds 2,500, the others 100.
    const perSecond = [100, 100, 100, 2500, 100, 100, 100, 100, 100, 100];
    const shards = cutShards(offsets(perSecond), { slotMs: 10_000, maxShardRequests: 1000 });
    expect(shards).toHaveLength(25); // ceil(2,500 / 100), though 3,400 requests would fit 4 lanes by count
    expect(lanesFor(3400, 2500, { slotMs: 10_000, maxShardRequests: 1000 })).toBe(25);
    for (const s of shards) {
      const bySecond = new Map<number, number>();
      for (const r of s.requests)
        bySecond.set(Math.floor(r.offsetMs / 1000), (bySecond.get(Math.floor(r.offsetMs / 1000)) ?? 0) + 1);
      expect(Math.max(...bySecond.values())).toBeLessThanOrEqual(100);
    }
    expect(shards.reduce((n, s) => n + s.requests.length, 0)).toBe(3400);
  });

  it('a slot under a second is cut by count only', () => {
    // 30 requests over a second in 100 ms slots: 3 a slot, one lane each (the rate rule needs whole seconds).
    expect(cutShards(offsets([30]), { slotMs: 100, maxShardRequests: 2 }).map((s) => s.requests.length)).toEqual(
      Array.from({ length: 10 }, () => [2, 1]).flat(),
    );
  });
});

/** Chat-like requests `spacingMs` apart with distinct bodies of `bodyBytes` (binary, so base64 is exercised). */
function requests(count: number, spacingMs: number, bodyBytes: number): ScheduledRequest[] {
  return Array.from({ length: count }, (_, i) =>
    scheduledRequest(i, i * spacingMs, {
      body: Uint8Array.from({ length: bodyBytes }, (_, k) => (i * 31 + k * 7) & 0xff),
    }),
  );
}

function pipeline() {
  const clock = new VirtualClock(S);
  const store = new MemoryObjectStore();
  const queue = new MemoryQueue(() => clock.nowNs());
  const target = new FakeTarget('A', clock, () => ({ latencyMs: 5 }));
  const deps: HandleShardDeps = {
    store,
    queue,
    clock,
    leadMs: 20_000,
    claimLeaseMs: 900_000,
    workerId: 'fire-1',
    fire: (rs, message, onOutcome) =>
      runFireLoop(rs, {
        runId: message.runId,
        target,
        clock,
        startNs: BigInt(message.startNs),
        workerId: 'fire-1',
        onOutcome,
      }),
  };
  return { clock, store, queue, target, deps };
}

const shardsSent = (queue: MemoryQueue) =>
  queue.messages
    .map((m) => ({ m, body: shardMessageSchema.safeParse(JSON.parse(m.body)) }))
    .filter((x) => x.body.success)
    .map((x) => ({ sent: x.m, message: x.body.data as ShardMessage }));

describe('shards by reference', () => {
  it(
    'a lane over the message budget is written as parts; the fire stage reads its requests back byte for byte ' +
      'and fires each once',
    async () => {
      const p = pipeline();
      // 3,000 requests of 1 kB over 30 s, one 30 s slot, 2 lanes of 1,500 (~2 MB each): by reference.
      const rs = requests(3000, 10, 1000);
      const result = await dispatchRun({
        runId: 'run-ref',
        plan: { requests: rs, incompatible: [], excluded: {}, scheduleZeroMs: 0, durationMs: rs.at(-1)!.offsetMs },
        targets: ['A'],
        startNs: S + 30n * SEC,
        leadMs: 20_000,
        graceMs: 60_000,
        inputConfig: {},
        notScheduledByReason: {},
        sharding: {
          slotMs: 30_000,
          maxShardRequests: 1500,
          maxMessageBytes: 768 * 1024,
          maxInlineBodyBytes: 64 * 1024,
        },
        store: p.store,
        queue: p.queue,
        clock: p.clock,
      });
      expect(result.status).toBe('scheduled');
      const sent = shardsSent(p.queue);
      expect(sent.map((s) => s.message.shardId)).toEqual(['0-0', '0-1']);
      for (const { sent: raw, message } of sent) {
        expect(message.requests).toEqual([]);
        expect(message.requestsRef).toEqual({
          prefix: shardPartsPrefix('run-ref', 0, message.shardId),
          parts: Math.ceil(1500 / partRequests(2)),
          requests: 1500,
        });
        expect(Buffer.byteLength(raw.body)).toBeLessThan(1024);
      }
      for (const { sent: raw } of sent) {
        p.clock.advanceTo(raw.sentNs + BigInt(raw.delaySeconds) * SEC);
        expect((await handleShard(raw.body, p.deps)).action).toBe('fired');
      }
      expect(p.target.sent).toHaveLength(3000);
      const byId = new Map(rs.map((r) => [r.correlationId, r]));
      for (const f of p.target.sent)
        expect(Buffer.from(f.request.body).equals(Buffer.from(byId.get(f.request.correlationId)!.body))).toBe(true);
      expect(new Set(p.target.sent.map((f) => f.request.correlationId)).size).toBe(3000);
    },
  );

  it('a shard message with neither inline requests nor a reference, or with both, is refused', () => {
    const base = {
      v: 1,
      kind: 'shard',
      runId: 'r',
      target: 'A',
      shardId: '0-0',
      startNs: '1',
      firstDueNs: '1',
      hops: 0,
    };
    expect(shardMessageSchema.safeParse({ ...base, requests: [] }).success).toBe(false);
    expect(
      shardMessageSchema.safeParse({ ...base, requests: [], requestsRef: { prefix: 'work/r/', parts: 1, requests: 1 } })
        .success,
    ).toBe(true);
  });

  it('a part missing is retried (nothing claimed); a part that does not add up is refused', async () => {
    const p = pipeline();
    const message = {
      v: 1,
      kind: 'shard',
      runId: 'r',
      target: 'A',
      shardId: '0-0',
      startNs: String(S),
      firstDueNs: String(S),
      hops: 0,
      requests: [],
      requestsRef: { prefix: 'work/r/_shards/0/0-0/', parts: 1, requests: 2 },
    };
    await expect(handleShard(JSON.stringify(message), p.deps)).rejects.toThrow(/missing/);
    expect(await p.store.get('work/r/A/_claims/0-0')).toBeNull();
    await p.store.put('work/r/_shards/0/0-0/0', '[]', 'application/json');
    await expect(handleShard(JSON.stringify(message), p.deps)).rejects.toThrow(/hold 0 requests, the message says 2/);
  });
});

describe('the ramp of an event source scaling from idle', () => {
  /**
   * When each message is picked up by an event source that starts at 5 batches (idle, or scaled
   * back to what it runs) and adds `perMinute` (AWS's "up to 300" by default) while messages
   * wait, oldest first, nothing finishing meanwhile.
   */
  function pickups(deliveries: readonly number[], perMinute: number = EVENT_SOURCE_SCALING.addedPerMinute): number[] {
    const order = deliveries.map((_, i) => i).sort((a, b) => deliveries[a]! - deliveries[b]! || a - b);
    const out = new Array<number>(deliveries.length);
    const perMs = perMinute / 60_000;
    let level = EVENT_SOURCE_SCALING.initialBatches;
    let now = -Infinity;
    order.forEach((i, rank) => {
      if (deliveries[i]! > now) now = deliveries[i]!;
      while (rank + 1 > Math.floor(level + 1e-9)) {
        now += 10;
        level += 10 * perMs;
      }
      out[i] = now;
    });
    return out;
  }

  // 10,000/s in 120 s slots with 110 lanes for 2 targets: 220 messages due at each slot's start.
  const slotDues = (slot: number) => Array.from({ length: 220 }, (_, l) => slot * 120_000 + Math.floor(l / 2) * 0.1);
  const o = { leadMs: 20_000, batchSize: 1, maxLeadMs: 400_000 };

  it("delivers a slot's messages along the ramp: a source starting from 5 picks each one up by its due time minus the lead", () => {
    const dues = slotDues(0);
    const leads = rampLeads(
      dues,
      dues.map(() => 0),
      o,
    );
    const picked = pickups(dues.map((d, k) => d - leads[k]!));
    dues.forEach((d, k) => expect(picked[k]).toBeLessThanOrEqual(d - 20_000));
    // A source growing at half of AWS's ceiling, the planned ramp, is just as much on time.
    const slow = pickups(
      dues.map((d, k) => d - leads[k]!),
      PLANNED_RAMP_PER_MINUTE,
    );
    dues.forEach((d, k) => expect(slow[k]).toBeLessThanOrEqual(d - 20_000));
    // The slot's last message comes 2 s before the lead (the margin); the first 219 batches of the planned ramp earlier still.
    expect(leads.at(-1)).toBe(22_000);
    expect(Math.abs(Math.max(...leads) - (20_000 + (219 * 60_000) / PLANNED_RAMP_PER_MINUTE + 2000))).toBeLessThan(50);
    // Without the ramp, the same source picks the slot's last message ~43 s after its lead.
    const plain = pickups(dues.map((d) => d - 20_000));
    expect(plain.at(-1)! - (dues.at(-1)! - 20_000)).toBeGreaterThan(40_000);
  });

  it('ramps every slot the same way (the source may have scaled back between slots), and no more than it needs', () => {
    const dues = [0, 1, 2, 3].flatMap(slotDues);
    const leads = rampLeads(
      dues,
      dues.map((_, k) => Math.floor(k / 220)),
      o,
    );
    for (let slot = 1; slot < 4; slot++)
      expect([...leads.slice(slot * 220, slot * 220 + 220)]).toEqual([...leads.slice(0, 220)]);
    // Deliveries within a slot at most as fast as the planned ramp: what the slowest source planned for adds while they wait.
    const deliveries = dues.slice(0, 220).map((d, k) => d - leads[k]!);
    for (let k = 2; k < 219; k++)
      expect(deliveries[k + 1]! - deliveries[k]!).toBeGreaterThanOrEqual(60_000 / PLANNED_RAMP_PER_MINUTE - 1);
  });

  it('leaves the lead alone for a slot of five batches or fewer, and caps a lead at maxLeadMs', () => {
    expect([...rampLeads([0, 0, 120_000, 120_000], [0, 0, 1, 1], o)]).toEqual([20_000, 20_000, 20_000, 20_000]);
    const capped = rampLeads(
      Array.from({ length: 500 }, () => 0),
      Array.from({ length: 500 }, () => 0),
      { ...o, maxLeadMs: 60_000 },
    );
    expect(Math.max(...capped)).toBe(60_000);
    expect(Math.min(...capped)).toBe(22_000);
  });

  it(
    "dispatchRun: the ramp moves a file run's start so that its first messages can be sent on time; each " +
      'carries its lead; the fire stage keeps a message delivered early for its own lead',
    async () => {
      const p = pipeline();
      // 40 shards in one slot: 35 of them wait for the ramp (5 batches, then the planned ramp).
      const rs = requests(400, 1, 100);
      const result = await dispatchRun({
        runId: 'run-ramp',
        plan: { requests: rs, incompatible: [], excluded: {}, scheduleZeroMs: 0, durationMs: rs.at(-1)!.offsetMs },
        targets: ['A'],
        startNs: S + 20n * SEC,
        leadMs: 20_000,
        graceMs: 60_000,
        inputConfig: {},
        notScheduledByReason: {},
        sharding: { slotMs: 1000, maxShardRequests: 10, maxMessageBytes: 768 * 1024, maxInlineBodyBytes: 64 * 1024 },
        ramp: { batchSize: 1, maxLeadMs: 120_000 },
        startMoves: true,
        store: p.store,
        queue: p.queue,
        clock: p.clock,
      });
      if (result.status !== 'scheduled') throw new Error('not scheduled');
      const sent = shardsSent(p.queue);
      expect(sent).toHaveLength(40);
      // 39 batches of the planned ramp (15.6 s) + 2 s of margin before the 20 s lead, and the send allowance: the start moved ~20 s later.
      expect(Number(result.startNs - (S + 20n * SEC)) / 1e9).toBeGreaterThan(17);
      for (const { sent: raw, message } of sent) {
        const lead = message.leadMs ?? 20_000;
        const visibleNs = raw.sentNs + BigInt(raw.delaySeconds) * SEC;
        expect(visibleNs).toBeLessThanOrEqual(BigInt(message.firstDueNs) - BigInt(lead) * 1_000_000n);
        expect(visibleNs).toBeGreaterThanOrEqual(S);
      }
      const early = sent.find((s) => (s.message.leadMs ?? 0) > 25_000)!;
      p.clock.advanceTo(early.sent.sentNs + BigInt(early.sent.delaySeconds) * SEC);
      expect((await handleShard(early.sent.body, p.deps)).action).toBe('fired');
      // The same message without its lead is still early for the deployment's: sent on.
      const { leadMs: _, ...plain } = early.message;
      const fresh = pipeline();
      fresh.clock.advanceTo(early.sent.sentNs + BigInt(early.sent.delaySeconds) * SEC);
      expect((await handleShard(JSON.stringify({ ...plain, runId: 'other' }), fresh.deps)).action).toBe('deferred');
    },
  );
});
