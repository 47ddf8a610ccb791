/**
 * The heap Lambda's Node.js bootstrap gives a function (lambdas/adapters/lane-heap.ts), and the
 * NODE_OPTIONS the benchmark starts a bundle with in its place (test/support/lambda-env.ts).
 */
import { describe, expect, it } from 'vitest';
import { fireNodeOptions, lambdaBootstrapHeap } from '../../../lambdas/adapters/lane-heap';
import { lambdaBootstrapNodeOptions } from '../../support/lambda-env';

describe("Lambda's bootstrap heap", () => {
  it('is a tenth of the memory for the new space (semi-spaces of half that), the rest for the old space', () => {
    expect(lambdaBootstrapHeap(3197)).toEqual({ semiSpaceMb: 159, oldSpaceMb: 2878 });
    expect(lambdaBootstrapHeap(1024)).toEqual({ semiSpaceMb: 51, oldSpaceMb: 922 });
  });

  it('is added to NODE_OPTIONS that name neither size, and not to those that name one (in either spelling)', () => {
    expect(lambdaBootstrapNodeOptions('--enable-source-maps', 1024)).toBe(
      '--enable-source-maps --max-semi-space-size=51 --max-old-space-size=922',
    );
    expect(lambdaBootstrapNodeOptions(undefined, 1024)).toBe('--max-semi-space-size=51 --max-old-space-size=922');
    for (const given of [
      '--max-semi-space-size=4',
      '--max_old_space_size=100',
      '--enable-source-maps --max-old-space-size=9',
    ])
      expect(lambdaBootstrapNodeOptions(given, 1024)).toBe(given);
  });

  it("the fire function names both, its old space the bootstrap's for its memory", () => {
    expect(fireNodeOptions(3197)).toEqual(['--max-semi-space-size=4', '--max-old-space-size=2878']);
    expect(lambdaBootstrapNodeOptions(['--enable-source-maps', ...fireNodeOptions(3197)].join(' '), 3197)).toBe(
      '--enable-source-maps --max-semi-space-size=4 --max-old-space-size=2878',
    );
  });
});
