import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { failureLines } from '../../scripts/test-failures';

const root = '/repo';
const dir = mkdtempSync(join(tmpdir(), 'test-failures-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const reportOf = (report: unknown) => {
  const path = join(dir, `${Math.random()}.json`);
  writeFileSync(path, JSON.stringify(report));
  return path;
};

describe("npm test's closing list of failures", () => {
  it('names each failed test, its first error line and the frame in the project where it failed', () => {
    const stack = [
      'AssertionError: expected 7 to be greater than 10',
      '    at /repo/node_modules/@vitest/expect/dist/index.js:1:2',
      '    at /repo/test/unit/fire/fire-loop.test.ts:88:21',
    ].join('\n');
    const path = reportOf({
      testResults: [
        {
          name: '/repo/test/unit/fire/fire-loop.test.ts',
          message: '',
          assertionResults: [
            { fullName: 'fire loop sends on time', status: 'passed', failureMessages: [] },
            { fullName: 'fire loop opens connections', status: 'failed', failureMessages: [stack] },
          ],
        },
        {
          name: '/repo/test/integration/broken.test.ts',
          message: "Cannot find module './gone'\nmore",
          assertionResults: [],
        },
      ],
    });
    expect(failureLines(path, root)).toEqual([
      '  test/unit/fire/fire-loop.test.ts > fire loop opens connections',
      '      AssertionError: expected 7 to be greater than 10 (test/unit/fire/fire-loop.test.ts:88:21)',
      "  test/integration/broken.test.ts: Cannot find module './gone'",
    ]);
  });

  it('says a test timed out when its stack is the one vitest captured where the test was declared', () => {
    const stack = ['Error: STACK_TRACE_ERROR', '    at /repo/test/e2e/cli-demo.test.ts:18:3'].join('\n');
    const path = reportOf({
      testResults: [
        {
          name: '/repo/test/e2e/cli-demo.test.ts',
          assertionResults: [{ fullName: 'runs the demo', status: 'failed', failureMessages: [stack] }],
        },
      ],
    });
    expect(failureLines(path, root)?.[1]).toBe('      timed out (its time limit) (test/e2e/cli-demo.test.ts:18:3)');
  });

  it('says so when nothing failed inside a test, and when the report is missing', () => {
    expect(failureLines(reportOf({ testResults: [] }), root)?.[0]).toMatch(/outside the tests/);
    expect(failureLines(join(dir, 'none.json'), dir)).toBeUndefined();
  });

  it('lists at most twenty and counts the rest', () => {
    const tests = Array.from({ length: 25 }, (_, i) => ({
      fullName: `t${i}`,
      status: 'failed',
      failureMessages: ['Error: x'],
    }));
    const lines = failureLines(reportOf({ testResults: [{ name: '/repo/a.test.ts', assertionResults: tests }] }), root);
    expect(lines).toHaveLength(41);
    expect(lines?.at(-1)).toBe('  ... and 5 more above');
  });
});
