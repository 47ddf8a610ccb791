/**
 * Sorting doubles for the statistics: a stable LSD radix sort on flat typed arrays, so a
 * million values sort in linear time (the bootstrap sorts every metric of every side, and
 * argsorts them for the Poisson quantiles).
 */

/** The finite values, ascending. */
export function sortedFinite(values: ArrayLike<number>): Float64Array {
  let n = 0;
  for (let i = 0; i < values.length; i++) if (Number.isFinite(values[i] as number)) n++;
  const out = new Float64Array(n);
  let k = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i] as number;
    if (Number.isFinite(v)) out[k++] = v;
  }
  return sortFloat64InPlace(out);
}

/**
 * The LSD radix sort under both sorts below: each double becomes an order-preserving unsigned
 * 64-bit key (the sign bit of a positive number flipped, every bit of a negative one), sorted
 * in 4 passes of 16 bits; `index` (when given) is carried along, so the sort is stable.
 */
function radixSortKeys(
  values: Float64Array,
  index: Int32Array | null,
): { hi: Uint32Array; lo: Uint32Array; index: Int32Array | null } {
  const n = values.length;
  const bits = new Uint32Array(values.buffer, values.byteOffset, n * 2);
  let hi = new Uint32Array(n);
  let lo = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    const h = bits[2 * i + 1] as number;
    const l = bits[2 * i] as number;
    if (h & 0x80000000) {
      hi[i] = ~h >>> 0;
      lo[i] = ~l >>> 0;
    } else {
      hi[i] = (h | 0x80000000) >>> 0;
      lo[i] = l;
    }
  }
  let idx: Int32Array | null = index;
  let hi2 = new Uint32Array(n);
  let lo2 = new Uint32Array(n);
  let idx2: Int32Array | null = index ? new Int32Array(n) : null;
  const count = new Int32Array(65536);
  for (let pass = 0; pass < 4; pass++) {
    const word = pass < 2 ? lo : hi;
    const shift = pass % 2 === 0 ? 0 : 16;
    count.fill(0);
    for (let i = 0; i < n; i++) {
      const d = ((word[i] as number) >>> shift) & 0xffff;
      count[d] = (count[d] as number) + 1;
    }
    if (n === 0 || count[((word[0] as number) >>> shift) & 0xffff] === n) continue; // one digit: already in order
    let sum = 0;
    for (let d = 0; d < 65536; d++) {
      const c = count[d] as number;
      count[d] = sum;
      sum += c;
    }
    for (let i = 0; i < n; i++) {
      const d = ((word[i] as number) >>> shift) & 0xffff;
      const at = count[d] as number;
      count[d] = at + 1;
      hi2[at] = hi[i] as number;
      lo2[at] = lo[i] as number;
      if (idx) (idx2 as Int32Array)[at] = idx[i] as number;
    }
    [hi, hi2] = [hi2, hi];
    [lo, lo2] = [lo2, lo];
    [idx, idx2] = [idx2, idx];
  }
  return { hi, lo, index: idx };
}

/** Sorts finite doubles ascending, in place (radix from 4,096 values on, where it beats TypedArray#sort). -0 sorts before 0. */
export function sortFloat64InPlace(values: Float64Array): Float64Array {
  const n = values.length;
  if (n < 4096) return values.sort();
  const { hi, lo } = radixSortKeys(values, null);
  const bits = new Uint32Array(values.buffer, values.byteOffset, n * 2);
  for (let i = 0; i < n; i++) {
    const h = hi[i] as number;
    if (h & 0x80000000) {
      bits[2 * i + 1] = (h & 0x7fffffff) >>> 0;
      bits[2 * i] = lo[i] as number;
    } else {
      bits[2 * i + 1] = ~h >>> 0;
      bits[2 * i] = ~(lo[i] as number) >>> 0;
    }
  }
  return values;
}

/**
 * Indices that sort `values` ascending (finite values only), stable, O(n) (radix), where a
 * comparator sort of the indices is O(n log n) with a function call per comparison.
 */
export function argsortFloat64(values: Float64Array): Int32Array {
  const index = new Int32Array(values.length);
  for (let i = 0; i < index.length; i++) index[i] = i;
  return radixSortKeys(values, index).index as Int32Array;
}
