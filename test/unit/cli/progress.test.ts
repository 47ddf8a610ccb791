/**
 * The replay's progress bar fits the terminal: the line laid out for the width (progressLine),
 * and the real cli-progress bar written to a terminal-like stream of 40, 80 and 200 columns,
 * every line it draws within the width.
 */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { Progress, progressLine } from '../../../lambdas/local/replay/progress';
import type { FireOutcome } from '../../../lambdas/core/types';

const counts = { done: 12_345, total: 40_000, failed: 17, dropped: 3, etaSeconds: 754 };

describe('progressLine', () => {
  it('at 80 columns: everything, within 79', () => {
    const line = progressLine(80, counts);
    expect(line.length).toBeLessThanOrEqual(79);
    expect(line).toMatch(/^replay \|=+-+\| 12345\/40000 requests \| 17 failed \| 3 dropped \| ETA 12m34s$/);
  });

  it.each([20, 30, 40, 50, 60, 100, 200])('at %i columns: within the width, the counts kept', (width) => {
    const line = progressLine(width, counts);
    expect(line.length).toBeLessThanOrEqual(width - 1);
    expect(line).toContain('12345/40000');
  });

  it('at 40 columns keeps a bar and the failed and dropped counts', () => {
    const line = progressLine(40, counts);
    expect(line).toMatch(/^\|[=-]{5,}\| 12345\/40000 \| 17 fail \| 3 drop$/);
  });

  it('the bar is as full as the run', () => {
    const line = progressLine(80, { ...counts, done: 20_000, etaSeconds: null });
    const bar = /\|([=-]+)\|/.exec(line)![1]!;
    expect(bar.split('=').length - 1).toBe(Math.round(bar.length / 2));
    expect(line).toMatch(/ETA --$/);
  });
});

/** A stream that says it is a terminal of `columns` columns, and keeps what is written. */
function terminal(columns: number) {
  const stream = Object.assign(new PassThrough(), {
    isTTY: true,
    columns,
    cursorTo: () => true,
    clearLine: () => true,
    clearScreenDown: () => true,
    moveCursor: () => true,
  });
  let text = '';
  stream.on('data', (chunk: Buffer) => (text += chunk.toString()));
  return { stream, written: () => text };
}

const outcome = (error: boolean): FireOutcome =>
  ({ result: error ? { error: { code: 500 } } : { error: null } }) as unknown as FireOutcome;

describe('the bar on a terminal', () => {
  it.each([40, 80, 200])('never draws a line wider than %i columns', (columns) => {
    const { stream, written } = terminal(columns);
    const progress = new Progress(true, stream);
    progress.start(40_000);
    for (let i = 0; i < 12_345; i++) progress.tick(outcome(i % 1000 === 0));
    progress.stop();
    const lines = written()
      // eslint-disable-next-line no-control-regex
      .replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '\n')
      .split(/[\r\n]/)
      .filter((l) => l.length > 0);
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.some((l) => l.includes('/40000'))).toBe(true);
    for (const line of lines) expect(line.length).toBeLessThan(columns);
  });
});
