/**
 * A fire invocation's CPU against what Lambda gives it. Lambda gives a function CPU in
 * proportion to its memory, as a quota (runtime/limits.ts ONE_VCPU_MB): an invocation that uses
 * its share up waits, and its requests due meanwhile go out late. The stack sizes the memory so
 * that a lane uses a part of it (lib/sizing.ts); a target that streams faster than declared
 * uses more, and the fire handler says so rather than let the lateness go unexplained.
 */
import { ONE_VCPU_MB } from '../runtime/limits';

/** Above this part of its share on average, an invocation is said to have used most of its CPU. */
export const CPU_WARN_SHARE = 0.8;

export interface CpuUse {
  /** CPU seconds a second of wall time over the stretch: vCPUs. */
  vcpus: number;
  seconds: number;
}

/** Starts measuring the process's CPU; the function returned ends the stretch and gives its use. */
export function startCpuMeter(): () => CpuUse {
  const cpu = process.cpuUsage();
  const wall = performance.now();
  return () => {
    const used = process.cpuUsage(cpu);
    const seconds = (performance.now() - wall) / 1000;
    return { vcpus: seconds > 0 ? (used.user + used.system) / 1e6 / seconds : 0, seconds };
  };
}

/** The function's CPU share (vCPUs) from its memory as Lambda tells it (AWS_LAMBDA_FUNCTION_MEMORY_SIZE); null outside Lambda. */
export function lambdaCpuShare(env: NodeJS.ProcessEnv = process.env): number | null {
  const mb = Number(env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE);
  return Number.isFinite(mb) && mb > 0 ? mb / ONE_VCPU_MB : null;
}

/** True when `use` took more than CPU_WARN_SHARE of `share` (never outside Lambda, where there is no share). */
export const usedMostOfShare = (use: CpuUse, share: number | null): boolean =>
  share !== null && use.vcpus > CPU_WARN_SHARE * share;
