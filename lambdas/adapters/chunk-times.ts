/**
 * A streamed answer's content-chunk arrival times while it streams: offsets in ns from its first chunk, as doubles in
 * one growing array. A bigint each would be a heap object per token that lives as long as the answer (seconds), so
 * every scavenge meanwhile copies it; the offsets are exact up to 2^53 ns (104 days).
 */
export class ChunkTimes {
  private firstNs: bigint | null = null;
  private readonly offsets: number[] = [];

  get length(): number {
    return this.offsets.length;
  }

  push(ns: bigint): void {
    if (this.firstNs === null) this.firstNs = ns;
    this.offsets.push(Number(ns - this.firstNs));
  }

  /** The times, as a result carries them. */
  toNs(): bigint[] {
    const first = this.firstNs;
    return first === null ? [] : this.offsets.map((o) => first + BigInt(o));
  }
}
