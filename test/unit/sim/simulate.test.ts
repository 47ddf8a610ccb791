/**
 * Whole simulated runs: what must hold when nothing is in the way, and what the AWS rules do
 * when they are in the way (the event source's ramp from idle, cold starts and their INIT bill,
 * throttling, provisioned pollers). Each expectation fails if its rule were left out.
 */
import { describe, expect, it } from 'vitest';
import { simulate } from '../../../sim/engine';
import { report, type SimReport } from '../../../sim/report';
import { applyOverrides } from '../../../sim/overrides';
import { settingsFor, type SimOptions } from '../../../sim/settings';
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
    // Lateness is the handler's own (measured: bench/fire-lateness.json): the lead covers delivery and cold starts.
    expect(r.lateness_ms.p99).toBeLessThanOrEqual(r.handler_lateness_ms.p99Ms * 1.1 + 0.5);
    expect(r.lateness_ms.over_tolerance).toBe(0);
  });

  it(
    'counts the calls the handlers make: a claim and a results PUT per shard and target, a shard message per ' +
      'shard and target, one lane a batch',
    () => {
      // 60 s at 200/s in one 120 s slot: 3 lanes a target (91/s each at most), by reference.
      expect(r.stack.shards).toBe(3);
      expect(r.calls.sqs_shard_messages_sent).toBe(6);
      expect(r.calls.s3_put).toBeGreaterThanOrEqual(2 * 6);
      expect(r.calls.lambda_invocations.fire).toBe(6);
      expect(r.cost_per_million_usd).toBeGreaterThan(0);
    },
  );

  it(
    "messages that become visible together share a batch (here two lanes' messages a batch of 2); with 1 s of " +
      'delivery jitter they rarely do',
    () => {
      const paired = sim(o, ['stack.fire.batchSize=2']);
      expect(paired.calls.lambda_invocations.fire).toBe(3);
      const jittered = sim(o, ['stack.fire.batchSize=2', 'aws.sqs.delayJitterMaxMs=1000']);
      expect(jittered.calls.lambda_invocations.fire).toBeGreaterThan(3);
    },
  );

  it('is deterministic per seed, and another seed draws other numbers', () => {
    const again = sim(o);
    expect({ ...again, simulation: { ...again.simulation, wall_ms: 0 } }).toEqual({
      ...r,
      simulation: { ...r.simulation, wall_ms: 0 },
    });
    expect(sim({ ...o, seed: 2 }).lateness_ms.max).not.toBe(r.lateness_ms.max);
  });
});

describe('the event source ramps up from idle', () => {
  // 10,000/s to two targets for 40 s: one 120 s slot, 110 lanes a target, 220 shard messages
  // due at once; an idle event source starts at 5 batches and adds 5 a second while messages wait.
  const o: SimOptions = { ratePerTarget: 10_000, targets: 2, seconds: 40, latencyP50S: 2, latencyP99S: 30 };
  const idle = sim({ ...o, idleBeforeMinutes: 60 });
  const idleNoRamp = sim({ ...o, idleBeforeMinutes: 60 }, ['stack.ramp=false']);
  const warmNoRamp = sim({ ...o, idleBeforeMinutes: 0 }, ['stack.ramp=false']);

  it('without the ramp, after an hour idle the last lanes wait ~43 s for the source to grow: late; on a warm source on time', () => {
    expect(idleNoRamp.stack.deployable).toBe(true);
    expect(idleNoRamp.lateness_ms.max).toBeGreaterThan(15_000);
    expect(warmNoRamp.lateness_ms.max).toBeLessThan(200);
    expect(idleNoRamp.calls.cold_starts.fire).toBeGreaterThan(0);
    expect(warmNoRamp.calls.cold_starts.fire).toBe(0);
  });

  it("with the ramp (the stack's default), the same idle run is on time: each lane delivered when the source can take it", () => {
    expect(idle.lateness_ms.max).toBeLessThan(200);
    expect(idle.ingest.ramped_messages).toBe(220);
    expect(idle.ingest.max_lead_s).toBeGreaterThan(60);
  });

  it('bills INIT only for cold starts', () => {
    expect(idleNoRamp.calls.init_gb_s).toBeGreaterThan(0);
    expect(idleNoRamp.cost_usd.lambda_init).toBeGreaterThan(0);
    expect(warmNoRamp.calls.init_gb_s).toBe(0);
  });

  it(
    'provisioned pollers start at 10 invokes each and add 1,000 a minute: without the ramp, 100 ready put the ' +
      'last lanes ~7 s behind (within a 20 s lead, not a 5 s one), 300 ready none; the pollers are billed',
    () => {
      const provisioned = (min: number, extra: Partial<SimOptions> = {}) =>
        sim({ ...o, idleBeforeMinutes: 60, ...extra }, [
          'stack.ramp=false',
          'stack.eventSourceMode=provisioned',
          'stack.fire.maxConcurrency=null',
          `stack.minPollers=${min}`,
        ]);
      const ten = provisioned(10);
      expect(ten.stack.deployable).toBe(true);
      expect(ten.lateness_ms.max).toBeLessThan(200);
      expect(provisioned(10, { leadSeconds: 5 }).lateness_ms.max).toBeGreaterThan(1000);
      expect(provisioned(30, { leadSeconds: 5 }).lateness_ms.max).toBeLessThan(200);
      expect(ten.cost_usd.event_pollers).toBeGreaterThan(0);
      expect(ten.idle_monthly_usd.min_pollers_usd).toBeGreaterThan(0);
    },
  );
});

describe("issue 19's goal: 10,000 requests/s to two targets after an hour idle, on the stack's defaults", () => {
  // Two 120 s slots (the full goal run is 600 s: docs/simulator.md): each slot's 220 lanes are
  // delivered along the ramp (the source may have scaled back between slots), while the first
  // slot's lanes still wait for their slowest responses.
  const r = sim({
    ratePerTarget: 10_000,
    targets: 2,
    seconds: 240,
    latencyP50S: 2,
    latencyP99S: 30,
    idleBeforeMinutes: 60,
  });

  it('a default account takes the stack, and nothing is late beyond the handler, expired, lost or throttled', () => {
    expect(r.stack.deployable).toBe(true);
    expect(r.stack.reserved_concurrency).toBeLessThanOrEqual(900);
    expect(r.fired).toBe(4_800_000);
    expect([r.expired, r.late_dropped, r.lost, r.throttled, r.timeouts, r.duplicates]).toEqual([0, 0, 0, 0, 0, 0]);
    // At the fire handler's own p99 (measured: bench/fire-lateness.json), within 10 %: the lead absorbed the rest.
    expect(r.handler_lateness_ms.measured_memory_matches).toBe(true);
    expect(r.lateness_ms.p99).toBeLessThanOrEqual(r.handler_lateness_ms.p99Ms * 1.1 + 0.5);
    expect(r.lateness_ms.over_tolerance).toBe(0);
    expect(r.ingest.ramped_messages).toBe(440);
  });

  it('stays within its reserve, and under $2 per million', () => {
    expect(r.peak_concurrency).toBeLessThanOrEqual(r.stack.reserved_concurrency as number);
    expect(r.cost_per_million_usd).toBeLessThan(2);
  });
});

describe("the ramp with margin: the same run with the event source growing at half of AWS's ceiling", () => {
  // AWS documents "up to" 300 more concurrent invocations a minute; the schedulers plan each
  // slot's deliveries for half of it (sqs-delay.ts PLANNED_RAMP_PER_MINUTE). Leads planned for
  // 300 left the last lanes of the first slot up to ~22 s late at 150 (docs/simulator.md, "The goal").
  const r = sim(
    { ratePerTarget: 10_000, targets: 2, seconds: 240, latencyP50S: 2, latencyP99S: 30, idleBeforeMinutes: 60 },
    ['aws.esm.growthPerMinute=150'],
  );

  it(
    'at 150 a minute nothing is more than 5 s late, expired, lost or throttled; within 900 concurrent ' +
      'invocations and $2 per million',
    () => {
      expect(r.stack.deployable).toBe(true);
      expect(r.fired).toBe(4_800_000);
      expect(r.lateness_ms.over_tolerance).toBe(0);
      expect(r.lateness_ms.max).toBeLessThan(5000);
      expect([r.expired, r.late_dropped, r.lost, r.throttled, r.timeouts]).toEqual([0, 0, 0, 0, 0]);
      expect(r.peak_concurrency).toBeLessThanOrEqual(900);
      expect(r.cost_per_million_usd).toBeLessThan(2);
    },
  );
});

describe('throttling', () => {
  it(
    'a reserved concurrency below the event source maximum throttles; throttled shards come back a visibility ' +
      'timeout later, expired',
    () => {
      // 1,000/s: 11 lanes a target, 22 shard messages due together; 10 may run.
      const r = sim(
        { ratePerTarget: 1000, targets: 2, seconds: 60, latencyP50S: 2, latencyP99S: 30, idleBeforeMinutes: 0 },
        ['stack.fire.reservedConcurrency=10'],
      );
      expect(r.throttled).toBeGreaterThan(0);
      expect(r.throttled_shard_messages).toBeGreaterThan(0);
      expect(r.peak_concurrency).toBe(10);
      expect(r.expired).toBeGreaterThan(0);
    },
  );
});
