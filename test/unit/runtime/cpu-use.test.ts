/**
 * A fire invocation's CPU against its share (lambdas/adapters/cpu-use.ts): the meter reads the
 * process's CPU over a stretch (a busy loop uses it, a sleep does not), the share is
 * the memory Lambda names over 1,769 MB, and most of the share is more than 80 % of it.
 */
import { describe, expect, it } from 'vitest';
import { CPU_WARN_SHARE, lambdaCpuShare, startCpuMeter, usedMostOfShare } from '../../../lambdas/adapters/cpu-use';

describe('the CPU a fire invocation used, against its share', () => {
  it('a busy loop reads as CPU, a sleep does not (in CPU seconds: it holds however loaded the machine)', async () => {
    const busy = startCpuMeter();
    // Spin until the process has used 100 ms of CPU (at most 10 s of wall time on a machine shared with other work).
    const from = process.cpuUsage();
    const giveUp = performance.now() + 10_000;
    let x = 0;
    while (performance.now() < giveUp) {
      for (let i = 0; i < 10_000; i++) x += Math.sqrt(x + i);
      const used = process.cpuUsage(from);
      if (used.user + used.system >= 100_000) break;
    }
    const spun = busy();
    expect(x).toBeGreaterThan(0);
    const cpuSeconds = spun.vcpus * spun.seconds;
    expect(cpuSeconds).toBeGreaterThanOrEqual(0.1);
    // One thread spinning: never more CPU than wall time (a little slack for the process's other threads).
    expect(spun.vcpus).toBeLessThan(1.5);
    // The quietest of three sleeps: this file shares its process with others, whose leftovers
    // (a collection, a closing server) can land in any one window; a meter that counted wall
    // time would read 0.15 s in all three.
    const sleptCpu: number[] = [];
    for (let i = 0; i < 3; i++) {
      const idle = startCpuMeter();
      await new Promise((r) => setTimeout(r, 150));
      const slept = idle();
      sleptCpu.push(slept.vcpus * slept.seconds);
    }
    expect(Math.min(...sleptCpu)).toBeLessThan(0.05);
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
