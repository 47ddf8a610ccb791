/**
 * Files shared by the test files of one `vitest run`. Each test file runs in a process of its
 * own, forked by the one vitest process: its pid (our parent's) names what the run shares, in
 * the temporary folder. What runs that have ended left behind is removed by the next.
 */
import { readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** The path of `name` (a prefix such as `cr-shared-synth-`) for this run. */
export function runSharedPath(name: string): string {
  return join(tmpdir(), `${name}${process.ppid}`);
}

/** Removes the `name` files and folders of runs that have ended. */
export function removeEndedRuns(name: string): void {
  for (const entry of readdirSync(tmpdir())) {
    const pid = Number(entry.startsWith(name) ? entry.slice(name.length) : NaN);
    if (Number.isInteger(pid) && pid !== process.ppid && !isAlive(pid)) rmSync(join(tmpdir(), entry), { recursive: true, force: true });
  }
}
