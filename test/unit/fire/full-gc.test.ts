import { describe, expect, it } from 'vitest';
import { collectGarbage, promoteYoungGeneration } from '../../../lambdas/adapters/full-gc';
import { collectionsDuring, MAJOR, MINOR } from '../../support/gc-kinds';

describe('collectGarbage', () => {
  it('runs a full collection without --expose-gc: an object only a WeakRef holds is gone after it', async () => {
    expect(typeof (globalThis as { gc?: unknown }).gc).toBe('undefined');
    let ref: WeakRef<object> | null = null;
    (() => {
      ref = new WeakRef({ big: new Array(1000).fill('x') });
    })();
    // A WeakRef's target is kept alive until the end of the job that created or read it.
    await new Promise((r) => setImmediate(r));
    expect(collectGarbage()).toBe(true);
    expect((ref as WeakRef<object> | null)?.deref()).toBeUndefined();
    // It does not leave gc() on the global object.
    expect(typeof (globalThis as { gc?: unknown }).gc).toBe('undefined');
  });

  it('promoteYoungGeneration: two scavenges and no major collection (which would drop optimised code)', async () => {
    // Collections of this process before the call are not counted: a full one settles the heap first.
    collectGarbage();
    await new Promise((r) => setTimeout(r, 20));
    const { result, kinds } = await collectionsDuring(promoteYoungGeneration);
    expect(result).toBe(true);
    expect(kinds.filter((k) => k === MINOR)).toHaveLength(2);
    expect(kinds).not.toContain(MAJOR);
  });
});
