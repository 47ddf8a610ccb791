/**
 * The ramp's margin. AWS documents that an SQS event source adds "up to" 300 concurrent
 * invocations a minute while messages wait: a ceiling, not a promise. The stack's sizing
 * (lib/sizing.ts) and the schedulers' leads (sqs-delay.ts rampLeads, with the longest lead the
 * fire function's timeout leaves: run-input.ts schedulingOf) must hold a slot's lanes on time
 * for a source that grows at half of it. For each traffic below, a slot's messages (every lane
 * of every target due at the slot's start, the worst case) are delivered as rampLeads says,
 * and an event source that starts from 5 batches (idle, or scaled back between slots) and grows
 * at 150 a minute only while messages wait must have picked up every one by its due time minus
 * the lead: the lead is left whole for cold starts.
 */
import { describe, expect, it } from 'vitest';
import { parseDeploymentConfig } from '../../../lib/config';
import { fireSizingOf } from '../../../lib/sizing';
import { EVENT_SOURCE_SCALING, rampLeads } from '../../../lambdas/core/pipeline/sqs-delay';
import { schedulingOf } from '../../../lambdas/handlers/run-input';

/** Half of AWS's documented "up to 300 more concurrent invokes per minute". */
const HALF_THE_CEILING = EVENT_SOURCE_SCALING.addedPerMinute / 2;

/**
 * When an event source that starts at 5 batches and adds `perMinute` while a message waits
 * picks up each delivery (ms): oldest first, one batch a message, none finishing meanwhile.
 */
function pickups(deliveries: readonly number[], perMinute: number): number[] {
  const order = deliveries.map((_, i) => i).sort((a, b) => deliveries[a]! - deliveries[b]! || a - b);
  const msPerBatch = 60_000 / perMinute;
  const out = new Array<number>(deliveries.length);
  let level = EVENT_SOURCE_SCALING.initialBatches;
  let now = -Infinity;
  order.forEach((i, rank) => {
    now = Math.max(now, deliveries[i]!);
    if (rank + 1 > level) {
      now += (rank + 1 - level) * msPerBatch;
      level = rank + 1;
    }
    out[i] = now;
  });
  return out;
}

const target = (name: string) => ({ name, url: `https://${name}.example.com` });

describe("the stack's ramp holds its lanes on time for an event source growing at half of AWS's ceiling", () => {
  it.each([
    { peak: 50, targets: 1 },
    { peak: 1000, targets: 2 },
    { peak: 5000, targets: 2 },
    { peak: 10_000, targets: 1 },
    { peak: 10_000, targets: 2 },
    { peak: 10_000, targets: 2, leadSeconds: 5 },
    { peak: 10_000, targets: 2, requestTimeoutSeconds: 600 },
    { peak: 6000, targets: 2, peakLatencyMedianSeconds: 4 },
  ])('$peak requests/s to $targets target(s) %#', ({ peak, targets, ...rest }) => {
    const config = parseDeploymentConfig({
      peakRequestsPerSecond: peak,
      targets: Array.from({ length: targets }, (_, i) => target(`t${i}`)),
      ...rest,
    });
    const sizing = fireSizingOf(config);
    const leadMs = config.leadSeconds * 1000;
    const slotMs = sizing.slotSeconds * 1000;
    const { ramp } = schedulingOf({
      slotMs,
      maxShardRequests: sizing.maxShardRequests,
      fireTimeoutMs: sizing.timeoutSeconds * 1000,
      requestTimeoutMs: config.requestTimeoutSeconds * 1000,
      leadMs,
    });
    if (!ramp) throw new Error('the stack delivers along a ramp');
    // Two slots, each with every lane of every target due at its start.
    const lanes = sizing.lanesPerSlot * targets;
    const dues = [0, 1].flatMap((slot) => Array.from({ length: lanes }, () => slot * slotMs));
    const leads = rampLeads(
      dues,
      dues.map((_, k) => Math.floor(k / lanes)),
      { leadMs, ...ramp },
    );
    for (const slot of [0, 1]) {
      const at = dues.slice(slot * lanes, (slot + 1) * lanes);
      const delivered = at.map((due, k) => due - leads[slot * lanes + k]!);
      for (const perMinute of [HALF_THE_CEILING, EVENT_SOURCE_SCALING.addedPerMinute]) {
        const picked = pickups(delivered, perMinute);
        const worst = Math.max(...picked.map((p, k) => p - (at[k]! - leadMs)));
        expect(
          worst,
          `${perMinute} a minute: the latest lane picked up ${worst} ms after its due time minus the lead`,
        ).toBeLessThanOrEqual(0);
      }
    }
    // The longest lead fits what the fire function's timeout leaves after the slot and the request timeout.
    expect(Math.max(...leads)).toBeLessThanOrEqual(ramp.maxLeadMs);
    expect(sizing.timeoutSeconds).toBeLessThanOrEqual(900);
  });
});
