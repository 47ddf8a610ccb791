/**
 * A fire invocation's CPU against its share (lambdas/adapters/cpu-use.ts): the meter reads the
 * process's CPU over a stretch (a busy loop is near one vCPU, a sleep near none), the share is
 * the memory Lambda names over 1,769 MB, and most of the share is more than 80 % of it.
 */
import { describe, expect, it } from 'vitest';
import { CPU_WARN_SHARE, lambdaCpuShare, startCpuMeter, usedMostOfShare } from '../../../lambdas/adapters/cpu-use';

describe('the CPU a fire invocation used, against its share', () => {
  it('a busy loop reads as CPU, a sleep does not', async () => {
    const busy = startCpuMeter();
    const until = performance.now() + 150;
    let x = 0;
    while (performance.now() < until) x += Math.sqrt(x + 1);
    const spun = busy();
    expect(x).toBeGreaterThan(0);
    // Near one vCPU (less when the machine shares the core; a busy loop never uses two).
    expect(spun.vcpus).toBeGreaterThan(0.3);
    expect(spun.vcpus).toBeLessThan(1.5);
    const idle = startCpuMeter();
    await new Promise((r) => setTimeout(r, 150));
    expect(idle().vcpus).toBeLessThan(0.2);
  });

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
