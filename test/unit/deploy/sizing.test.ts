/**
 * The fire function's sizing (lib/sizing.ts) at 50, 1,000 and 10,000 requests/s to two targets
 * with LLM-like responses (median 2 s, p99 30 s, the configuration's defaults): lanes within
 * what one invocation's connections and vCPU hold, the slot, memory, timeout and the concurrency
 * the peak needs; at 10,000/s a default account takes it (lib/concurrency.ts, no clamp). The
 * response-time arithmetic behind it (lib/response-tail.ts) against a Monte Carlo of the same
 * lognormal.
 */
import { describe, expect, it } from 'vitest';
import { concurrencyProblems, DEFAULT_ACCOUNT_CONCURRENCY } from '../../../lib/concurrency';
import { DeploymentConfigError, parseDeploymentConfig } from '../../../lib/config';
import { responseTail } from '../../../lib/response-tail';
import {
  CONNECTION_USE,
  DEFAULT_STREAM_TOKENS_PER_SECOND,
  deriveFireSizing,
  FIRE_CPU_MS,
  FIRE_CPU_USE,
  fireCpuMsPerRequest,
  fireSizingOf,
  MAX_FIRE_MEMORY_MB,
  MIN_FIRE_MEMORY_MB,
  ONE_VCPU_MB,
} from '../../../lib/sizing';
import { Rng } from '../../../sim/random';

const base = {
  peakLatencySeconds: 30,
  peakLatencyMedianSeconds: 2,
  targets: 2,
  leadSeconds: 20,
  requestTimeoutSeconds: 300,
};
const responses = { medianSeconds: 2, p99Seconds: 30, timeoutSeconds: 300 };

describe('fire sizing from the declared peak', () => {
  it.each([
    [50, { lanesPerSlot: 1, maxConcurrency: 8 }],
    [1000, { lanesPerSlot: 11, maxConcurrency: 71 }],
    [10_000, { lanesPerSlot: 110, maxConcurrency: 650 }],
  ])('%i requests/s to two targets', (peak, want) => {
    const s = deriveFireSizing({ ...base, peakRequestsPerSecond: peak });
    expect(s).toMatchObject({ ...want, slotSeconds: 120, batchSize: 1, connectionsPerTarget: 450 });
    // A lane's requests in flight (its rate x the mean response) within 80 % of its connections.
    expect(s.laneRequestsPerSecond * s.meanResponseSeconds).toBeLessThanOrEqual(
      CONNECTION_USE * s.connectionsPerTarget,
    );
    expect(s.lanesPerSlot * s.laneRequestsPerSecond).toBeGreaterThanOrEqual(peak);
    expect(s.maxShardRequests).toBe(s.laneRequestsPerSecond * s.slotSeconds);
    // Memory: the lane's CPU (its rate x a request's: FIRE_CPU_MS with the tokens of a mean response) at FIRE_CPU_USE
    // of the share, at least 1,024 MB.
    const rate = Math.min(peak / s.lanesPerSlot, s.laneRequestsPerSecond);
    const cpuMs =
      FIRE_CPU_MS.http.perRequest +
      FIRE_CPU_MS.http.perToken * DEFAULT_STREAM_TOKENS_PER_SECOND * responseTail(responses).meanSeconds;
    expect(s.memoryMb).toBe(
      Math.max(MIN_FIRE_MEMORY_MB, Math.ceil((ONE_VCPU_MB * rate * cpuMs) / 1000 / FIRE_CPU_USE)),
    );
    expect(s.laneVcpus / (s.memoryMb / ONE_VCPU_MB)).toBeLessThanOrEqual(FIRE_CPU_USE);
    // The timeout holds the longest lead (the ramp's), the slot, the request timeout and 30 s.
    expect(s.maxLeadSeconds).toBe(20 + s.rampSeconds);
    expect(s.timeoutSeconds).toBe(Math.min(900, 20 + s.rampSeconds + 120 + 300 + 30));
    expect(s.visibilityTimeoutSeconds).toBe(s.timeoutSeconds + 60);
    // The concurrency covers at least every lane of the slots an invocation lives through on average.
    expect(s.maxConcurrency).toBeGreaterThanOrEqual(
      Math.floor((2 * s.lanesPerSlot * s.invocationSeconds) / s.slotSeconds),
    );
  });

  it(
    'memory for CPU: more for SageMaker targets (their token costs more) and for faster streams; the lane ' +
      'always within FIRE_CPU_USE of its share',
    () => {
      const at = (kinds: ('http' | 'sagemaker')[], tokens: number) =>
        deriveFireSizing({ ...base, peakRequestsPerSecond: 10_000, targetKinds: kinds, streamTokensPerSecond: tokens });
      const http = at(['http', 'http'], 30);
      const sagemaker = at(['sagemaker', 'sagemaker'], 30);
      const mixed = at(['http', 'sagemaker'], 30);
      const fast = at(['http', 'http'], 120);
      expect(sagemaker.memoryMb).toBeGreaterThan(http.memoryMb);
      expect(mixed.memoryMb, 'the costliest kind sizes the function').toBe(sagemaker.memoryMb);
      expect(fast.memoryMb).toBeGreaterThan(http.memoryMb);
      for (const s of [http, sagemaker, fast])
        expect(s.laneVcpus / (s.memoryMb / ONE_VCPU_MB)).toBeLessThanOrEqual(FIRE_CPU_USE + 1e-3);
      // The measured case: 91 requests/s with a 3.94 s mean response at 30 tokens/s needs more than the 1,024 MB floor (0.58 vCPU).
      expect(http.memoryMb).toBeGreaterThan(1024);
      expect(sagemaker.cpuMsPerRequest).toBeCloseTo(
        fireCpuMsPerRequest(['sagemaker'], 30, sagemaker.meanResponseSeconds),
        1,
      );
    },
  );

  it('a stream too fast for the largest function lowers the lane rate instead: more lanes, each within its CPU', () => {
    const s = deriveFireSizing({
      ...base,
      peakRequestsPerSecond: 10_000,
      streamTokensPerSecond: 2000,
      targetKinds: ['sagemaker'],
    });
    expect(s.memoryMb).toBeLessThanOrEqual(MAX_FIRE_MEMORY_MB);
    expect(s.laneVcpus / (s.memoryMb / ONE_VCPU_MB)).toBeLessThanOrEqual(FIRE_CPU_USE + 1e-3);
    expect(s.lanesPerSlot).toBeGreaterThan(deriveFireSizing({ ...base, peakRequestsPerSecond: 10_000 }).lanesPerSlot);
  });

  it('at 10,000/s to two targets a default account takes the stack as sized, reserved and all: no clamp', () => {
    const config = parseDeploymentConfig({
      peakRequestsPerSecond: 10_000,
      targets: [
        { name: 'A', url: 'https://a.example.com' },
        { name: 'B', url: 'https://b.example.com' },
      ],
    });
    const s = fireSizingOf(config);
    expect(s.maxConcurrency).toBeLessThanOrEqual(DEFAULT_ACCOUNT_CONCURRENCY - 100);
    expect(
      concurrencyProblems({
        fireConcurrency: s.maxConcurrency,
        fireSource: 'peakRequestsPerSecond',
        reserveFire: true,
        accountConcurrency: DEFAULT_ACCOUNT_CONCURRENCY,
        ingest: true,
        plan: false,
        peak: { requestsPerSecond: 10_000, targets: 2 },
      }),
    ).toEqual([]);
    // The same traffic with 30 s median responses needs more than the account has, and the configuration says so.
    expect(() =>
      parseDeploymentConfig({
        peakRequestsPerSecond: 10_000,
        peakLatencyMedianSeconds: 30,
        peakLatencySeconds: 120,
        targets: config.targets,
      }),
    ).toThrow(/accountConcurrency/);
  });

  it(
    "derives the slot from what the 15 minutes leave after the lead, the ramp of the peak's lanes and the " +
      'request timeout: 120 s by default, shorter when they leave less; a slot set is kept',
    () => {
      // 100/s to two targets: 4 lanes, no ramp. A 600 s request timeout leaves 120 s; a 200 s lead with it 70 s.
      expect(deriveFireSizing({ ...base, peakRequestsPerSecond: 100, requestTimeoutSeconds: 600 }).slotSeconds).toBe(
        120,
      );
      expect(
        deriveFireSizing({ ...base, peakRequestsPerSecond: 100, leadSeconds: 200, requestTimeoutSeconds: 600 })
          .slotSeconds,
      ).toBe(900 - 30 - 200 - 600);
      // 10,000/s to two targets: 220 lanes, whose ramp comes out of the same 15 minutes, and the timeout holds it.
      const s = deriveFireSizing({
        ...base,
        peakRequestsPerSecond: 10_000,
        leadSeconds: 100,
        requestTimeoutSeconds: 600,
      });
      expect(s.rampSeconds).toBeGreaterThan(0);
      expect(s.slotSeconds).toBe(900 - 30 - 100 - s.rampSeconds - 600);
      expect(s.timeoutSeconds).toBe(900);
      expect(s.maxLeadSeconds).toBe(100 + s.rampSeconds);
      expect(deriveFireSizing({ ...base, peakRequestsPerSecond: 100, slotSeconds: 1 }).slotSeconds).toBe(1);
    },
  );

  it('refuses a median above the 99th percentile', () => {
    expect(() => parseDeploymentConfig({ peakLatencySeconds: 1 })).toThrow(DeploymentConfigError);
    expect(() => parseDeploymentConfig({ peakLatencySeconds: 1 })).toThrow(
      /peakLatencyMedianSeconds: the median \(2 s\) is above/,
    );
  });
});

describe('response times (lib/response-tail.ts) against a Monte Carlo of the same lognormal', () => {
  const rng = new Rng(7);
  const draw = () =>
    Math.min(responses.timeoutSeconds, rng.lognormal({ mu: Math.log(2), sigma: Math.log(15) / 2.3263478740408408 }));

  it('the mean response', () => {
    let sum = 0;
    const n = 400_000;
    for (let i = 0; i < n; i++) sum += draw();
    expect(responseTail(responses).meanSeconds).toBeCloseTo(sum / n, 1);
  });

  it.each([
    [91, 120],
    [10, 30],
  ])(
    'a lane of %i requests/s through %i s: the expected wait after the slot for its slowest response',
    (rate, slot) => {
      const lanes = 300;
      let sum = 0;
      for (let l = 0; l < lanes; l++) {
        let end = 0;
        for (let k = 0; k < rate * slot; k++) end = Math.max(end, k / rate + draw());
        sum += Math.max(0, end - slot);
      }
      const mc = sum / lanes;
      expect(Math.abs(responseTail(responses).expectedTailSeconds(rate, slot) - mc) / mc).toBeLessThan(0.08);
    },
  );
});
