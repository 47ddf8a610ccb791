/**
 * The fire handler's own lateness is a measurement (sim/measured.ts): the simulator reads
 * bench/fire-lateness.json, picks the row of the stack's lane rate and target kind, and draws
 * from its quantiles; no hand-set number. A missing or malformed file is an error that says how
 * to make one.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  drawOwnLateness,
  MEASURED_FILE,
  ownLatenessOf,
  readMeasured,
  rowFor,
  type MeasuredFile,
  type MeasuredRow,
} from '../../../sim/measured';
import { settingsFor } from '../../../sim/settings';

const row = (o: Partial<MeasuredRow>): MeasuredRow => ({
  peak: 1000,
  protocol: 'sse',
  laneRate: 90.9,
  memoryMb: 1599,
  cpuShare: 0.9,
  scheduled: 10_000,
  p50: 0.3,
  p90: 1,
  p99: 4,
  p999: 20,
  max: 50,
  ...o,
});
const file = (rows: MeasuredRow[]): MeasuredFile => ({
  command: 'npm run bench:fire-lateness',
  commit: 'abc1234',
  date: '2026-12-07',
  conditions: 'test',
  rows,
});

describe('the measured fire lateness', () => {
  it('the committed file is the simulator’s input: settingsFor takes its row for the stack’s lane rate, and names it', () => {
    const measured = readMeasured(MEASURED_FILE);
    const { settings } = settingsFor({
      ratePerTarget: 10_000,
      targets: 2,
      seconds: 60,
      latencyP50S: 2,
      latencyP99S: 30,
    });
    const expected = rowFor(
      measured,
      10_000 / Math.ceil(10_000 / (settings.stack.maxShardRequests / settings.stack.slotS)),
      'sse',
    );
    expect(settings.handler.ownLateness).toEqual(ownLatenessOf(expected));
    expect(settings.handler.ownLatenessSource).toContain(measured.command);
    expect(settings.handler.ownLatenessMemoryMb).toBe(expected.memoryMb);
  });

  it('picks the nearest measured lane rate at or above the stack’s, the target kind’s rows, the slowest of them', () => {
    const f = file([
      row({ laneRate: 50, p99: 3 }),
      row({ laneRate: 90.9, p99: 4 }),
      row({ laneRate: 90.9, p99: 6, peak: 10_000 }),
      row({ laneRate: 90.9, protocol: 'sagemaker', p99: 9 }),
    ]);
    expect(rowFor(f, 40, 'sse').p99).toBe(3);
    expect(rowFor(f, 50, 'sse').p99).toBe(3);
    expect(rowFor(f, 66.7, 'sse').p99).toBe(6);
    expect(rowFor(f, 91, 'sse').p99, 'within 1 %: the same lane rate').toBe(6);
    expect(rowFor(f, 150, 'sse').p99, 'above every measured rate: the highest').toBe(6);
    expect(rowFor(f, 90.9, 'sagemaker').p99).toBe(9);
    expect(rowFor(f, 90.9, 'grpc').p99, 'a kind not measured: every row').toBe(9);
  });

  it('draws through the quantiles: the median at 0.5, p99 at 0.99, the maximum at the top, linear between', () => {
    const o = ownLatenessOf(row({}));
    expect(drawOwnLateness(o, 0)).toBe(0);
    expect(drawOwnLateness(o, 0.25)).toBeCloseTo(0.15, 10);
    expect(drawOwnLateness(o, 0.5)).toBeCloseTo(0.3, 10);
    expect(drawOwnLateness(o, 0.99)).toBeCloseTo(4, 10);
    expect(drawOwnLateness(o, 0.9995)).toBeCloseTo(35, 6);
    expect(drawOwnLateness(o, 1)).toBe(50);
  });

  it('a missing or malformed file is an error naming the file and the command that makes it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cr-measured-'));
    expect(() => readMeasured(join(dir, 'none.json'))).toThrow(
      /cannot be read.*npm run bench:fire-lateness -- --write/,
    );
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ ...file([row({})]), rows: [{ peak: 'many' }] }));
    expect(() => readMeasured(bad)).toThrow(/bad\.json: rows\.0\.peak/);
  });
});
