/**
 * Vitest global setup of the tiers that start the CLI: the CLI (bin/capture-replay.ts, every
 * module it imports and its packages) bundled once per run with esbuild, which is also what tsx
 * uses to compile each file. The bundle is split where the CLI imports lazily (each command's
 * module, the S3 client): a start compiles the code of its command, not every command's, as a
 * start through tsx loads only what it imports. startCli runs the bundle: a CLI start
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
import { build, type Plugin } from 'esbuild';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
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
  await build({
    entryPoints: [join(REPO_ROOT, 'bin/capture-replay.ts')],
    outdir: dir,
    outExtension: { '.js': '.mjs' },
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    // The packages' CommonJS code calls require(): given one, as Node gives a module.
    banner: { js: "import { createRequire as __crCreateRequire } from 'node:module'; const require = __crCreateRequire(import.meta.url);" },
    plugins: [namedExportsOfLazyPackages(REPO_ROOT), sourceImportMetaUrls(REPO_ROOT, [])],
    logLevel: 'error',
  });
  process.env[CLI_BUNDLE_ENV] = join(dir, 'capture-replay.mjs');
  return () => rmSync(dir, { recursive: true, force: true });
}

/**
 * A package the CLI imports lazily (`await import('@aws-sdk/client-...')`) gets a chunk of its
 * own; a CommonJS package's chunk would export only `default`, where Node gives its named
 * exports too. Such an import is routed through a module that re-exports each of the package's
 * names, as Node finds them (an ES module package's own exports serve as they are).
 */
function namedExportsOfLazyPackages(repoRoot: string): Plugin {
  const requireFromRepo = createRequire(join(repoRoot, 'package.json'));
  return {
    name: 'named-exports-of-lazy-packages',
    setup(b) {
      b.onResolve({ filter: /^[^./]/ }, (args) => (args.kind === 'dynamic-import' && !args.path.startsWith('node:') ? { path: args.path, namespace: 'lazy-package' } : undefined));
      b.onLoad({ filter: /.*/, namespace: 'lazy-package' }, (args) => {
        const spec = JSON.stringify(args.path);
        let names: string[];
        try {
          names = Object.keys(requireFromRepo(args.path) as object).filter((n) => n !== 'default' && /^[A-Za-z_$][\w$]*$/.test(n));
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'ERR_REQUIRE_ESM') throw error;
          return { contents: `export * from ${spec};`, resolveDir: repoRoot, loader: 'js' };
        }
        const lines = [`import * as lazy from ${spec};`, ...names.map((n) => `export const ${n} = lazy.${n};`)];
        return { contents: lines.join('\n'), resolveDir: repoRoot, loader: 'js' };
      });
    },
  };
}
