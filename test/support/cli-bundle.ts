/**
 * Vitest global setup: the CLI built as the package ships it
 * (scripts/build-cli.ts: dist/capture-replay.mjs and its chunks, the same build `npm run build`
 * and `npm pack` make), once per run, and every start of the CLI in the tests runs it, as a
 * user's does (startCli, cliScript in processes.ts). The build writes only the files whose bytes
 * change, each whole, so a run that finds dist/ as built rewrites nothing.
 *
 * The first global setup names the entry in CR_TEST_CLI_BUNDLE; another that finds it (the
 * next project's) builds nothing.
 */
import { buildCli } from '../../scripts/build-cli';
import { CLI_BUNDLE_ENV } from './processes';

export default async function setup(): Promise<undefined> {
  if (process.env[CLI_BUNDLE_ENV]) return undefined;
  process.env[CLI_BUNDLE_ENV] = (await buildCli()).cli;
  return undefined;
}
