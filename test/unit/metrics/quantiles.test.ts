/**
 * The one 101-quantile function: `quantiles101Sorted` for values already finite and ascending
 * (the comparison's sorted samples), `quantiles101` for values in any order (it filters and
 * sorts, then calls the first). Two exported functions of one name, one of them sorting and
 * one not, gave wrong ECDFs to whichever caller picked the other.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { percentile, quantiles101, quantiles101Sorted } from '../../../lambdas/core/metrics/stats';

describe('quantiles101', () => {
  it('101 numpy-linear quantiles of the finite values', () => {
    const q = quantiles101([4, 1, NaN, 3, 2, Infinity]);
    expect(q).toHaveLength(101);
    expect(q[0]).toBe(1);
    expect(q[25]).toBe(1.75);
    expect(q[50]).toBe(2.5);
    expect(q[100]).toBe(4);
    expect([...q].sort((a, b) => a - b)).toEqual(q);
  });

  it('takes a Float64Array; nothing finite gives an empty list', () => {
    expect(quantiles101(Float64Array.from([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]))[99]).toBeCloseTo(9.91, 12);
    expect(quantiles101(new Float64Array([NaN, NaN]))).toEqual([]);
    expect(quantiles101([])).toEqual([]);
  });

  it('sorts: unsorted input gives the quantiles of its sorted values', () => {
    const values = Float64Array.from([9, -2, 7.5, 0, 3, 3, 100, -0.5, 42, 1]);
    const sorted = Float64Array.from(values).sort();
    const q = quantiles101(values);
    expect(q).toEqual(quantiles101Sorted(sorted));
    expect(q[0]).toBe(-2);
    expect(q[100]).toBe(100);
    expect(q[50]).toBe(percentile(sorted, 50));
  });
});

describe('quantiles101Sorted', () => {
  it('reads ascending values as they are, typed array or list, without copying them', () => {
    const sorted = [-3, -1, 0, 0, 2, 5, 8, 13];
    expect(quantiles101Sorted(sorted)).toEqual(quantiles101Sorted(Float64Array.from(sorted)));
    expect(quantiles101Sorted(sorted)[50]).toBe(1);
    expect(quantiles101Sorted(new Float64Array(0))).toEqual([]);
  });
});

describe('one quantile function', () => {
  it('lambdas/ exports exactly one quantiles101 and one quantiles101Sorted, both in metrics/stats.ts', () => {
    const root = join(__dirname, '../../../lambdas');
    const files = (readdirSync(root, { recursive: true }) as string[]).filter((f) => f.endsWith('.ts'));
    const found: string[] = [];
    for (const file of files) {
      const text = readFileSync(join(root, file), 'utf8');
      for (const m of text.matchAll(/export\s+(?:function|const|let)\s+(quantiles101\w*)\b/g))
        found.push(`${m[1]} in ${relative(root, join(root, file))}`);
    }
    expect(found.sort()).toEqual([
      'quantiles101 in core/metrics/stats.ts',
      'quantiles101Sorted in core/metrics/stats.ts',
    ]);
  });
});
