/**
 * An esbuild plugin for bundles of the repository's TypeScript (the built CLI,
 * scripts/build-cli.ts; the tests' bundles of the mock servers, test/support/processes.ts): each
 * of the repository's modules keeps its own `import.meta.url`, its source file's URL, as when
 * it runs from source. Files found next to a module (package.json, the bundled sample) are found
 * next to its source, and a module that starts a server when it is the main script
 * (`process.argv[1]` is its file) is not taken for the bundle's main script. The entries keep
 * `import.meta.url` as it is (the bundle's own file), so an entry run as a script is the main one.
 *
 * `relativeTo` (the output folder, every output file in it): the URL is written relative to
 * the output file, `new URL("../lambdas/local/program.ts", import.meta.url).href`, so that the
 * bundle can be moved with the files beside it (the package: dist/ beside package.json and
 * samples/). Without it, the source's absolute URL is written (a bundle used where it was made).
 */
import type { Plugin } from 'esbuild';
import { readFileSync } from 'node:fs';
import { relative, resolve, sep } from 'node:path';
import { pathToFileURL } from 'node:url';

export function sourceImportMetaUrls(
  repoRoot: string,
  entries: readonly string[],
  options: { relativeTo?: string } = {},
): Plugin {
  const keep = new Set(entries.map((e) => resolve(e)));
  const urlOf = (path: string) =>
    options.relativeTo === undefined
      ? JSON.stringify(pathToFileURL(path).href)
      : `new URL(${JSON.stringify(relative(options.relativeTo, path).split(sep).join('/'))}, import.meta.url).href`;
  return {
    name: 'source-import-meta-url',
    setup(build) {
      build.onLoad({ filter: /\.[cm]?[jt]s$/ }, (args) => {
        if (!args.path.startsWith(repoRoot) || args.path.includes('/node_modules/') || keep.has(args.path))
          return undefined;
        const text = readFileSync(args.path, 'utf8');
        if (!text.includes('import.meta.url')) return undefined;
        return {
          contents: text.replaceAll('import.meta.url', urlOf(args.path)),
          loader: /\.[cm]?ts$/.test(args.path) ? 'ts' : 'js',
        };
      });
    },
  };
}
