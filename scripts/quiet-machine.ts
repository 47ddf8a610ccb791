/**
 * Before `npm test`'s quiet tier: wait until the machine is quiet, its CPUs mostly idle over a
 * window, so that what the tiers before it started and what is still ending (a vitest's
 * workers, the browsers and servers of its files) does not share the cores with the files that
 * need them to themselves. Linux: /proc/stat; elsewhere, no wait.
 */
import { existsSync, readFileSync } from 'node:fs';

/** [idle, total] jiffies of all CPUs, from /proc/stat's first line (idle counts iowait too). */
export function cpuJiffies(stat: string): [number, number] {
  const fields = (stat.split('\n')[0] ?? '').trim().split(/\s+/).slice(1, 9).map(Number);
  const idle = (fields[3] ?? 0) + (fields[4] ?? 0);
  return [idle, fields.reduce((a, b) => a + b, 0)];
}

export interface Settled {
  /** Whether a window reached the idle share before the time limit. */
  quiet: boolean;
  waitedMs: number;
  /** The idle share of the last window. */
  idle: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits (up to `timeoutMs`) for a `windowMs` window in which the CPUs were at least `idleShare` idle. */
export async function waitForQuietMachine(
  o: { idleShare?: number; windowMs?: number; timeoutMs?: number; readStat?: () => string } = {},
): Promise<Settled | null> {
  const readStat = o.readStat ?? (() => readFileSync('/proc/stat', 'utf8'));
  if (!o.readStat && !existsSync('/proc/stat')) return null;
  const [idleShare, windowMs, timeoutMs] = [o.idleShare ?? 0.85, o.windowMs ?? 1000, o.timeoutMs ?? 30_000];
  const started = Date.now();
  let [idle0, total0] = cpuJiffies(readStat());
  for (;;) {
    await sleep(windowMs);
    const [idle1, total1] = cpuJiffies(readStat());
    const idle = total1 > total0 ? (idle1 - idle0) / (total1 - total0) : 1;
    const waitedMs = Date.now() - started;
    if (idle >= idleShare || waitedMs >= timeoutMs) return { quiet: idle >= idleShare, waitedMs, idle };
    [idle0, total0] = [idle1, total1];
  }
}
