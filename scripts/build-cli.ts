/**
 * The CLI compiled to JavaScript: `npm run build` writes dist/, which the package ships and its
 * bin runs (package.json: `bin`, `files`; `prepare` builds it on `npm ci` in the clone and on
 * `npm pack`). Every start of the CLI runs it: no TypeScript compiler at run time.
 *
 * What it writes, and how: buildCli.
 *
 * The tests run this build (test/support/cli-bundle.ts, once per run). `node --import tsx
 * scripts/build-cli.ts [outdir]`.
 */
import { build, type Plugin } from 'esbuild';
import { chmodSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sourceImportMetaUrls } from './source-urls';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** Where `npm run build` writes, and what package.json's bin and files name. */
export const DIST = join(ROOT, 'dist');
/** The CLI's entry in the output folder. */
export const CLI_FILE = 'capture-replay.mjs';
/** The bundled packages' licenses, beside the bundle. */
const NOTICES_FILE = 'THIRD-PARTY-NOTICES.txt';
const ENTRIES = { 'capture-replay': 'bin/capture-replay.ts', 'fire-worker': 'lambdas/local/fire-worker.ts' };
const FIRE_WORKERS_DIR = join(ROOT, 'lambdas/local');

export interface BuiltCli {
  /** The CLI's entry (dist/capture-replay.mjs). */
  cli: string;
  /** Files written (the others were already as built). */
  written: string[];
}

/**
 * - dist/capture-replay.mjs: the command (bin/capture-replay.ts); dist/fire-worker.mjs: the
 *   entry of a fire worker thread (lambdas/local/fire-worker.ts), which fire-workers.ts starts
 *   from here in the built CLI (CR_BUILT_FIRE_WORKER below).
 * - The CLI's modules and its packages in one module graph, split where the CLI imports lazily
 *   (each command's module, the S3 client) into chunks beside the entries: a start loads and
 *   compiles its own command's code, not every command's. `--version` or a usage error loads
 *   the entry and commander only.
 * - Each of the repository's modules keeps its source file's `import.meta.url`, written relative
 *   to dist/ (source-urls.ts): the CLI finds package.json and the bundled sample beside dist/,
 *   in the clone and in the installed package alike.
 * - The packages bundled are named with their licenses (and NOTICE files) in
 *   dist/THIRD-PARTY-NOTICES.txt, which ships beside them.
 * - A file is written only when its bytes change, through a temporary file renamed over it, and
 *   the chunks of an earlier build are removed: a CLI started meanwhile (a test run builds while
 *   `npm pack`'s prepare builds too) reads one build's whole file, never half of one.
 */
export async function buildCli(outdir = DIST): Promise<BuiltCli> {
  const out = resolve(outdir);
  const result = await build({
    entryPoints: Object.fromEntries(Object.entries(ENTRIES).map(([name, file]) => [name, join(ROOT, file)])),
    outdir: out,
    outExtension: { '.js': '.mjs' },
    splitting: true,
    // Chunks beside the entries: every output file is in `out`, so a module's URL relative to it holds in any of them.
    chunkNames: '[name]-[hash]',
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node22',
    write: false,
    metafile: true,
    // The packages' CommonJS code calls require(): given one, as Node gives a module.
    banner: {
      js: "import { createRequire as __crCreateRequire } from 'node:module'; const require = __crCreateRequire(import.meta.url);",
    },
    // fire-workers.ts starts its threads on the compiled worker, named relative to its own source.
    define: {
      CR_BUILT_FIRE_WORKER: JSON.stringify(
        relative(FIRE_WORKERS_DIR, join(out, 'fire-worker.mjs')).split(sep).join('/'),
      ),
    },
    plugins: [
      namedExportsOfLazyPackages(ROOT),
      sourceImportMetaUrls(
        ROOT,
        Object.values(ENTRIES).map((f) => join(ROOT, f)),
        { relativeTo: out },
      ),
    ],
    logLevel: 'error',
  });
  mkdirSync(out, { recursive: true });
  // Readable by every user, as an installed CLI is: root's tests run it as `nobody` too (cli-fuzz.test.ts).
  chmodSync(out, 0o755);
  const files = [
    ...result.outputFiles.map((f) => ({ path: f.path, contents: f.contents })),
    { path: join(out, NOTICES_FILE), contents: Buffer.from(thirdPartyNotices(Object.keys(result.metafile.inputs))) },
  ];
  const written = files.filter((file) => writeIfChanged(file.path, file.contents)).map((file) => basename(file.path));
  const current = new Set(files.map((file) => basename(file.path)));
  chmodSync(join(out, CLI_FILE), 0o755);
  for (const name of readdirSync(out)) {
    if (name.endsWith('.mjs') && !current.has(name)) rmSync(join(out, name), { force: true });
  }
  return { cli: join(out, CLI_FILE), written };
}

/** Writes `contents` to `path` unless it holds them already, through a temporary file renamed over it; whether it wrote. */
function writeIfChanged(path: string, contents: Uint8Array): boolean {
  try {
    if (readFileSync(path).equals(contents)) return false;
  } catch {
    // not there yet
  }
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, contents, { mode: 0o644 });
  renameSync(temporary, path);
  return true;
}

/**
 * The packages among the bundle's inputs (esbuild's metafile, paths relative to the working
 * folder), each named with its version and declared license, and the texts of their LICENSE
 * and NOTICE files, each text once for the packages that carry it word for word.
 */
export function thirdPartyNotices(inputs: readonly string[]): string {
  const packageDirs = new Set<string>();
  for (const input of inputs) {
    const match = /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(resolve(input).split(sep).join('/'));
    if (match) packageDirs.add(match[1]!);
  }
  const byText = new Map<string, string[]>();
  const unlicensed: string[] = [];
  const names: string[] = [];
  for (const dir of [...packageDirs].sort()) {
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
      name: string;
      version: string;
      license?: string;
    };
    const label = `${pkg.name} ${pkg.version} (${pkg.license ?? 'no license declared'})`;
    names.push(label);
    const texts = readdirSync(dir)
      .filter((f) => /^(licen[cs]e|notice|copying)/i.test(f))
      .sort();
    if (texts.length === 0) unlicensed.push(label);
    for (const file of texts) {
      const text = readFileSync(join(dir, file), 'utf8').trim();
      byText.set(text, [...(byText.get(text) ?? []), `${pkg.name} (${file})`]);
    }
  }
  const sections = [...byText].map(([text, owners]) => `---- ${owners.join(', ')}\n\n${text}\n`);
  return [
    'The built capture-replay CLI (dist/*.mjs) bundles code of the packages below. Their license and notice ' +
      'texts follow, each text once with the packages whose files carry it.',
    '',
    ...names.map((n) => `  ${n}`),
    ...(unlicensed.length > 0
      ? [
          '',
          'Packages without a license file of their own (their declared license applies):',
          ...unlicensed.map((n) => `  ${n}`),
        ]
      : []),
    '',
    ...sections,
  ].join('\n');
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
      b.onResolve({ filter: /^[^./]/ }, (args) =>
        args.kind === 'dynamic-import' && !args.path.startsWith('node:')
          ? { path: args.path, namespace: 'lazy-package' }
          : undefined,
      );
      b.onLoad({ filter: /.*/, namespace: 'lazy-package' }, (args) => {
        const spec = JSON.stringify(args.path);
        let names: string[];
        try {
          names = Object.keys(requireFromRepo(args.path) as object).filter(
            (n) => n !== 'default' && /^[A-Za-z_$][\w$]*$/.test(n),
          );
        } catch (error) {
          // An ES module package Node cannot require (before Node 22.12, or one with top-level await).
          if (!['ERR_REQUIRE_ESM', 'ERR_REQUIRE_ASYNC_MODULE'].includes((error as NodeJS.ErrnoException).code ?? ''))
            throw error;
          return { contents: `export * from ${spec};`, resolveDir: repoRoot, loader: 'js' };
        }
        const lines = [`import * as lazy from ${spec};`, ...names.map((n) => `export const ${n} = lazy.${n};`)];
        return { contents: lines.join('\n'), resolveDir: repoRoot, loader: 'js' };
      });
    },
  };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const started = performance.now();
  const built = await buildCli(process.argv[2] ?? DIST);
  const changed = built.written.length === 0 ? 'unchanged' : `${built.written.length} file(s) written`;
  // On stderr: `npm pack --json` (whose prepare runs this) keeps stdout for its JSON.
  process.stderr.write(
    `built ${relative(process.cwd(), built.cli) || built.cli} (${changed}) in ${Math.round(performance.now() - started)} ms\n`,
  );
}
