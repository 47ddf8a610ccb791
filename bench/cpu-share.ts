/**
 * Lambda's CPU share for a process of this machine: Lambda gives a function CPU in proportion to
 * its memory, one vCPU at 1,769 MB (https://docs.aws.amazon.com/lambda/latest/dg/configuration-memory.html),
 * and each execution environment has its own. Here each invocation's process runs in a CPU
 * control group of its own whose CFS quota is that share of every period: cgroup v1's
 * `cpu.cfs_quota_us` / `cpu.cfs_period_us`, or cgroup v2's `cpu.max`, whichever is mounted and
 * writable (as root). Where neither is, `openCpuShares` says why and the caller skips.
 *
 * A group's `cpu.stat` says how often the quota ran out (`nr_throttled` of `nr_periods`) and for
 * how long in all (`throttled_time` ns, v1; `throttled_usec`, v2).
 */
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The CFS period: the kernel's default. Lambda's own is not documented. */
export const PERIOD_US = 100_000;
const ONE_VCPU_MB = 1769;

export interface ThrottleStats {
  periods: number;
  throttled: number;
  throttledMs: number;
}

export interface CpuGroup {
  /** The command that runs `argv` inside the group: the shell joins the group, then execs. */
  wrap(argv: readonly string[]): { command: string; args: string[] };
  stats(): ThrottleStats;
  remove(): void;
}

export interface CpuShares {
  /** The share of one vCPU a function of `memoryMb` gets. */
  shareOf(memoryMb: number): number;
  /** A new group with `share` vCPUs' quota per period (null: no quota, only accounting). */
  group(name: string, share: number | null): CpuGroup;
  /** Removes every group made. */
  close(): void;
  describe: string;
}

const V1 = '/sys/fs/cgroup/cpu';
const V2 = '/sys/fs/cgroup';

function writable(dir: string): boolean {
  const probe = join(dir, `cr-probe-${process.pid}`);
  try {
    mkdirSync(probe);
    rmdirSync(probe);
    return true;
  } catch {
    return false;
  }
}

/** The control groups of this machine, or why there are none to use. */
export function openCpuShares(root = `cr-bench-${process.pid}`): CpuShares | string {
  let base: string;
  let v2: boolean;
  if (existsSync(join(V1, 'cpu.cfs_quota_us')) && writable(V1)) {
    base = join(V1, root);
    v2 = false;
  } else if (
    existsSync(join(V2, 'cgroup.controllers')) &&
    readFileSync(join(V2, 'cgroup.controllers'), 'utf8').includes('cpu') &&
    writable(V2)
  ) {
    base = join(V2, root);
    v2 = true;
    // v2 delegates the cpu controller to children only where the parent's subtree_control says so.
    try {
      writeFileSync(join(V2, 'cgroup.subtree_control'), '+cpu');
    } catch {
      return 'cgroup v2 is mounted but its cpu controller cannot be enabled for children (cgroup.subtree_control)';
    }
  } else {
    return (
      'no writable cgroup cpu controller (cgroup v1 /sys/fs/cgroup/cpu or v2 /sys/fs/cgroup with cpu): run as ' +
      'root on a machine that has one'
    );
  }
  mkdirSync(base, { recursive: true });
  if (v2) writeFileSync(join(base, 'cgroup.subtree_control'), '+cpu');
  // Each execution environment has its share to itself: the benchmark's groups weigh eight
  // times a process outside them, so other work on the machine does not take it.
  writeFileSync(join(base, v2 ? 'cpu.weight' : 'cpu.shares'), v2 ? '800' : '8192');
  const made: string[] = [];
  return {
    describe: `${v2 ? 'cgroup v2 cpu.max' : 'cgroup v1 cpu.cfs_quota_us'}, period ${PERIOD_US / 1000} ms`,
    shareOf: (memoryMb) => memoryMb / ONE_VCPU_MB,
    group(name, share) {
      const dir = join(base, name);
      mkdirSync(dir, { recursive: true });
      made.push(dir);
      const quota = share === null ? null : Math.max(1000, Math.round(share * PERIOD_US));
      if (v2) writeFileSync(join(dir, 'cpu.max'), `${quota ?? 'max'} ${PERIOD_US}`);
      else {
        writeFileSync(join(dir, 'cpu.cfs_period_us'), String(PERIOD_US));
        writeFileSync(join(dir, 'cpu.cfs_quota_us'), String(quota ?? -1));
      }
      const procs = join(dir, 'cgroup.procs');
      return {
        wrap: (argv) => ({ command: '/bin/sh', args: ['-c', `echo $$ > '${procs}' && exec "$@"`, 'sh', ...argv] }),
        stats() {
          const fields = Object.fromEntries(
            readFileSync(join(dir, 'cpu.stat'), 'utf8')
              .trim()
              .split('\n')
              .map((l) => l.split(' ') as [string, string])
              .map(([k, v]) => [k, Number(v)]),
          );
          return {
            periods: fields.nr_periods ?? 0,
            throttled: fields.nr_throttled ?? 0,
            throttledMs: v2 ? (fields.throttled_usec ?? 0) / 1000 : (fields.throttled_time ?? 0) / 1e6,
          };
        },
        remove() {
          try {
            rmdirSync(dir);
          } catch {
            // a process still in it: close() tries again
          }
        },
      };
    },
    close() {
      for (const dir of [...made, base]) {
        try {
          rmdirSync(dir);
        } catch {
          // already gone, or a process is still in it (the kernel removes nothing in use)
        }
      }
    },
  };
}
