/**
 * The CLI a benchmark starts, as users start it: the built one. For this clone, built first
 * (scripts/build-cli.ts, as `npm run build`: nothing is rewritten when dist/ is up to date);
 * for another checkout (`--repo`), the file its package.json's bin names, as that checkout
 * built it (`npm run build` there; an older checkout's bin/capture-replay.js, through tsx).
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { buildCli, ROOT } from '../scripts/build-cli';

export async function cliOf(repo: string): Promise<string> {
  if (resolve(repo) === resolve(ROOT)) return (await buildCli()).cli;
  const bin = (JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { bin: Record<string, string> }).bin[
    'capture-replay'
  ];
  if (!bin) throw new Error(`${repo}/package.json names no capture-replay bin`);
  return join(repo, bin);
}
