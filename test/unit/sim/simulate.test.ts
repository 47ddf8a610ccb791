/**
 * Whole simulated runs: what must hold when nothing is in the way, and what the AWS rules do
 * when they are in the way (the event source's ramp from idle, cold starts and their INIT bill,
 * throttling, provisioned pollers). Each expectation fails if its rule were left out.
 */
import { describe, expect, it } from 'vitest';
import { simulate } from '../../../sim/engine';
import { report, type SimReport } from '../../../sim/report';
import { applyOverrides, settingsFor, type SimOptions } from '../../../sim/settings';
import { deployable } from '../../../sim/stack-check';

function sim(o: SimOptions, overrides: string[] = []): SimReport {
  const { settings, problems } = settingsFor(o);
  const d = deployable(applyOverrides(settings, overrides), problems);
  return report(simulate(d.settings), d.problems, 0);
}

describe('200 requests/s to two targets, fast responses', () => {
  const o: SimOptions = { ratePerTarget: 200, targets: 2, seconds: 60, latencyP50S: 0.01, latencyP99S: 0.01 };
  const r = sim(o);

  it('fires every request once, on time: nothing expired, lost or throttled', () => {
    expect(r.stack.deployable).toBe(true);
    expect(r.fired).toBe(24_000);
    expect([r.expired, r.late_dropped, r.lost, r.throttled, r.timeouts, r.duplicates]).toEqual([0, 0, 0, 0, 0, 0]);
    // Lateness is the handler's own (p99 2.6 ms by default): the lead covers delivery and cold starts.
    expect(r.lateness_ms.p99).toBeLessThan(5);
    expect(r.lateness_ms.over_tolerance).toBe(0);
  });

  it('counts the calls the handlers make: a claim and a results PUT per shard and target, a shard message per shard and target', () => {
    expect(r.stack.shards).toBe(60);
    expect(r.calls.sqs_shard_messages_sent).toBe(120);
    expect(r.calls.s3_put).toBeGreaterThanOrEqual(2 * 120);
    expect(r.calls.lambda_invocations.fire).toBeGreaterThanOrEqual(120 / r.stack.batch_size);
    expect(r.cost_per_million_usd).toBeGreaterThan(0);
  });

  it("the targets' messages of a shard, sent together with one delay, share a batch; with 1 s of delivery jitter they rarely do", () => {
    expect(r.calls.lambda_invocations.fire).toBe(60);
    const jittered = sim(o, ['aws.sqs.delayJitterMaxMs=1000']);
    expect(jittered.calls.lambda_invocations.fire).toBeGreaterThan(110);
    expect(jittered.calls.sqs_requests).toBeGreaterThan(r.calls.sqs_requests);
  });

  it('is deterministic per seed, and another seed draws other numbers', () => {
    const again = sim(o);
    expect({ ...again, simulation: { ...again.simulation, wall_ms: 0 } }).toEqual({ ...r, simulation: { ...r.simulation, wall_ms: 0 } });
    expect(sim({ ...o, seed: 2 }).lateness_ms.max).not.toBe(r.lateness_ms.max);
  });
});

describe('the event source ramps up from idle', () => {
  // 5,000/s to two targets with a 5 s lead: 40 shards a second, each holding an invocation
  // ~7 s, ~280 at once; an idle event source starts at 5 and adds 5 a second.
  const o: SimOptions = { ratePerTarget: 5000, targets: 2, seconds: 40, latencyP50S: 0.5, latencyP99S: 1, leadSeconds: 5, peakLatencySeconds: 1 };

  const idle = sim({ ...o, idleBeforeMinutes: 60 });
  const warm = sim({ ...o, idleBeforeMinutes: 0 });

  it('after an hour idle shards are late; the same run on a warm event source is on time', () => {
    expect(idle.stack.deployable).toBe(true);
    expect(idle.lateness_ms.max).toBeGreaterThan(1000);
    expect(warm.lateness_ms.max).toBeLessThan(100);
    expect(idle.calls.cold_starts.fire).toBeGreaterThan(0);
    expect(warm.calls.cold_starts.fire).toBe(0);
  });

  it('bills INIT only for cold starts', () => {
    expect(idle.calls.init_gb_s).toBeGreaterThan(0);
    expect(idle.cost_usd.lambda_init).toBeGreaterThan(0);
    expect(warm.calls.init_gb_s).toBe(0);
  });

  it('provisioned pollers start at 10 invokes each and add 1,000 a minute: with 10 the p99 is on time, with 30 (300 ready) nothing is late; the pollers are billed', () => {
    const provisioned = (min: number) => sim({ ...o, idleBeforeMinutes: 60 }, ['stack.eventSourceMode=provisioned', 'stack.fire.maxConcurrency=null', `stack.minPollers=${min}`]);
    const ten = provisioned(10);
    expect(ten.stack.deployable).toBe(true);
    expect(idle.lateness_ms.p99).toBeGreaterThan(1000);
    expect(ten.lateness_ms.p99).toBeLessThan(10);
    expect(provisioned(30).lateness_ms.max).toBeLessThan(100);
    expect(ten.cost_usd.event_pollers).toBeGreaterThan(0);
    expect(ten.idle_monthly_usd.min_pollers_usd).toBeGreaterThan(0);
  });
});

describe('10,000 requests/s to two targets with a 1 s lead, after an hour idle', () => {
  it('requests are late or expired: the ramp and the concurrency cap are in the way', () => {
    const r = sim({ ratePerTarget: 10_000, targets: 2, seconds: 20, latencyP50S: 2, latencyP99S: 30, leadSeconds: 1 });
    expect(r.stack.deployable).toBe(false);
    expect(r.expired + r.lateness_ms.over_tolerance).toBeGreaterThan(0);
    expect(r.lateness_ms.p99).toBeGreaterThan(1000);
  });
});

describe('throttling', () => {
  it('a reserved concurrency below the event source maximum throttles; throttled shards come back a visibility timeout later, expired', () => {
    const r = sim({ ratePerTarget: 1000, targets: 2, seconds: 60, latencyP50S: 0.5, latencyP99S: 1, idleBeforeMinutes: 0 }, ['stack.fire.reservedConcurrency=10']);
    expect(r.throttled).toBeGreaterThan(0);
    expect(r.throttled_shard_messages).toBeGreaterThan(0);
    expect(r.peak_concurrency).toBe(10);
    expect(r.expired).toBeGreaterThan(0);
  });
});
