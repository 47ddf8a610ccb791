/**
 * The fire handler's own lateness, as measured: bench/fire-lateness.json, written by
 * `npm run bench:fire-lateness -- --write bench/fire-lateness.json` (the synthesized fire bundle
 * in its memory's CPU share, at the lane rate the sizing assigns to a peak, against an
 * independent server streaming LLM-shaped answers; the file names its command, commit, date and
 * conditions). The simulator draws each request's own lateness from the row measured at the
 * lane rate nearest above the simulated stack's (the slowest target kind of that rate), by
 * linear interpolation between the measured quantiles: the least (0), p50, p90, p99, p99.9,
 * and the maximum at the most. Nothing here is a guess: a missing or malformed file is an error.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';

export const MEASURED_FILE = fileURLToPath(new URL('../bench/fire-lateness.json', import.meta.url));

const rowSchema = z.object({
  peak: z.number().positive(),
  protocol: z.string(),
  laneRate: z.number().positive(),
  memoryMb: z.number().positive(),
  cpuShare: z.number().positive().nullable(),
  scheduled: z.number().int().nonnegative(),
  p50: z.number().nonnegative(),
  p90: z.number().nonnegative(),
  p99: z.number().nonnegative(),
  p999: z.number().nonnegative(),
  max: z.number().nonnegative(),
});
const fileSchema = z.object({
  command: z.string(),
  commit: z.string(),
  date: z.string(),
  conditions: z.string(),
  rows: z.array(rowSchema).min(1),
});

export type MeasuredRow = z.infer<typeof rowSchema>;
export type MeasuredFile = z.infer<typeof fileSchema>;

/** The fire handler's own lateness (ms) at the quantiles the benchmark gives. */
export interface OwnLateness {
  /** The least: 0 as measured (lateness is counted from the run's smallest, the loopback's). */
  minMs: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  p999Ms: number;
  maxMs: number;
}

export function readMeasured(path: string = MEASURED_FILE): MeasuredFile {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new Error(
      `the fire handler's measured lateness (${path}) cannot be read: ` +
        `${error instanceof Error ? error.message : String(error)}; run npm run bench:fire-lateness -- --write ${path}`,
    );
  }
  const parsed = fileSchema.safeParse(json);
  if (!parsed.success)
    throw new Error(
      `${path}: ${parsed.error.issues[0]?.path.join('.') ?? ''}: ${parsed.error.issues[0]?.message ?? 'invalid'}`,
    );
  return parsed.data;
}

/**
 * The row for a stack whose lanes send `laneRate` requests/s to targets spoken to as `protocol`:
 * that protocol's rows (every row when none is), the nearest measured rate at or above it (else
 * the highest), the slowest of those.
 */
export function rowFor(file: MeasuredFile, laneRate: number, protocol: string): MeasuredRow {
  const own = file.rows.filter((r) => r.protocol === protocol);
  const rows = own.length > 0 ? own : file.rows;
  const rates = [...new Set(rows.map((r) => r.laneRate))].sort((a, b) => a - b);
  // Rates within 1 % are the same lane rate (the sizing divides a peak among whole lanes).
  const rate = rates.find((r) => r >= laneRate * 0.99) ?? (rates.at(-1) as number);
  const candidates = rows.filter((r) => r.laneRate === rate);
  return candidates.reduce((worst, r) => (r.p99 > worst.p99 || (r.p99 === worst.p99 && r.max > worst.max) ? r : worst));
}

export const ownLatenessOf = (row: MeasuredRow): OwnLateness => ({
  minMs: 0,
  p50Ms: row.p50,
  p90Ms: row.p90,
  p99Ms: row.p99,
  p999Ms: row.p999,
  maxMs: row.max,
});

/** What the row is, for the report: where the figures come from. */
export function describeRow(file: MeasuredFile, row: MeasuredRow): string {
  return (
    `measured: ${row.protocol} at ${row.laneRate.toFixed(1)} requests/s per lane, ${row.memoryMb} MB ` +
    `(${row.cpuShare === null ? 'no CPU quota' : `${row.cpuShare.toFixed(2)} vCPU`}), ${row.scheduled} ` +
    `requests, ${file.date}, commit ${file.commit} (${file.command})`
  );
}

const QUANTILES = [0, 0.5, 0.9, 0.99, 0.999, 1] as const;

/** A draw from the measured quantiles: `u` uniform in [0, 1) mapped through the piecewise-linear inverse CDF. */
export function drawOwnLateness(o: OwnLateness, u: number): number {
  const values = [o.minMs, o.p50Ms, o.p90Ms, o.p99Ms, o.p999Ms, o.maxMs];
  for (let i = 1; i < QUANTILES.length; i++) {
    const hi = QUANTILES[i] as number;
    if (u <= hi) {
      const lo = QUANTILES[i - 1] as number;
      const a = values[i - 1] as number;
      const b = values[i] as number;
      return a + ((b - a) * (u - lo)) / (hi - lo);
    }
  }
  return o.maxMs;
}
