import { describe, expect, it } from 'vitest';
import { collectGarbage } from '../../../lambdas/adapters/full-gc';

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
});
