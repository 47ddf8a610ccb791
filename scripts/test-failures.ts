/**
 * The failures of one vitest run, from its JSON report, a line or two each: what `npm test`
 * prints last, so that a log of which only the tail is kept still names each failed test, where
 * it failed and why.
 */
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';

interface JsonReport {
  testResults?: {
    name: string;
    message?: string;
    assertionResults?: { fullName: string; status: string; failureMessages?: string[] }[];
  }[];
}

const MOST = 20;
const WIDTH = 240;

const firstLine = (text: string) => (text.split('\n').find((l) => l.trim() !== '') ?? '').trim().slice(0, WIDTH);
/**
 * A time limit's error carries the stack vitest captured where the test or hook was declared,
 * whose first line is that capture's placeholder, not the error's message.
 */
const TIMEOUT_STACK = 'Error: STACK_TRACE_ERROR';
const why = (stack: string) => (firstLine(stack) === TIMEOUT_STACK ? 'timed out (its time limit)' : firstLine(stack));
/** The stack's first frame in a test or source file of the project, not in node_modules. */
const where = (stack: string) =>
  stack
    .split('\n')
    .map((l) => /\(?((?:\/[^\s():]+)+\.[cm]?[jt]s:\d+:\d+)\)?$/.exec(l.trim())?.[1])
    .find((f) => f !== undefined && !f.includes('/node_modules/'));

/** The lines for the report at `reportPath`; undefined when there is none (the run ended before writing it). */
export function failureLines(reportPath: string, root = process.cwd()): string[] | undefined {
  let report: JsonReport;
  try {
    report = JSON.parse(readFileSync(reportPath, 'utf8')) as JsonReport;
  } catch {
    return undefined;
  }
  const failures: string[][] = [];
  for (const file of report.testResults ?? []) {
    const name = relative(root, file.name);
    if (file.message) failures.push([`  ${name}: ${firstLine(file.message)}`]);
    for (const test of file.assertionResults ?? []) {
      if (test.status !== 'failed') continue;
      const stack = test.failureMessages?.[0] ?? '';
      const at = where(stack);
      failures.push([`  ${name} > ${test.fullName}`, `      ${why(stack)}${at ? ` (${relative(root, at)})` : ''}`]);
    }
  }
  if (failures.length === 0)
    return ['  no test failed: an error outside the tests (vitest\'s "Unhandled Errors" above)'];
  const more = failures.length > MOST ? [`  ... and ${failures.length - MOST} more above`] : [];
  return [...failures.slice(0, MOST).flat(), ...more];
}
