/**
 * Work in the gaps of a precise schedule (system-clock.ts ScheduleGaps): the CLI's clock makes
 * its scavenges there (full-gc.ts scavengeInGap), where no request is due.
 */
import { getHeapSpaceStatistics } from 'node:v8';
import { describe, expect, it } from 'vitest';
import { GAP_SCAVENGE_FILL, promoteYoungGeneration, scavengeInGap } from '../../../lambdas/adapters/full-gc';
import { createSystemClock } from '../../../lambdas/adapters/system-clock';
import { collectionsDuring, MINOR } from '../../support/gc-kinds';

describe('a precise wait with work for its gaps', () => {
  it('runs it while at least gapMs are left, at most once per gapMs, and is still on time', async () => {
    const gapNs: bigint[] = [];
    const gapClock = createSystemClock(undefined, 'precise', {
      gapMs: 4,
      inGap: () => gapNs.push(gapClock.nowNs()),
    });
    const due = gapClock.nowNs() + 40_000_000n;
    await gapClock.waitUntil(due);
    expect(gapClock.nowNs()).toBeGreaterThanOrEqual(due);
    expect(gapNs.length).toBeGreaterThanOrEqual(1);
    // Each at least 4 ms before the due time, and at least 4 ms after the one before.
    for (const [i, ns] of gapNs.entries()) {
      expect(due - ns).toBeGreaterThanOrEqual(4_000_000n);
      if (i > 0) expect(ns - (gapNs[i - 1] as bigint)).toBeGreaterThanOrEqual(4_000_000n);
    }
    // A wait shorter than the gap runs none.
    const before = gapNs.length;
    await new Promise((r) => setTimeout(r, 5));
    await gapClock.waitUntil(gapClock.nowNs() + 3_000_000n);
    expect(gapNs.length).toBe(before);
  });
});

describe('scavengeInGap', () => {
  const youngFill = () => {
    const young = getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
    return young ? young.space_used_size / (young.space_used_size + young.space_available_size) : 0;
  };
  const minorCollections = async (run: () => boolean) => {
    const { result, kinds } = await collectionsDuring(run);
    return { collected: result, minor: kinds.filter((k) => k === MINOR).length };
  };

  it('scavenges only when the young generation is at least GAP_SCAVENGE_FILL full', async () => {
    promoteYoungGeneration();
    expect(youngFill()).toBeLessThan(GAP_SCAVENGE_FILL);
    expect(await minorCollections(scavengeInGap)).toEqual({ collected: false, minor: 0 });
    // Fill it past the mark with live objects (short of V8's own trigger).
    const kept: number[][] = [];
    for (let i = 0; i < 1_000_000 && youngFill() < GAP_SCAVENGE_FILL + 0.1; i++) kept.push([i, i + 1, i + 2]);
    expect(youngFill()).toBeGreaterThanOrEqual(GAP_SCAVENGE_FILL);
    const filled = await minorCollections(scavengeInGap);
    expect(filled.collected).toBe(true);
    expect(filled.minor).toBeGreaterThanOrEqual(1);
    expect(kept.length).toBeGreaterThan(0);
  });
});
