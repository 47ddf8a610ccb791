/**
 * Vitest global setup of the tiers that start the CLI: the CLI (bin/capture-replay.ts, every
 * module it imports and its packages) bundled once per run into one ES module with esbuild,
 * which is also what tsx uses to compile each file. startCli runs the bundle: a CLI start
 * through tsx resolves and compiles every module in a loader thread, several times the CPU of
 * the command itself (measured in docs/testing.md), and the tests start the CLI many times over. The launcher itself
 * (bin/capture-replay.js with tsx) is run by the tests that spawn it by path and by the package
 * test, as a user installs it.
 *
 * Each source module keeps its own `import.meta.url` (source-urls.ts), as under tsx: the CLI
 * finds package.json, the samples and the fire worker's entry next to its source, and a mock
 * server module is not taken for the main script.
 *
 * `CR_TEST_CLI=launcher` runs every CLI start through bin/capture-replay.js instead. `npm test`
 * makes the bundle once for both its vitest processes (scripts/test-all.ts).
 */
import { build } from 'esbuild';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI_BUNDLE_ENV, REPO_ROOT } from './processes';
import { sourceImportMetaUrls } from './source-urls';

export default async function setup(): Promise<(() => void) | undefined> {
  // The launcher asked for, or the bundle already made for the run (npm test: scripts/test-all.ts).
  if (process.env.CR_TEST_CLI === 'launcher' || process.env[CLI_BUNDLE_ENV]) return undefined;
  const dir = mkdtempSync(join(tmpdir(), 'cr-cli-bundle-'));
  // Readable by every user, as an installed CLI is: root's tests run it as `nobody` too (cli-fuzz.test.ts).
  chmodSync(dir, 0o755);
  const outfile = join(dir, 'capture-replay.mjs');
  await build({
    entryPoints: [join(REPO_ROOT, 'bin/capture-replay.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    // The packages' CommonJS code calls require(): given one, as Node gives a module.
    banner: { js: "import { createRequire as __crCreateRequire } from 'node:module'; const require = __crCreateRequire(import.meta.url);" },
    plugins: [sourceImportMetaUrls(REPO_ROOT, [])],
    logLevel: 'error',
  });
  process.env[CLI_BUNDLE_ENV] = outfile;
  return () => rmSync(dir, { recursive: true, force: true });
}
