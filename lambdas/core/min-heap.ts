/**
 * A binary min-heap of (key, value) pairs kept in two parallel arrays, so that an entry costs
 * no object of its own: the mocks push one per pending write and one per generation slot,
 * thousands a second under load; the capacity check and the simulator keep end times in it.
 */
export class MinHeap<T> {
  private readonly keys: number[] = [];
  private readonly values: T[] = [];

  get size(): number {
    return this.keys.length;
  }

  /** The smallest key; undefined when empty. */
  peekKey(): number | undefined {
    return this.keys[0];
  }

  push(key: number, value: T): void {
    let i = this.keys.length;
    this.keys.push(key);
    this.values.push(value);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (this.keys[parent]! <= key) break;
      this.keys[i] = this.keys[parent]!;
      this.values[i] = this.values[parent]!;
      i = parent;
    }
    this.keys[i] = key;
    this.values[i] = value;
  }

  /** Removes the entry with the smallest key and returns that key; undefined when empty. */
  popKey(): number | undefined {
    const key = this.keys[0];
    this.pop();
    return key;
  }

  /** Removes the entry with the smallest key and returns its value; undefined when empty. */
  pop(): T | undefined {
    if (this.keys.length === 0) return undefined;
    const top = this.values[0]!;
    const lastKey = this.keys.pop()!;
    const lastValue = this.values.pop()!;
    const n = this.keys.length;
    if (n > 0) {
      let i = 0;
      for (;;) {
        let child = 2 * i + 1;
        if (child >= n) break;
        if (child + 1 < n && this.keys[child + 1]! < this.keys[child]!) child++;
        if (this.keys[child]! >= lastKey) break;
        this.keys[i] = this.keys[child]!;
        this.values[i] = this.values[child]!;
        i = child;
      }
      this.keys[i] = lastKey;
      this.values[i] = lastValue;
    }
    return top;
  }

  clear(): void {
    this.keys.length = 0;
    this.values.length = 0;
  }
}
