/**
 * An esbuild plugin for the bundles the tests run in place of TypeScript entries (the CLI,
 * the mock servers): each of the repository's modules keeps its own `import.meta.url`, written
 * into the bundle as its source file's URL, as it has under tsx. Files found next to a module
 * are found next to its source, and a module that starts a server when it is the main script
 * (`process.argv[1]` is its file) is not taken for the bundle's main script. The entries keep
 * `import.meta.url` as it is (the bundle's own file), so an entry run as a script is the main one.
 */
import type { Plugin } from 'esbuild';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

export function sourceImportMetaUrls(repoRoot: string, entries: readonly string[]): Plugin {
  const keep = new Set(entries.map((e) => resolve(e)));
  return {
    name: 'source-import-meta-url',
    setup(build) {
      build.onLoad({ filter: /\.[cm]?[jt]s$/ }, (args) => {
        if (!args.path.startsWith(repoRoot) || args.path.includes('/node_modules/') || keep.has(args.path)) return undefined;
        const text = readFileSync(args.path, 'utf8');
        if (!text.includes('import.meta.url')) return undefined;
        return { contents: text.replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href)), loader: /\.[cm]?ts$/.test(args.path) ? 'ts' : 'js' };
      });
    },
  };
}
