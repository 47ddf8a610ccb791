/**
 * The package outside the clone, as a user gets it: `npm pack`, the tarball installed into an
 * empty folder, and `capture-replay --version` and `capture-replay demo` run from yet another
 * folder.
 *
 * No network: the install is `npm ci --offline` against a lock file written here from the
 * repository's own (the runtime dependencies, at the versions the tests ran with, with their
 * registry URLs), so every tarball comes from npm's cache, which `npm ci` in the clone filled.
 * When the cache lacks one (a cache cleaned since), that part is skipped with a line, and
 * required under CI=true. The link-style check (the clone's bin run from another folder, as
 * `npm link` installs it) always runs.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/processes';

interface LockEntry {
  version?: string;
  resolved?: string;
  integrity?: string;
  dev?: boolean;
  inBundle?: boolean;
  link?: boolean;
  name?: string;
  [key: string]: unknown;
}

const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { name: string; version: string; bin: Record<string, string>; dependencies: Record<string, string> };
const work = mkdtempSync(join(tmpdir(), 'capture-replay-pack-'));
const env: NodeJS.ProcessEnv = { ...process.env, npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' };

function run(command: string, args: string[], cwd: string, timeout = 240_000) {
  return spawnSync(command, args, { cwd, env, encoding: 'utf8', timeout });
}

/** The dependency tree of the package alone, from the repository's lock file, with registry URLs. */
function lockFor(tarball: string): object {
  const lock = JSON.parse(readFileSync(join(REPO_ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockEntry> };
  const root = lock.packages[''] as LockEntry;
  const integrity = `sha512-${createHash('sha512').update(readFileSync(join(work, 'install', tarball))).digest('base64')}`;
  const packages: Record<string, LockEntry> = {
    '': { name: 'pack-test', version: '1.0.0', dependencies: { [pkg.name]: `file:${tarball}` } },
    [`node_modules/${pkg.name}`]: { version: pkg.version, resolved: `file:${tarball}`, integrity, license: root.license, dependencies: root.dependencies, bin: root.bin, engines: root.engines },
  };
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (path === '' || entry.dev) continue;
    const name = entry.name ?? path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);
    packages[path] = entry.resolved || entry.inBundle || entry.link ? entry : { ...entry, resolved: `https://registry.npmjs.org/${name}/-/${name.split('/').pop()}-${entry.version}.tgz` };
  }
  return { name: 'pack-test', version: '1.0.0', lockfileVersion: 3, requires: true, packages };
}

let tarball: string;
let files: string[];

beforeAll(() => {
  mkdirSync(join(work, 'install'));
  const pack = run('npm', ['pack', '--json', '--pack-destination', join(work, 'install')], REPO_ROOT);
  expect(pack.status, pack.stderr).toBe(0);
  const [info] = JSON.parse(pack.stdout) as { filename: string; files: { path: string }[] }[];
  tarball = info!.filename;
  files = info!.files.map((f) => f.path);
}, 300_000);

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('npm pack', () => {
  it('packs what the command needs, and not the tests, the benchmarks or the CDK app', () => {
    expect(files).toEqual(expect.arrayContaining(['package.json', 'README.md', 'LICENSE', 'tsconfig.json', 'bin/capture-replay.js', 'bin/capture-replay.ts', 'lambdas/local/replay/command.ts', 'lambdas/core/run/replay.ts']));
    expect(files.some((f) => f.startsWith('samples/datacapture/') && f.endsWith('.jsonl'))).toBe(true);
    for (const prefix of ['test/', 'bench/', 'lib/', 'bin/app.ts', 'lambdas/handlers/', 'node_modules/', 'cdk.json']) {
      expect(files.filter((f) => f.startsWith(prefix)), prefix).toEqual([]);
    }
  });

  it('declares what the command needs at run time as dependencies (tsx among them), and the CDK app\'s as devDependencies', () => {
    expect(Object.keys(pkg.dependencies)).toEqual(expect.arrayContaining(['tsx', 'commander', 'undici', 'zod', '@aws-sdk/client-sagemaker-runtime', '@aws-sdk/client-sqs']));
    expect(Object.keys(pkg.dependencies)).not.toContain('aws-cdk-lib');
  });
});

describe('installed from the tarball, run outside the clone', () => {
  let installed: string | null = null;
  let skipped = '';

  beforeAll(() => {
    const dir = join(work, 'install');
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'pack-test', version: '1.0.0', private: true, dependencies: { [pkg.name]: `file:${tarball}` } }, null, 2));
    writeFileSync(join(dir, 'package-lock.json'), JSON.stringify(lockFor(tarball), null, 2));
    const ci = run('npm', ['ci', '--offline', '--ignore-scripts', '--no-audit', '--no-fund'], dir, 240_000);
    if (ci.status === 0) installed = join(dir, 'node_modules', '.bin', 'capture-replay');
    else if (/ENOTCACHED/.test(ci.stderr)) skipped = ci.stderr.split('\n').find((l) => l.includes('ENOTCACHED') || l.includes('request to')) ?? 'ENOTCACHED';
    else throw new Error(`npm ci --offline failed:\n${ci.stderr.slice(-2000)}`);
  }, 300_000);

  const elsewhere = () => mkdtempSync(join(work, 'cwd-'));

  it('capture-replay --version', (context) => {
    if (!installed) {
      if (process.env.CI === 'true') throw new Error(`npm's cache cannot install the package offline: ${skipped}`);
      console.warn(`[skipped] offline install from npm's cache: ${skipped}`);
      return context.skip();
    }
    const version = run(installed, ['--version'], elsewhere());
    expect(version.status, version.stderr).toBe(0);
    expect(version.stdout.trim()).toBe(pkg.version);
  });

  it('capture-replay demo --no-progress', (context) => {
    if (!installed) return context.skip();
    const cwd = elsewhere();
    const demo = run(installed, ['demo', '--no-progress'], cwd);
    expect(demo.status, demo.stderr.slice(-2000)).toBe(0);
    expect(demo.stdout).toMatch(/sagemaker vs mock: paired/);
    const [runId, tabularRunId] = readdirSync(join(cwd, 'capture-replay-out')).filter((name) => name !== 'demo-captures').sort();
    expect(tabularRunId).toBe(`${runId}-tabular`);
    expect(readdirSync(join(cwd, 'capture-replay-out', runId as string)).sort()).toEqual(['comparison.json', 'ingest_report.json', 'mock', 'report.html', 'sagemaker']);
  }, 300_000);
});

describe('linked (as `npm link` installs it), run from another folder', () => {
  it('finds its package.json, its tsconfig and its sample wherever it is run from', () => {
    const prefix = join(work, 'linked');
    mkdirSync(join(prefix, 'node_modules', '.bin'), { recursive: true });
    symlinkSync(REPO_ROOT, join(prefix, 'node_modules', pkg.name), 'dir');
    symlinkSync(join('..', pkg.name, pkg.bin['capture-replay'] as string), join(prefix, 'node_modules', '.bin', 'capture-replay'));
    const cwd = mkdtempSync(join(work, 'cwd-'));
    // A tsconfig in the user's folder that would hijack an import if tsx read it (as it does
    // without being told which tsconfig to use).
    writeFileSync(join(cwd, 'trap.ts'), 'throw new Error("the tsconfig of the current folder was used");\n');
    writeFileSync(join(cwd, 'tsconfig.json'), JSON.stringify({ compilerOptions: { baseUrl: '.', paths: { commander: ['./trap.ts'] } } }));
    const bin = join(prefix, 'node_modules', '.bin', 'capture-replay');
    const version = run(bin, ['--version'], cwd);
    expect(version.status, version.stderr).toBe(0);
    expect(version.stdout.trim()).toBe(pkg.version);
    const usage = run(bin, ['replay', 'x', '--url', 'localhost:8000'], cwd);
    expect(usage.status).toBe(2);
  });
});
