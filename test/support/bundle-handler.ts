/**
 * One handler bundled as the stack bundles it (lib/replay-function.ts: esbuild, CommonJS for
 * Node 22, minified, the AWS SDK inside, a source map without the sources), without a whole
 * `cdk synth`: for tests that run a cold invocation many times (test/support/invoke-bundle.mjs)
 * and need no template. test/integration/bundles.test.ts checks the synthesized bundles.
 */
import { build } from 'esbuild';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from './processes';

export interface HandlerBundle {
  /** The directory Lambda would unzip (index.js, index.js.map): outside the repository, no node_modules above it. */
  assetDir: string;
  cleanup(): void;
}

export async function bundleHandler(name: 'fire' | 'ingest' | 'collect'): Promise<HandlerBundle> {
  const assetDir = mkdtempSync(join(tmpdir(), `bundle-${name}-`));
  try {
    await build({
      entryPoints: [join(REPO_ROOT, 'lambdas', 'handlers', `${name}.ts`)],
      outfile: join(assetDir, 'index.js'),
      bundle: true,
      platform: 'node',
      target: 'node22',
      format: 'cjs',
      minify: true,
      sourcemap: true,
      sourcesContent: false,
      logLevel: 'error',
    });
  } catch (error) {
    rmSync(assetDir, { recursive: true, force: true });
    throw error;
  }
  return { assetDir, cleanup: () => rmSync(assetDir, { recursive: true, force: true }) };
}
