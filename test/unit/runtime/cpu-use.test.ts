/**
 * A fire invocation's CPU against its share (lambdas/adapters/cpu-use.ts): the share is the
 * memory Lambda names over 1,769 MB, and most of the share is more than 80 % of it. The meter
 * itself: cpu-use-meter.test.ts (the timing project: it reads the process's CPU).
 */
import { describe, expect, it } from 'vitest';
import { CPU_WARN_SHARE, lambdaCpuShare, usedMostOfShare } from '../../../lambdas/adapters/cpu-use';

describe('the CPU a fire invocation used, against its share', () => {
  it("the share is Lambda's memory over 1,769 MB; none outside Lambda", () => {
    expect(lambdaCpuShare({ AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '1769' })).toBe(1);
    expect(lambdaCpuShare({ AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '1024' })).toBeCloseTo(0.579, 3);
    expect(lambdaCpuShare({})).toBeNull();
    expect(lambdaCpuShare({ AWS_LAMBDA_FUNCTION_MEMORY_SIZE: 'lots' })).toBeNull();
  });

  it('most of the share: more than 80 % of it; never without a share', () => {
    expect(CPU_WARN_SHARE).toBe(0.8);
    expect(usedMostOfShare({ vcpus: 0.5, seconds: 100 }, 0.58)).toBe(true);
    expect(usedMostOfShare({ vcpus: 0.46, seconds: 100 }, 0.58)).toBe(false);
    expect(usedMostOfShare({ vcpus: 3, seconds: 100 }, null)).toBe(false);
  });
});
