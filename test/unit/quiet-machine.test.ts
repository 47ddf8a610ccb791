/** scripts/quiet-machine.ts: the wait before `npm test`'s quiet tier. */
import { describe, expect, it } from 'vitest';
import { cpuJiffies, waitForQuietMachine } from '../../scripts/quiet-machine';

/** A /proc/stat whose cpu line has `busy` and `idle` jiffies (user and idle fields). */
const stat = (busy: number, idle: number) => `cpu  ${busy} 0 0 ${idle} 0 0 0 0 0 0\ncpu0 1 2 3 4 5 6 7 8 9 10\n`;

describe('waitForQuietMachine', () => {
  it('reads idle (with iowait) and total jiffies from the first line', () => {
    expect(cpuJiffies('cpu  10 1 2 100 5 0 0 0 0 0\n')).toEqual([105, 118]);
  });

  it('waits out busy windows and returns at the first quiet one', async () => {
    // Windows: 90 % busy, 60 % busy, then 5 % busy.
    const samples = [stat(0, 0), stat(90, 10), stat(150, 50), stat(155, 145)];
    const settled = await waitForQuietMachine({ windowMs: 1, timeoutMs: 10_000, readStat: () => samples.shift()! });
    expect(settled).toMatchObject({ quiet: true, idle: 0.95 });
    expect(samples).toEqual([]);
  });

  it('gives up at its time limit, saying the machine is still busy', async () => {
    let busy = 0;
    const settled = await waitForQuietMachine({ windowMs: 5, timeoutMs: 30, readStat: () => stat((busy += 100), 0) });
    expect(settled).toMatchObject({ quiet: false, idle: 0 });
    expect(settled!.waitedMs).toBeGreaterThanOrEqual(30);
  });
});
