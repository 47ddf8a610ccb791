/**
 * A 24-hour schedule through the real schedule/fire/collect stages on virtual time: every
 * SQS delay stays within 0-900 s (the memory queue rejects anything else), each shard
 * reaches its due time through deferral hops, and each request fires exactly on time.
 */
import { describe, expect, it } from 'vitest';
import { MemoryObjectStore } from '../../../lambdas/adapters/local/memory-store';
import { MemoryQueue } from '../../../lambdas/adapters/local/memory-queue';
import { runFireLoop } from '../../../lambdas/core/fire/fire-loop';
import {
  collectRun,
  handleCollect,
  handleShard,
  dispatchRun,
  type HandleShardDeps,
} from '../../../lambdas/core/pipeline/stages';
import { PermanentError } from '../../../lambdas/core/errors';
import { FakeTarget, VirtualClock } from '../../support/virtual-clock';
import { scheduledRequest } from '../../support/fixtures';

const S = 1_800_000_000_000_000_000n;
const MS = 1_000_000n;
const START = S + 30_000n * MS; // offset 0 is due 30 s after scheduling

const req = (index: number, offsetMs: number) => scheduledRequest(index, offsetMs);

function setup() {
  const clock = new VirtualClock(S);
  const store = new MemoryObjectStore();
  const queue = new MemoryQueue(() => clock.nowNs());
  const target = new FakeTarget('A', clock, () => ({ latencyMs: 50 }));
  const deps: HandleShardDeps = {
    store,
    queue,
    clock,
    leadMs: 20_000,
    claimLeaseMs: 900_000,
    workerId: 'w',
    fire: (requests, m, onOutcome) =>
      runFireLoop(requests, { runId: m.runId, target, clock, startNs: BigInt(m.startNs), workerId: 'w', onOutcome }),
  };
  return { clock, store, queue, target, deps };
}

describe('a 24-hour run', () => {
  it('fires every request on time after the expected number of deferral hops', async () => {
    const p = setup();
    // One request every 30 minutes, k = 0..48 (the last exactly 24 h in).
    const offsets = Array.from({ length: 49 }, (_, k) => k * 1_800_000);
    await dispatchRun({
      runId: 'day',
      plan: {
        requests: offsets.map((o, i) => req(i, o)),
        incompatible: [],
        excluded: {},
        scheduleZeroMs: 0,
        durationMs: offsets.at(-1)!,
      },
      targets: ['A'],
      startNs: START,
      leadMs: 20_000,
      graceMs: 60_000,
      inputConfig: null,
      notScheduledByReason: {},
      store: p.store,
      queue: p.queue,
      clock: p.clock,
    });
    let sends = p.queue.messages.length;
    const actions: Record<string, number> = {};
    for (let next = p.queue.nextDueNs(); next !== null; next = p.queue.nextDueNs()) {
      p.clock.advanceTo(next);
      for (const m of p.queue.takeDue(p.clock.nowNs())) {
        const before = p.queue.messages.length;
        const { action } = await handleShard(m.body, p.deps);
        actions[action] = (actions[action] ?? 0) + 1;
        sends += p.queue.messages.length - before;
      }
    }
    // Shard k is due 30 s + 1,800k s away; minus the 20 s lead that is 10 + 1,800k s of
    // delay, in 900 s steps: ceil((10 + 1800k) / 900) = 2k + 1 sends, 2k of them re-delays.
    // Re-delays: 2 * (0 + 1 + ... + 48) = 2 * 1,176 = 2,352; sends: 49 + 2,352 = 2,401.
    expect(actions).toEqual({ fired: 49, deferred: 2352 });
    expect(sends).toBe(2401);
    expect(p.target.sent.map((s) => Number((s.atNs - START) / MS))).toEqual(offsets);
    expect((await collectRun('day', 'A', p)).manifest).toMatchObject({
      scheduled: 49,
      succeeded: 49,
      dropped: 0,
      balanced: true,
    });
  });
});

describe('unreadable messages', () => {
  it.each(['', 'not json', '{"v":1,'])('a body of %j is a permanent error for both stages', async (raw) => {
    const p = setup();
    await expect(handleShard(raw, p.deps)).rejects.toThrow(PermanentError);
    await expect(handleCollect(raw, p)).rejects.toThrow(/not a collect message: body is not JSON/);
  });
});
