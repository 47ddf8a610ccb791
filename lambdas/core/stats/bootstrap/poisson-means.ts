/**
 * The Poisson bootstrap's means (from POISSON_BOOTSTRAP_FROM units on): one fused pass over
 * the units for all metrics and both sides, three units at a time.
 */
import type { Rng } from '../rng';
import { tripleOverflow, tripleRefine, TRIPLE, TRIPLE_OVERFLOW } from './poisson-triples';

/** Same finite/non-finite pattern? */
export function samePattern(x: Float64Array, y: Float64Array): boolean {
  for (let i = 0; i < x.length; i++)
    if (Number.isFinite(x[i] as number) !== Number.isFinite(y[i] as number)) return false;
  return true;
}

export interface WeightedSums {
  /** [resample * C + column]: sum of weight x value over the units where the column is finite. */
  sums: Float64Array;
  C: number;
  /** Per column: the index in `sums` of its weight total (its units' weights summed). */
  weightColumn: Int32Array;
  /** Per resample: the total weight of all units. */
  totals: Float64Array;
}

/**
 * Weighted sums of several columns (metrics, sides) under the same Poisson(1) unit weights:
 * the Poisson bootstrap's means, in one pass over the units for all resamples.
 *
 * The units go three by three: a triple's weights are one of 125 codes (plus a rare
 * overflow), so for each triple of a block of units the weighted sums of all 125 codes are
 * tabulated once, and a resample then costs one table row per triple and column instead of
 * three multiply-adds ("method of four Russians"), and one 16-bit draw per triple. A block's
 * tables (at most 16 triples, ~200 KB for 12 columns) stay in cache while every resample sweeps them.
 * A column with non-finite values gets an indicator column (shared with the previous column
 * when the pattern is the same) whose weighted sum is that column's weight total.
 */
export function poissonWeightedSums(columns: readonly Float64Array[], n: number, R: number, rng: Rng): WeightedSums {
  const { source, weightColumn } = sumSources(columns);
  const C = Math.ceil(source.length / 6) * 6;
  const sums = new Float64Array(R * C);
  const totals = new Float64Array(R);
  const G = Math.max(2, Math.min(16, Math.floor(400_000 / (125 * C * 8)))); // triples per block
  const block: Block = {
    C,
    groups: 0,
    padding: 0,
    table: new Float64Array(G * 125 * C),
    xb: new Float64Array(3 * G * C),
    codes: new Uint8Array(G + 1),
    overflowWeights: [0, 0, 0],
  };
  const draw = { flags: 0 };
  for (let start = 0; start < n; start += 3 * G) {
    const units = Math.min(n - start, 3 * G);
    block.groups = Math.ceil(units / 3);
    block.padding = 3 * block.groups - units; // zero units in the last triple: their weights are not counted
    loadBlock(block, columns, source, start, units);
    tabulateBlock(block);
    for (let r = 0; r < R; r++) {
      let t = drawCodes(rng, block.codes, block.groups, draw);
      // Rare (an overflow or a straddling prefix in about 1 % of triples), or the last block.
      if (draw.flags & TRIPLE_OVERFLOW || block.padding > 0) t = settleCodes(block, rng, sums, r, t);
      totals[r] = (totals[r] as number) + t;
      addRows(block, sums, r);
    }
  }
  return { sums, C, weightColumn, totals };
}

/** A column of `sums`: a column's values, or the 1/0 indicator of where they are finite. */
interface SumSource {
  column: number;
  indicator: boolean;
}

/**
 * The columns summed: every input column, then an indicator column for each input column with
 * non-finite values (shared with the previous column when the pattern is the same).
 */
function sumSources(columns: readonly Float64Array[]): { source: SumSource[]; weightColumn: Int32Array } {
  const weightColumn = new Int32Array(columns.length).fill(-1);
  const source: SumSource[] = columns.map((_, m) => ({ column: m, indicator: false }));
  columns.forEach((col, m) => {
    if (!col.some((v) => !Number.isFinite(v))) return;
    const prev = columns[m - 1];
    if (m > 0 && (weightColumn[m - 1] as number) >= 0 && prev && samePattern(prev, col)) {
      weightColumn[m] = weightColumn[m - 1] as number;
      return;
    }
    weightColumn[m] = source.length;
    source.push({ column: m, indicator: true });
  });
  return { source, weightColumn };
}

/** One block of units: its values, its code tables, and the codes of the resample being drawn. */
interface Block {
  /** Columns of `sums`, a multiple of 6. */
  C: number;
  /** Triples in this block. */
  groups: number;
  /** Zero units padding the last triple. */
  padding: number;
  /** [(triple * 125 + code) * C + column]: the triple's weighted sum under that code. */
  table: Float64Array;
  /** The block's units, row-major, padded with zeros. */
  xb: Float64Array;
  /** Per triple, the code drawn for the current resample. */
  codes: Uint8Array;
  overflowWeights: number[];
}

/** The block's values (0 where absent; 1/0 for indicators). */
function loadBlock(
  block: Block,
  columns: readonly Float64Array[],
  source: readonly SumSource[],
  start: number,
  units: number,
): void {
  const { xb, C } = block;
  xb.fill(0);
  source.forEach(({ column, indicator }, c) => {
    const col = columns[column] as Float64Array;
    for (let u = 0; u < units; u++) {
      const v = col[start + u] as number;
      if (Number.isFinite(v)) xb[u * C + c] = indicator ? 1 : v;
    }
  });
}

/** Every triple's weighted sums under each of the 125 codes. */
function tabulateBlock(block: Block): void {
  const { xb, C, table } = block;
  for (let g = 0; g < block.groups; g++) {
    const x1 = 3 * g * C;
    const x2 = x1 + C;
    const x3 = x2 + C;
    for (let a = 0; a <= 4; a++) {
      for (let b = 0; b <= 4; b++) {
        const row = (g * 125 + a * 25 + b * 5) * C;
        for (let c = 0; c < C; c++) {
          const v = a * (xb[x1 + c] as number) + b * (xb[x2 + c] as number);
          const z = xb[x3 + c] as number;
          table[row + c] = v;
          table[row + C + c] = v + z;
          table[row + 2 * C + c] = v + 2 * z;
          table[row + 3 * C + c] = v + 3 * z;
          table[row + 4 * C + c] = v + 4 * z;
        }
      }
    }
  }
}

/**
 * One resample's code per triple, two triples per 32 random bits (Rng.u32's xoshiro128**,
 * inlined on local copies of the generator's state in the hottest loop). Returns the weight total
 * of the codes (0 for markers); `draw.flags` has TRIPLE_OVERFLOW set when a marker or an
 * overflow was drawn.
 */
function drawCodes(rng: Rng, codes: Uint8Array, groups: number, draw: { flags: number }): number {
  const { value, wsum } = TRIPLE;
  let s0 = rng.s0;
  let s1 = rng.s1;
  let s2 = rng.s2;
  let s3 = rng.s3;
  let t = 0;
  let flags = 0;
  for (let g = 0; g < groups; g += 2) {
    const m5 = Math.imul(s1, 5);
    const u = Math.imul((m5 << 7) | (m5 >>> 25), 9) >>> 0;
    const x = s1 << 9;
    s2 ^= s0;
    s3 ^= s1;
    s1 ^= s2;
    s0 ^= s3;
    s2 ^= x;
    s3 = (s3 << 11) | (s3 >>> 21);
    const c0 = value[u >>> 16] as number;
    const c1 = value[u & 0xffff] as number;
    codes[g] = c0;
    codes[g + 1] = c1;
    flags |= c0 | c1;
    t += (wsum[c0] as number) + (g + 1 < groups ? (wsum[c1] as number) : 0);
  }
  rng.s0 = s0;
  rng.s1 = s1;
  rng.s2 = s2;
  rng.s3 = s3;
  draw.flags = flags;
  return t;
}

/**
 * Resolves the rare codes of resample `r`: a straddling prefix gets its code from 32 more
 * bits, an overflow triple its three weights (added to `sums` here; its code becomes 0, whose
 * table row adds nothing), and the padded units' weights leave the total. Returns the total.
 */
function settleCodes(block: Block, rng: Rng, sums: Float64Array, r: number, total: number): number {
  const { codes, groups, padding, xb, C, overflowWeights } = block;
  const { wsum, w2: W2, w3: W3 } = TRIPLE;
  let t = total;
  for (let g = 0; g < groups; g++) {
    let code = codes[g] as number;
    if (code > TRIPLE_OVERFLOW) {
      code = tripleRefine(code, rng);
      t += wsum[code] as number;
    }
    let ws: number[] | null = null;
    if (code === TRIPLE_OVERFLOW) {
      tripleOverflow(rng, overflowWeights);
      ws = overflowWeights;
      const row = 3 * g * C;
      for (let c = 0; c < C; c++) {
        const at = r * C + c;
        sums[at] =
          (sums[at] as number) +
          (ws[0] as number) * (xb[row + c] as number) +
          (ws[1] as number) * (xb[row + C + c] as number) +
          (ws[2] as number) * (xb[row + 2 * C + c] as number);
      }
      t += (ws[0] as number) + (ws[1] as number) + (ws[2] as number);
      code = 0;
    }
    codes[g] = code;
    if (g === groups - 1 && padding > 0) {
      // The padded units' weights were counted in t: take them out.
      const last = ws ? (ws[2] as number) : (W3[code] as number);
      const middle = ws ? (ws[1] as number) : (W2[code] as number);
      t -= padding === 2 ? last + middle : last;
    }
  }
  return t;
}

/** Adds the table row of each triple's code to resample `r`'s sums, six columns at a time. */
function addRows(block: Block, sums: Float64Array, r: number): void {
  const { codes, groups, table, C } = block;
  for (let c0 = 0; c0 < C; c0 += 6) {
    let a0 = 0;
    let a1 = 0;
    let a2 = 0;
    let a3 = 0;
    let a4 = 0;
    let a5 = 0;
    for (let g = 0; g < groups; g++) {
      const off = (g * 125 + (codes[g] as number)) * C + c0;
      a0 += table[off] as number;
      a1 += table[off + 1] as number;
      a2 += table[off + 2] as number;
      a3 += table[off + 3] as number;
      a4 += table[off + 4] as number;
      a5 += table[off + 5] as number;
    }
    const o = r * C + c0;
    sums[o] = (sums[o] as number) + a0;
    sums[o + 1] = (sums[o + 1] as number) + a1;
    sums[o + 2] = (sums[o + 2] as number) + a2;
    sums[o + 3] = (sums[o + 3] as number) + a3;
    sums[o + 4] = (sums[o + 4] as number) + a4;
    sums[o + 5] = (sums[o + 5] as number) + a5;
  }
}

/** Fills `mean` replicates from weighted sums: column `k` over the weight total of its units. */
export function meansFromSums(target: Float64Array, ws: WeightedSums, k: number, R: number): void {
  const ind = ws.weightColumn[k] as number;
  for (let r = 0; r < R; r++) {
    const wsum = ind >= 0 ? (ws.sums[r * ws.C + ind] as number) : (ws.totals[r] as number);
    target[r] = wsum > 0 ? (ws.sums[r * ws.C + k] as number) / wsum : NaN;
  }
}
