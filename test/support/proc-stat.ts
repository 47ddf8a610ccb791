import { readFileSync } from 'node:fs';

/**
 * The fields of /proc/<pid>/stat after the command name (which may hold spaces and
 * parentheses): [0] is the state (field 3 of proc(5)), [1] the parent's pid, [3] the session,
 * [11]-[14] utime, stime, cutime, cstime in clock ticks. Throws when the process is gone.
 */
export function procStatFields(pid: number | 'self'): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}
