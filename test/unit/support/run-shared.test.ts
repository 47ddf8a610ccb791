/**
 * oncePerRun (test/support/run-shared.ts): what one `vitest run` shares is produced once, and in
 * a base folder that does not exist yet (node_modules/.cache on a fresh clone, as CI has it).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { oncePerRun } from '../../support/run-shared';

const root = mkdtempSync(join(tmpdir(), 'cr-run-shared-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

it('produces once into a base folder it makes, and hands the same result to later callers', async () => {
  const base = join(root, 'node_modules', '.cache');
  let produced = 0;
  const produce = async (dir: string) => {
    produced++;
    return dir;
  };
  const first = await oncePerRun('cr-test-', produce, { base, timeoutMs: 5_000 });
  const again = await oncePerRun('cr-test-', produce, { base, timeoutMs: 5_000 });
  expect(first.startsWith(base)).toBe(true);
  expect(again).toBe(first);
  expect(produced).toBe(1);
});
