/**
 * The CPU meter of a fire invocation (lambdas/adapters/cpu-use.ts) reads the process's CPU over a
 * stretch: a busy loop uses it, a sleep does not. In the timing project: it reads the whole
 * process's CPU, which other files sharing the process would add to.
 */
import { describe, expect, it } from 'vitest';
import { startCpuMeter } from '../../../lambdas/adapters/cpu-use';

describe('the CPU meter of a fire invocation', () => {
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
    const idle = startCpuMeter();
    await new Promise((r) => setTimeout(r, 150));
    const slept = idle();
    expect(slept.vcpus * slept.seconds).toBeLessThan(0.05);
  });
});
