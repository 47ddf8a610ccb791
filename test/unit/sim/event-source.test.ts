/**
 * The SQS event source's scaling rules (sim/aws/event-source.ts): 5 batches from idle, +300 a
 * minute while messages wait, capped by MaximumConcurrency, back to 5 after a quiet spell; in
 * provisioned mode the minimum pollers' 10 invokes each from the start, +1,000 a minute, and
 * 1 MB/s per poller.
 */
import { describe, expect, it } from 'vitest';
import { EventSourceScaler, type EventSourceConfig } from '../../../sim/aws/event-source';
import { settingsFor } from '../../../sim/settings';

const { settings } = settingsFor({ ratePerTarget: 200, targets: 2, seconds: 60, latencyP50S: 0.01, latencyP99S: 0.01 });
const standard = (maxConcurrency: number | null): EventSourceConfig => ({
  mode: 'standard',
  maxConcurrency,
  minPollers: 2,
  maxPollers: 200,
  esm: settings.aws.esm,
  provisioned: settings.aws.provisioned,
});

/** Concurrency after `seconds` of messages waiting all along, looked at every 100 ms. */
function rampFor(scaler: EventSourceScaler, seconds: number, from = 0): number {
  for (let t = from; t <= from + seconds * 1000; t += 100) scaler.advance(t, true, scaler.concurrency);
  return scaler.concurrency;
}

describe('standard mode', () => {
  it('starts an idle event source at 5 batches and adds 300 a minute while messages wait', () => {
    const scaler = new EventSourceScaler(standard(1000), false);
    expect(scaler.concurrency).toBe(5);
    expect(rampFor(scaler, 60)).toBe(305);
    expect(rampFor(scaler, 60, 60_000)).toBe(605);
  });

  it('stops at MaximumConcurrency, and at the event source ceiling without it', () => {
    expect(rampFor(new EventSourceScaler(standard(123), false), 120)).toBe(123);
    expect(rampFor(new EventSourceScaler(standard(null), false), 600)).toBe(settings.aws.esm.maxConcurrency);
  });

  it('does not grow while nothing waits', () => {
    const scaler = new EventSourceScaler(standard(1000), false);
    for (let t = 0; t <= 60_000; t += 100) scaler.advance(t, false, 0);
    expect(scaler.concurrency).toBe(5);
  });

  it('steps back to 5 after the quiet spell, not before', () => {
    const scaler = new EventSourceScaler(standard(1000), false);
    rampFor(scaler, 60);
    const quietFrom = 60_100;
    scaler.advance(quietFrom, false, 0);
    scaler.advance(quietFrom + settings.aws.esm.scaleDownAfterS * 1000 - 1, false, 0);
    expect(scaler.concurrency).toBe(305);
    scaler.advance(quietFrom + settings.aws.esm.scaleDownAfterS * 1000, false, 0);
    expect(scaler.concurrency).toBe(5);
  });

  it('a warm event source (a run shortly after another) starts at its ceiling', () => {
    expect(new EventSourceScaler(standard(400), true).concurrency).toBe(400);
  });

  it('idle: 5 pollers with MaximumConcurrency, 2 without, one long poll each per 20 s', () => {
    const month = 30 * 24 * 3600;
    expect(new EventSourceScaler(standard(400), false).idlePollsPerMonth()).toBe((5 * month) / 20);
    expect(new EventSourceScaler(standard(null), false).idlePollsPerMonth()).toBe((2 * month) / 20);
  });
});

describe('provisioned mode', () => {
  const provisioned: EventSourceConfig = { ...standard(null), mode: 'provisioned', minPollers: 10, maxPollers: 300 };

  it('starts at the minimum pollers x 10 invokes even after idle, and adds 1,000 a minute', () => {
    const scaler = new EventSourceScaler(provisioned, false);
    expect(scaler.concurrency).toBe(100);
    expect(scaler.pollers).toBe(10);
    expect(rampFor(scaler, 60)).toBe(1100);
    expect(scaler.pollers).toBe(110);
    expect(rampFor(scaler, 600, 60_000)).toBe(3000);
  });

  it('moves 1 MB/s per poller: ten 1 MB batches through 10 pollers take a second', () => {
    const scaler = new EventSourceScaler(provisioned, false);
    let last = 0;
    for (let i = 0; i < 10; i++) last = scaler.handOver(0, 1_000_000);
    expect(last).toBeCloseTo(1000, 6);
    expect(new EventSourceScaler(standard(10), false).handOver(0, 10_000_000)).toBe(settings.aws.esm.pickupMs);
  });

  it('bills poller time (EPU-seconds)', () => {
    const scaler = new EventSourceScaler(provisioned, false);
    scaler.advance(3_600_000, false, 0);
    expect(scaler.pollerSeconds).toBeCloseTo(10 * 3600, 6);
    expect(scaler.idlePollsPerMonth()).toBe((10 * 30 * 24 * 3600) / 20);
  });
});
