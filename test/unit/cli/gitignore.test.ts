/**
 * What the CLI writes in a working copy stays out of git (issue 22): the default results
 * folder and the tarball `npm pack` writes, as git itself reads .gitignore.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../support/processes';

const ignored = (path: string) =>
  spawnSync('git', ['check-ignore', '--no-index', '-q', path], { cwd: REPO_ROOT }).status === 0;

describe('.gitignore', () => {
  it.each(['capture-replay-out/20261126T020000Z-3f9a1c/report.html', 'capture-replay-0.1.0.tgz'])(
    'ignores %s',
    (path) => {
      expect(ignored(path)).toBe(true);
    },
  );

  it('keeps the sources', () => {
    expect(ignored('lambdas/local/program.ts')).toBe(false);
  });
});
