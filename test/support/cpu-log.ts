/**
 * A setup file of every tier (vitest.config.ts) that, when CR_CPU_LOG names a file, appends one
 * JSON line per test file: the CPU seconds its worker process used (user + system, from its start
 * or, in a worker that runs several files, since the file started) and those of the child
 * processes it waited for (a CLI, moto_server, cdk synth), the moto_servers the run's zygote
 * forked for it included (moto.ts adds theirs: adoptChildCpu). Vitest's own durations are wall time,
 * which says little on a machine shared with other work; CPU time says what a file costs.
 * Without CR_CPU_LOG it does nothing.
 */
import { appendFileSync } from 'node:fs';
import { afterAll } from 'vitest';
import { procStatFields } from './proc-stat';

const LOG = process.env.CR_CPU_LOG;
/** Linux's USER_HZ: /proc reports times in clock ticks of 1/100 s. */
const TICKS_PER_SECOND = 100;

/** [user, system, children's user, children's system] in seconds, from /proc/<pid>/stat. */
function cpuTimes(pid: number | 'self'): number[] {
  return procStatFields(pid)
    .slice(11, 15)
    .map((ticks) => Number(ticks) / TICKS_PER_SECOND);
}

/** CPU seconds of processes this file used that are not its children (forked moto_servers). */
let adopted = 0;

/** Counts `seconds` of another process's CPU as this file's children's. */
export function adoptChildCpu(seconds: number): void {
  adopted += seconds;
}

/** The CPU seconds (user + system) process `pid` has used so far; 0 when it is gone. */
export function processCpuSeconds(pid: number): number {
  try {
    const [user, sys] = cpuTimes(pid);
    return user! + sys!;
  } catch {
    return 0;
  }
}

if (LOG) {
  const state = (globalThis as { __vitest_worker__?: { filepath?: string; ctx?: { projectName?: string } } })
    .__vitest_worker__;
  const filesBefore = Number(process.env.CR_CPU_LOG_FILES ?? '0');
  const atStart = filesBefore > 0 ? cpuTimes('self') : [0, 0, 0, 0];
  process.env.CR_CPU_LOG_FILES = String(filesBefore + 1);
  afterAll(() => {
    const [user, sys, childUser, childSys] = cpuTimes('self').map((t, i) => t - atStart[i]!);
    const line = {
      file: state?.filepath,
      project: state?.ctx?.projectName,
      pid: process.pid,
      self: +(user! + sys!).toFixed(2),
      children: +(childUser! + childSys! + adopted).toFixed(2),
    };
    adopted = 0;
    appendFileSync(LOG, `${JSON.stringify(line)}\n`);
  });
}
