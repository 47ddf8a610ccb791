/**
 * The projects of vitest.config.ts as vitest itself resolves them: a test file in no project
 * never runs, one in two runs twice, and a file named in TIMING that no longer exists hides a
 * file that lost its project. `npm test` runs `main` and `npm run test:timing` runs `timing`,
 * and CI (.ci/run) runs exactly the README's test command, which runs both.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createVitest, type TestSpecification, type Vitest } from 'vitest/node';
import { TIMING } from '../../vitest.config';

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

  it('timing: the files of TIMING, one at a time; main: the others, files in parallel', () => {
    expect(vitest.projects.map((p) => p.name).sort()).toEqual(['main', 'timing']);
    const timing = vitest.projects.find((p) => p.name === 'timing')!;
    expect(timing.config.maxWorkers).toBe(1);
    const byFile = projectsOf();
    expect(TIMING.filter((f) => byFile.get(f)?.[0] !== 'timing')).toEqual([]);
    expect(specs.filter((s) => s.project.name === 'timing').length).toBe(TIMING.length);
  });

  it('npm test runs main, then the type check and lint; test:timing runs timing; CI and the README run both', () => {
    const read = (f: string) => readFileSync(join(ROOT, f), 'utf8');
    const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;
    expect(scripts.test).toMatch(/^vitest run --project main && .*typecheck && .*lint$/);
    expect(scripts['test:timing']).toBe('vitest run --project timing');
    const command = 'npm test && npm run test:timing';
    expect(read('README.md')).toContain(`\`${command}\``);
    expect(read('.ci/run').trim().split('\n').at(-1)).toBe(command);
  });
});
