/**
 * The project's own lint rules (.oxlintrc.json), run by oxlint on probe files laid out as the
 * repository is, in a folder of their own (the rules' globs are relative to the config file):
 * the core stays free of the filesystem, transports, AWS and the outer layers, and reads no
 * environment; the size guard holds at exactly 600 lines a file and 120 a function, blank lines
 * and comments not counted, generated files and the parser oracle exempt; a `no-control-regex`
 * disabled on its line stays disabled.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/processes';

interface Finding {
  rule: string;
  file: string;
  help: string;
}

const OXLINT = join(REPO_ROOT, 'node_modules', '.bin', 'oxlint');

/** A function of `lines` counted lines (its braces included), padded with blank and comment lines that do not count. */
function functionOf(name: string, lines: number): string {
  const body = Array.from({ length: lines - 4 }, (_, i) => `  x += ${i};\n\n  // not counted`);
  return [`export function ${name}(): number {`, '  let x = 0;', ...body, '  return x;', '}', ''].join('\n');
}
/** A file of `lines` counted lines, with blank and comment lines between them. */
const fileOf = (lines: number) =>
  Array.from({ length: lines }, (_, i) => `export const v${i} = ${i};\n\n/* not counted */`).join('\n') + '\n';

const PROBES: Record<string, string> = {
  'lambdas/core/probe/impure.ts': [
    "import { readFileSync } from 'node:fs';",
    "import { request } from 'undici';",
    "import { S3Client } from '@aws-sdk/client-s3';",
    "import type { Clock } from '../../adapters/clock';",
    'export const all = (c: Clock) => [readFileSync, request, S3Client, c, process.env.HOME];',
    '',
  ].join('\n'),
  // The same imports outside the core are allowed.
  'lambdas/adapters/probe/io.ts': [
    "import { readFileSync } from 'node:fs';",
    "import { request } from 'undici';",
    'export const all = () => [readFileSync, request, process.env.HOME];',
    '',
  ].join('\n'),
  'lib/probe/at-limit.ts': functionOf('atLimit', 120),
  'lib/probe/over-limit.ts': functionOf('overLimit', 121),
  'scripts/probe/file-at-limit.ts': fileOf(600),
  'scripts/probe/file-over-limit.ts': fileOf(601),
  'lambdas/core/probe/big.generated.ts': fileOf(700),
  'test/unit/capture/oracle/probe.ts': fileOf(700) + functionOf('oracle', 100),
  // Tests: a long describe callback is fine, a long file is not.
  'test/unit/probe/long-describe.test.ts': functionOf('describeLike', 200),
  'test/unit/probe/long-file.test.ts': fileOf(601),
  'lambdas/local/probe/control.ts': [
    '// eslint-disable-next-line no-control-regex -- the point',
    'export const CONTROL = /[\\x00-\\x1f]/;',
    'export const BARE = /[\\x00-\\x1f]/;',
    '',
  ].join('\n'),
};

describe('lint rules (.oxlintrc.json)', () => {
  let dir: string;
  let findings: Finding[];
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cr-lint-rules-'));
    copyFileSync(join(REPO_ROOT, '.oxlintrc.json'), join(dir, '.oxlintrc.json'));
    for (const [file, text] of Object.entries(PROBES)) {
      mkdirSync(dirname(join(dir, file)), { recursive: true });
      writeFileSync(join(dir, file), text);
    }
    // Exit 1 with findings: the report is on stdout either way.
    const out = await promisify(execFile)(OXLINT, ['-c', '.oxlintrc.json', '-f', 'json', '.'], { cwd: dir }).catch(
      (e: { stdout?: string }) => ({ stdout: e.stdout ?? '' }),
    );
    const report = JSON.parse(out.stdout) as { diagnostics: { code: string; filename: string; help?: string }[] };
    findings = report.diagnostics.map((d) => ({
      rule: d.code.replace(/^eslint\((.*)\)$/, '$1'),
      file: d.filename,
      help: d.help ?? '',
    }));
  });
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  const rulesIn = (file: string) =>
    findings
      .filter((f) => f.file === file)
      .map((f) => f.rule)
      .sort();

  it('the core: no filesystem, transport, AWS SDK or outer layer, and no process.env, each with its reason', () => {
    const core = findings.filter((f) => f.file === 'lambdas/core/probe/impure.ts');
    expect(core.map((f) => f.rule).sort()).toEqual([
      'no-restricted-imports',
      'no-restricted-imports',
      'no-restricted-imports',
      'no-restricted-imports',
      'no-restricted-properties',
    ]);
    expect(core.map((f) => f.help).sort()).toEqual([
      'core must not depend on transports or AWS',
      'core must not depend on transports or AWS',
      'core must not touch the filesystem; use a port',
      'core reads no environment; pass config in',
      'dependencies point inward',
    ]);
    expect(rulesIn('lambdas/adapters/probe/io.ts')).toEqual([]);
  });

  it('the size guard: 120 counted lines a function and 600 a file pass, one more fails', () => {
    expect(rulesIn('lib/probe/at-limit.ts')).toEqual([]);
    expect(rulesIn('lib/probe/over-limit.ts')).toEqual(['max-lines-per-function']);
    expect(rulesIn('scripts/probe/file-at-limit.ts')).toEqual([]);
    expect(rulesIn('scripts/probe/file-over-limit.ts')).toEqual(['max-lines']);
  });

  it('generated code and the parser oracle are exempt; a test file has the file limit only', () => {
    expect(rulesIn('lambdas/core/probe/big.generated.ts')).toEqual([]);
    expect(rulesIn('test/unit/capture/oracle/probe.ts')).toEqual([]);
    expect(rulesIn('test/unit/probe/long-describe.test.ts')).toEqual([]);
    expect(rulesIn('test/unit/probe/long-file.test.ts')).toEqual(['max-lines']);
  });

  it('a rule disabled on the next line is disabled there only', () => {
    expect(rulesIn('lambdas/local/probe/control.ts')).toEqual(['no-control-regex']);
  });
});
