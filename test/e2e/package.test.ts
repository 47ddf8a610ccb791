/**
 * The package outside the clone, as a user gets it: `npm pack` (whose prepack builds the CLI,
 * scripts/build-cli.ts), then the tarball installed into an empty folder, installed globally,
 * and run by `npx --package <tarball>`, each run from yet another folder; and the clone linked
 * as `npm link` does.
 *
 * The package carries the compiled CLI (dist/) and its sample, nothing to compile and no
 * dependency to install: the bundle holds the packages it uses. So every install here is
 * offline, from the tarball alone, with an npm cache of the test's own.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/processes';

interface PackageJson {
  name: string;
  version: string;
  license: string;
  bin: Record<string, string>;
  engines: Record<string, string>;
  scripts: Record<string, string>;
  dependencies?: Record<string, string>;
  devDependencies: Record<string, string>;
}

const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as PackageJson;
const work = mkdtempSync(join(tmpdir(), 'capture-replay-pack-'));
const env: NodeJS.ProcessEnv = {
  ...process.env,
  npm_config_cache: join(work, 'npm-cache'),
  npm_config_audit: 'false',
  npm_config_fund: 'false',
  npm_config_update_notifier: 'false',
};

function run(command: string, args: string[], cwd: string, timeout = 240_000) {
  return spawnSync(command, args, { cwd, env, encoding: 'utf8', timeout });
}

let tarball: string;
let files: string[];

beforeAll(() => {
  mkdirSync(join(work, 'install'));
  const pack = run('npm', ['pack', '--json', '--pack-destination', join(work, 'install')], REPO_ROOT);
  expect(pack.status, pack.stderr).toBe(0);
  const [info] = JSON.parse(pack.stdout) as { filename: string; files: { path: string }[] }[];
  tarball = join(work, 'install', info!.filename);
  files = info!.files.map((f) => f.path);
}, 300_000);

afterAll(() => rmSync(work, { recursive: true, force: true }));

const elsewhere = () => mkdtempSync(join(work, 'cwd-'));

describe('npm pack', () => {
  it('packs the compiled CLI (prepack builds it) and the sample: no TypeScript, tests, benchmarks or CDK app', () => {
    expect(files).toEqual(
      expect.arrayContaining([
        'package.json',
        'README.md',
        'LICENSE',
        'dist/capture-replay.mjs',
        'dist/fire-worker.mjs',
        'dist/THIRD-PARTY-NOTICES.txt',
      ]),
    );
    expect(files.some((f) => f.startsWith('samples/datacapture/') && f.endsWith('.jsonl'))).toBe(true);
    // Every file of the build, as prepack left it in dist/.
    expect(files.filter((f) => f.startsWith('dist/')).sort()).toEqual(
      readdirSync(join(REPO_ROOT, 'dist'))
        .map((f) => `dist/${f}`)
        .sort(),
    );
    expect(files.filter((f) => /\.[cm]?ts$/.test(f))).toEqual([]);
    for (const prefix of [
      'lambdas/',
      'bin/',
      'test/',
      'bench/',
      'lib/',
      'scripts/',
      'node_modules/',
      'cdk.json',
      'tsconfig.json',
    ]) {
      expect(
        files.filter((f) => f.startsWith(prefix)),
        prefix,
      ).toEqual([]);
    }
  });

  it(
    'declares no run-time dependency (the bundle holds its packages; tsx, esbuild and the CDK are ' +
      'devDependencies) and no install script',
    () => {
      expect(pkg.bin).toEqual({ 'capture-replay': 'dist/capture-replay.mjs' });
      expect(pkg.dependencies).toBeUndefined();
      expect(Object.keys(pkg.devDependencies)).toEqual(
        expect.arrayContaining(['tsx', 'esbuild', 'aws-cdk-lib', 'commander', 'undici']),
      );
      expect(pkg.scripts.prepack).toMatch(/\bbuild\b/);
      // An install of the tarball runs nothing, and npm 11 has no install script to ask about.
      expect(
        Object.keys(pkg.scripts).filter((s) => ['preinstall', 'install', 'postinstall', 'prepare'].includes(s)),
      ).toEqual([]);
    },
  );
});

describe('installed from the tarball, run outside the clone', () => {
  let installed = '';

  beforeAll(() => {
    const dir = join(work, 'install');
    const name = tarball.slice(tarball.lastIndexOf('/') + 1);
    const integrity = `sha512-${createHash('sha512').update(readFileSync(tarball)).digest('base64')}`;
    writeFileSync(
      join(dir, 'package.json'),
      JSON.stringify(
        { name: 'pack-test', version: '1.0.0', private: true, dependencies: { [pkg.name]: `file:${name}` } },
        null,
        2,
      ),
    );
    const lock = {
      name: 'pack-test',
      version: '1.0.0',
      lockfileVersion: 3,
      requires: true,
      packages: {
        '': { name: 'pack-test', version: '1.0.0', dependencies: { [pkg.name]: `file:${name}` } },
        [`node_modules/${pkg.name}`]: {
          version: pkg.version,
          resolved: `file:${name}`,
          integrity,
          license: pkg.license,
          bin: pkg.bin,
          engines: pkg.engines,
        },
      },
    };
    writeFileSync(join(dir, 'package-lock.json'), JSON.stringify(lock, null, 2));
    const ci = run('npm', ['ci', '--offline'], dir);
    expect(ci.status, ci.stderr.slice(-2000)).toBe(0);
    expect(ci.stderr).not.toMatch(/install-scripts|EBADENGINE/);
    // The package alone: nothing else to install.
    expect(readdirSync(join(dir, 'node_modules')).filter((f) => !f.startsWith('.'))).toEqual([pkg.name]);
    installed = join(dir, 'node_modules', '.bin', 'capture-replay');
  }, 300_000);

  it('capture-replay --version', () => {
    const version = run(installed, ['--version'], elsewhere());
    expect(version.status, version.stderr).toBe(0);
    expect(version.stdout.trim()).toBe(pkg.version);
  });

  it('capture-replay demo --no-progress', () => {
    const cwd = elsewhere();
    const demo = run(installed, ['demo', '--no-progress'], cwd);
    expect(demo.status, demo.stderr.slice(-2000)).toBe(0);
    expect(demo.stdout).toMatch(/sagemaker vs mock: paired/);
    // No warning from Node or the SDK (a process warning starts `(node:<pid>)`).
    expect(demo.stderr).not.toMatch(/\(node:\d+\)|NodeVersionSupportWarning/);
    const [runId, tabularRunId] = readdirSync(join(cwd, 'capture-replay-out'))
      .filter((name) => name !== 'demo-captures')
      .sort();
    expect(tabularRunId).toBe(`${runId}-tabular`);
    expect(readdirSync(join(cwd, 'capture-replay-out', runId as string)).sort()).toEqual([
      'comparison.json',
      'ingest_report.json',
      'mock',
      'report.html',
      'sagemaker',
    ]);
  }, 300_000);

  it('npm install -g <tarball>, then capture-replay from any folder', () => {
    const prefix = join(work, 'global');
    const install = run('npm', ['install', '--global', '--prefix', prefix, '--offline', tarball], elsewhere());
    expect(install.status, install.stderr.slice(-2000)).toBe(0);
    expect(install.stderr).not.toMatch(/install-scripts|EBADENGINE/);
    const version = run(join(prefix, 'bin', 'capture-replay'), ['--version'], elsewhere());
    expect(version.status, version.stderr).toBe(0);
    expect(version.stdout.trim()).toBe(pkg.version);
  }, 300_000);

  it('npx --package <tarball> capture-replay, without installing', () => {
    const npx = run('npx', ['--yes', '--offline', '--package', tarball, 'capture-replay', '--version'], elsewhere());
    expect(npx.status, npx.stderr.slice(-2000)).toBe(0);
    expect(npx.stdout.trim()).toBe(pkg.version);
  }, 300_000);
});

describe('linked (as `npm link` installs it), run from another folder', () => {
  it('finds its package.json wherever it is run from', () => {
    const prefix = join(work, 'linked');
    mkdirSync(join(prefix, 'node_modules', '.bin'), { recursive: true });
    symlinkSync(REPO_ROOT, join(prefix, 'node_modules', pkg.name), 'dir');
    symlinkSync(
      join('..', pkg.name, pkg.bin['capture-replay'] as string),
      join(prefix, 'node_modules', '.bin', 'capture-replay'),
    );
    const cwd = elsewhere();
    const bin = join(prefix, 'node_modules', '.bin', 'capture-replay');
    const version = run(bin, ['--version'], cwd);
    expect(version.status, version.stderr).toBe(0);
    expect(version.stdout.trim()).toBe(pkg.version);
    const usage = run(bin, ['replay', 'x', '--url', 'localhost:8000'], cwd);
    expect(usage.status).toBe(2);
  });
});
