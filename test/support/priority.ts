/**
 * CPU priorities of the test processes. The tiers that share the machine with the timing tier
 * run at the lowest priority, nice 19 (background-priority.ts, their setup file), which every
 * process they start inherits, so that the timing tier's processes, at the normal priority,
 * get a core as soon as they are ready to run (scripts/test-all.ts).
 *
 * A process started in a session of its own (`detached`: moto_server, cdk synth, Chromium) is
 * also in a scheduling group of its own when the kernel groups processes by session (autogroup,
 * /proc/sys/kernel/sched_autogroup_enabled): the kernel shares the CPU between groups first,
 * whatever their processes' nice values. So `npm test` starts each background check in a
 * session of its own with its group at nice 19, and matchPriority gives the group of a session
 * a test starts the nice of the test's worker: every background group then weighs the same,
 * far below the timing tier's group. (Were the background tiers in the timing tier's group,
 * that group would weigh as much as a normal session whatever its tasks' nice, and a lowered
 * moto_server or cdk synth, alone in its group, would get next to no CPU beside it.)
 */
import { readdirSync, writeFileSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';
import { procStatFields } from './proc-stat';

/** The lowest priority a process may give itself (no privilege needed to lower it). */
const LOWEST = 19;

/** This process, and what it starts from now on, at the lowest priority. */
export function lowerThisProcess(): void {
  try {
    setPriority(LOWEST);
  } catch {
    // A platform without priorities (or a sandbox refusing it): the tiers still run, unordered.
  }
}

/**
 * `pid`, a process in a session of its own, and its scheduling group (where the kernel groups
 * processes by session) at `nice`. Only lowering needs no privilege.
 */
export function setSessionPriority(pid: number, nice = LOWEST): void {
  try {
    setPriority(pid, nice);
    writeFileSync(`/proc/${pid}/autogroup`, String(nice));
  } catch {
    // No autogroup (another kernel or platform), or the process is gone: nothing to set.
  }
}

/** Gives `pid`, a process this one started in a session of its own, this process's priority, its group included. */
export function matchPriority(pid: number | undefined): void {
  const nice = getPriority();
  if (pid === undefined || nice === 0) return;
  setSessionPriority(pid, nice);
}

/**
 * matchPriority for this process's children started by a library in sessions of their own
 * (Playwright starts Chromium so): found in /proc by their parent and session.
 */
export function matchChildSessions(): void {
  if (getPriority() === 0) return;
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return; // no /proc: no autogroups either
  }
  for (const pid of pids) {
    try {
      const [, ppid, , session] = procStatFields(Number(pid));
      if (Number(ppid) === process.pid && session === pid) matchPriority(Number(pid));
    } catch {
      // gone meanwhile
    }
  }
}
