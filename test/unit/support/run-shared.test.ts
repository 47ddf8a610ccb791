/**
 * oncePerRun (test/support/run-shared.ts): what one `vitest run` shares is produced once, and in
 * a base folder that does not exist yet (node_modules/.cache on a fresh clone, as CI has it).
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { oncePerRun, removeEndedRuns, runSharedPath } from '../../support/run-shared';
import { startRunServer } from '../../support/run-server';

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

it("names the run by the vitest process, the test file's parent", () => {
  expect(runSharedPath('cr-x-', root)).toBe(join(root, `cr-x-${process.ppid}`));
});

it('a run server already named in the environment serves: nothing is started', () => {
  const name = 'CR_TEST_SOME_SERVER';
  process.env[name] = JSON.stringify({ socket: join(root, 'none.sock'), pid: process.pid });
  try {
    // A command that starts at once: a server started would be named in place of the one there.
    const teardown = startRunServer(name, process.execPath, () => ['-e', '0']);
    expect(process.env[name]).toBe(JSON.stringify({ socket: join(root, 'none.sock'), pid: process.pid }));
    teardown();
  } finally {
    delete process.env[name];
  }
});

it("removes the folders of ended processes, not the owner's nor a live process's (the owner: this run, or a process given)", () => {
  const base = mkdtempSync(join(root, 'ended-'));
  // A pid above the kernel's maximum (4,194,304) names no process.
  const folder = (pid: number) => join(base, `cr-x-${pid}`);
  const pids = [99_999_999, 99_999_998, process.pid];
  for (const pid of pids) mkdirSync(folder(pid));
  // The owner's folder stays even when its pid is not a live process's.
  removeEndedRuns('cr-x-', base, 99_999_998);
  expect(pids.map((pid) => existsSync(folder(pid)))).toEqual([false, true, true]);
});
