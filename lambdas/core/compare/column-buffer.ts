/**
 * A column of numbers filled one row at a time: a typed array that doubles when full, so a
 * million rows read from a results folder cost 8 bytes a value (a Uint8Array, 1), not a
 * JavaScript array of numbers (boxed once a NaN or null sits among them) copied again when
 * the columns are built.
 */
export class ColumnBuffer<T extends Float64Array | Uint8Array> {
  private data: T;
  private size = 0;

  constructor(private readonly make: (length: number) => T) {
    this.data = make(1024);
  }

  get length(): number {
    return this.size;
  }

  push(value: number): void {
    if (this.size === this.data.length) {
      const grown = this.make(this.data.length * 2);
      grown.set(this.data);
      this.data = grown;
    }
    this.data[this.size++] = value;
  }

  at(index: number): number {
    return this.data[index] as number;
  }

  /** The values so far: a view over the buffer, not a copy, valid until the next push. */
  view(): T {
    return this.data.subarray(0, this.size) as T;
  }
}

export const float64Column = () => new ColumnBuffer((n) => new Float64Array(n));
export const uint8Column = () => new ColumnBuffer((n) => new Uint8Array(n));
