/**
 * The Poisson bootstrap's quantiles (from POISSON_BOOTSTRAP_FROM units on). The units are
 * grouped into cells by the segment of their rank on each side (fine segments around the
 * 50th, 90th and 99th percentile ranks, coarse ones elsewhere); a resample draws each cell's
 * total weight (Poisson(cell size), sums of independent Poisson weights) and expands only the
 * cells of the segments where the wanted positions fall into per-unit weights (a multinomial
 * split of the cell total, which is exactly the conditional law of the units' weights given
 * their sum). The weighted quantile is the same as walking every unit in sorted order, in
 * distribution, at a few thousand steps per resample instead of one per unit.
 */
import { poisson, type Rng } from '../rng';
import { BOOTSTRAP_QUANTILES, emptySide, QUANTILE_STATS, type SideReplicates, type SortedSide } from './replicates';

/**
 * Poisson-bootstrap quantiles of one metric over n units seen from 1 side (unpaired) or 2
 * (paired: the same unit weights on both sides). See the file's header for the method.
 */
class PoissonQuantileSampler {
  private readonly n: number;
  private readonly sides: SortedSide[];
  /** Per side: segment g covers ranks [bounds[g], bounds[g + 1]). */
  private readonly bounds: Int32Array[];
  /** Per side: per segment, the cells whose units have a rank in it. */
  private readonly segCells: Int32Array[][];
  /** Units grouped by cell: cell c holds cellItems[cellStart[c] .. cellStart[c + 1]). */
  private readonly cellStart: Int32Array;
  /** Per side, per rank: the position of that rank's unit in the cell grouping. */
  private readonly posByRank: Int32Array[];
  private readonly nonEmpty: Int32Array;
  private readonly cellTotal: Float64Array;
  private readonly cellStamp: Int32Array;
  private readonly weight: Int32Array;
  private readonly segTotal: Float64Array[];
  private stamp = 0;

  constructor(sides: SortedSide[], quantiles: readonly number[]) {
    this.sides = sides;
    const n = (sides[0] as SortedSide).sorted.length;
    this.n = n;
    this.bounds = sides.map(() => segmentBounds(n, quantiles));
    const nSeg = this.bounds.map((b) => b.length - 1);
    const nCells = nSeg.reduce((a, b) => a * b, 1);
    // Each unit's segment per side, hence its cell.
    const cellOf = new Int32Array(n);
    let stride = 1;
    for (let s = sides.length - 1; s >= 0; s--) {
      const b = this.bounds[s] as Int32Array;
      const order = (sides[s] as SortedSide).order;
      for (let g = 0; g + 1 < b.length; g++) {
        for (let j = b[g] as number; j < (b[g + 1] as number); j++) {
          const unit = order[j] as number;
          cellOf[unit] = (cellOf[unit] as number) + g * stride;
        }
      }
      stride *= nSeg[s] as number;
    }
    const cellStart = new Int32Array(nCells + 1);
    for (let i = 0; i < n; i++) {
      const at = (cellOf[i] as number) + 1;
      cellStart[at] = (cellStart[at] as number) + 1;
    }
    for (let c = 0; c < nCells; c++) cellStart[c + 1] = (cellStart[c + 1] as number) + (cellStart[c] as number);
    const fill = cellStart.slice(0, nCells);
    const posOf = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      const c = cellOf[i] as number;
      posOf[i] = fill[c] as number;
      fill[c] = (fill[c] as number) + 1;
    }
    this.cellStart = cellStart;
    this.posByRank = sides.map(({ order }) => {
      const pos = new Int32Array(n);
      for (let j = 0; j < n; j++) pos[j] = posOf[order[j] as number] as number;
      return pos;
    });
    const nonEmpty: number[] = [];
    for (let c = 0; c < nCells; c++) if ((cellStart[c + 1] as number) > (cellStart[c] as number)) nonEmpty.push(c);
    this.nonEmpty = Int32Array.from(nonEmpty);
    // Cells per segment of each side (cell = sum over sides of g_s * stride_s).
    const strides: number[] = [];
    stride = 1;
    for (let s = sides.length - 1; s >= 0; s--) {
      strides[s] = stride;
      stride *= nSeg[s] as number;
    }
    this.segCells = sides.map((_, s) => {
      const lists: number[][] = Array.from({ length: nSeg[s] as number }, () => []);
      for (const c of nonEmpty) lists[Math.floor(c / (strides[s] as number)) % (nSeg[s] as number)]?.push(c);
      return lists.map((l) => Int32Array.from(l));
    });
    this.cellTotal = new Float64Array(nCells);
    this.cellStamp = new Int32Array(nCells);
    this.weight = new Int32Array(n);
    this.segTotal = nSeg.map((k) => new Float64Array(k));
  }

  /** Draws one resample's cell totals; returns the total weight. */
  draw(rng: Rng): number {
    this.stamp++;
    let total = 0;
    for (const seg of this.segTotal) seg.fill(0);
    for (let k = 0; k < this.nonEmpty.length; k++) {
      const c = this.nonEmpty[k] as number;
      const t = poisson(rng, (this.cellStart[c + 1] as number) - (this.cellStart[c] as number));
      this.cellTotal[c] = t;
      total += t;
    }
    this.segCells.forEach((lists, s) => {
      const seg = this.segTotal[s] as Float64Array;
      lists.forEach((cells, g) => {
        let sum = 0;
        for (let k = 0; k < cells.length; k++) sum += this.cellTotal[cells[k] as number] as number;
        seg[g] = sum;
      });
    });
    return total;
  }

  private expandSegment(s: number, g: number, rng: Rng): void {
    const cells = (this.segCells[s] as Int32Array[])[g] as Int32Array;
    for (let k = 0; k < cells.length; k++) {
      const c = cells[k] as number;
      if (this.cellStamp[c] === this.stamp) continue;
      this.cellStamp[c] = this.stamp;
      const start = this.cellStart[c] as number;
      const size = (this.cellStart[c + 1] as number) - start;
      this.weight.fill(0, start, start + size);
      const balls = this.cellTotal[c] as number;
      for (let b = 0; b < balls; b++) {
        const at = start + rng.int(size);
        this.weight[at] = (this.weight[at] as number) + 1;
      }
    }
  }

  /** Value at 0-based position p of side s's weighted sample, and the next position's value. */
  private valuesAt(s: number, p: number, rng: Rng): [number, number] {
    const seg = this.segTotal[s] as Float64Array;
    const bounds = this.bounds[s] as Int32Array;
    const pos = this.posByRank[s] as Int32Array;
    const sorted = (this.sides[s] as SortedSide).sorted;
    let cum = 0;
    let first = NaN;
    for (let g = 0; g < seg.length; g++) {
      const t = seg[g] as number;
      if (t === 0 || p >= cum + t) {
        cum += t;
        continue;
      }
      this.expandSegment(s, g, rng);
      for (let j = bounds[g] as number; j < (bounds[g + 1] as number); j++) {
        const w = this.weight[pos[j] as number] as number;
        if (w === 0) continue;
        cum += w;
        if (Number.isNaN(first)) {
          if (p < cum) {
            first = sorted[j] as number;
            if (p + 1 < cum) return [first, first];
          }
        } else {
          return [first, sorted[j] as number];
        }
      }
    }
    return [first, first];
  }

  quantile(s: number, total: number, q: number, rng: Rng): number {
    if (total <= 0) return NaN;
    const rank = q * (total - 1);
    const lo = Math.floor(rank);
    const frac = rank - lo;
    const [a, b] = this.valuesAt(s, lo, rng);
    return frac === 0 ? a : a + (b - a) * frac;
  }
}

/**
 * Segment boundaries (ranks) of one side: fine segments of about one standard deviation of the
 * resampled quantile's rank, sqrt(q (1 - q) n), across +-6 of them around each quantile's rank;
 * the rest is coarse. A wanted position outside the fine segments is still exact, only slower.
 */
function segmentBounds(n: number, quantiles: readonly number[]): Int32Array {
  const set = new Set<number>([0, n]);
  for (const q of quantiles) {
    const center = Math.floor(q * (n - 1));
    const h = Math.max(1, Math.ceil(Math.sqrt(q * (1 - q) * n)));
    for (let k = -6; k <= 7; k++) {
      const b = center + k * h;
      if (b > 0 && b < n) set.add(b);
    }
  }
  return Int32Array.from([...set].sort((a, b) => a - b));
}

/** Draws R resamples of one metric's quantiles from a Poisson quantile sampler over `sides`. */
export function poissonQuantiles(sides: SortedSide[], R: number, rng: Rng): SideReplicates[] {
  const out = sides.map(() => emptySide(R));
  const sampler = new PoissonQuantileSampler(sides, Object.values(BOOTSTRAP_QUANTILES));
  for (let r = 0; r < R; r++) {
    const total = sampler.draw(rng);
    for (const stat of QUANTILE_STATS) {
      sides.forEach((_, s) => {
        (out[s] as SideReplicates)[stat][r] = sampler.quantile(s, total, BOOTSTRAP_QUANTILES[stat], rng);
      });
    }
  }
  return out;
}
