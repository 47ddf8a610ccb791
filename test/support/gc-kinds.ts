/**
 * The garbage collections a call makes, as Node reports them (PerformanceObserver 'gc' entries:
 * their kind, minor or major); for tests of the collections the CLI asks for (full-gc.ts).
 */
import { constants, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';

export const MINOR = constants.NODE_PERFORMANCE_GC_MINOR;
export const MAJOR = constants.NODE_PERFORMANCE_GC_MAJOR;

/** `run`'s result and the kinds of the collections made while it ran (and 20 ms after, when Node delivers them). */
export async function collectionsDuring<T>(run: () => T): Promise<{ result: T; kinds: number[] }> {
  const kinds: number[] = [];
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries())
      kinds.push((entry as PerformanceEntry & { detail: { kind: number } }).detail.kind);
  });
  observer.observe({ entryTypes: ['gc'] });
  try {
    const result = run();
    await new Promise((r) => setTimeout(r, 20));
    return { result, kinds };
  } finally {
    observer.disconnect();
  }
}
