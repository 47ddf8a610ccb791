/**
 * The test tiers of vitest.config.ts as vitest itself resolves them: a test file in no project
 * never runs in `npm test`, one in two runs twice (once in the wrong tier), and a file named in
 * a tier's list that no longer exists hides a file that lost its tier.
 */
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createVitest, type TestSpecification, type Vitest } from 'vitest/node';
import { LONGEST_FIRST, QUIET_TIER, SHARED_TIERS, TIMING_TIER } from '../../vitest.config';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const quiet = new Writable({ write: (_chunk, _encoding, done) => done() });

function testFilesOnDisk(): string[] {
  return readdirSync(join(ROOT, 'test'), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.test.ts'))
    .map((f) => join('test', f).split('\\').join('/'))
    .sort();
}

describe('test projects (vitest.config.ts)', () => {
  let vitest: Vitest;
  let specs: TestSpecification[];
  beforeAll(async () => {
    vitest = await createVitest('test', { root: ROOT, watch: false }, {}, { stdout: quiet, stderr: quiet });
    specs = await vitest.globTestSpecifications();
  });
  afterAll(async () => {
    await vitest?.close();
  });

  const projectsOf = () => {
    const byFile = new Map<string, string[]>();
    for (const spec of specs) {
      const file = relative(ROOT, spec.moduleId).split('\\').join('/');
      byFile.set(file, [...(byFile.get(file) ?? []), spec.project.name]);
    }
    return byFile;
  };

  it('every test file on disk belongs to exactly one project', () => {
    const byFile = projectsOf();
    const files = testFilesOnDisk();
    expect(files.length).toBeGreaterThan(50);
    const wrong = files
      .filter((f) => byFile.get(f)?.length !== 1)
      .map((f) => `${f}: ${byFile.get(f)?.join(' + ') ?? 'no project'}`);
    expect(wrong).toEqual([]);
    expect([...byFile.keys()].sort()).toEqual(files);
  });

  it('every file a project names exists', () => {
    const files = new Set(testFilesOnDisk());
    const stale = vitest.projects.flatMap((p) =>
      p.config.include
        .filter((pattern) => !/[*?{[]/.test(pattern) && !files.has(pattern))
        .map((pattern) => `${p.name}: ${pattern}`),
    );
    expect(stale).toEqual([]);
  });

  it('every file named to start first exists, in a shared tier (elsewhere the name orders nothing)', () => {
    const byFile = projectsOf();
    expect(
      LONGEST_FIRST.filter((f) => !SHARED_TIERS.includes(byFile.get(f)?.[0] ?? '')).map(
        (f) => `${f}: ${byFile.get(f)?.join(' + ') ?? 'no file'}`,
      ),
    ).toEqual([]);
  });

  it(
    'npm test runs every tier once: the shared ones at a low priority, the timing and quiet tiers one file at ' +
      'a time at the normal priority',
    () => {
      expect([...SHARED_TIERS, TIMING_TIER, QUIET_TIER].sort()).toEqual(vitest.projects.map((p) => p.name).sort());
      const alone = vitest.projects.filter((p) => p.name === TIMING_TIER || p.name === QUIET_TIER);
      expect(alone.map((p) => p.config.maxWorkers)).toEqual([1, 1]);
      const lowered = (p: (typeof vitest.projects)[number]) =>
        p.config.setupFiles.some((f) => f.endsWith('test/support/background-priority.ts'));
      expect(alone.filter(lowered)).toEqual([]);
      expect(vitest.projects.filter((p) => !alone.includes(p) && !lowered(p)).map((p) => p.name)).toEqual([]);
      expect(specs.some((s) => s.project.name === TIMING_TIER)).toBe(true);
      expect(specs.some((s) => s.project.name === QUIET_TIER)).toBe(true);
    },
  );
});
