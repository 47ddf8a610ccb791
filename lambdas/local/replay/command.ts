/**
 * `capture-replay replay`: the flags turned into one config (config.ts; a problem is a usage
 * error, exit 2), the results folder claimed and created (output-folder.ts: an earlier run's
 * results are never replaced silently, an unwritable --out is said before anything is sent),
 * the captures indexed (ingest.ts), the schedule fired (fire.ts), and what it did said with
 * its exit code (outcome.ts); with --cloudwatch, the run's metrics (cloudwatch.ts).
 */
import { join } from 'node:path';
import { unstreamedGoodputWarning, usageMessage, USAGE_EXIT } from '../cli-usage';
import { cloudWatchOutputOf, type CloudWatchOutput } from '../cloudwatch-output';
import { claimRunFolder, createOutputFolder } from '../output-folder';
import { terminalLine } from '../terminal-text';
import { replayCloudWatch } from './cloudwatch';
import { replayConfig, type ReplayCommandOptions, type ReplayConfig } from './config';
import { fireReplay } from './fire';
import { indexCaptures } from './ingest';
import { fail, type CommandIo } from './io';
import { replayOutcome } from './outcome';

export async function replayCommand(options: ReplayCommandOptions): Promise<number> {
  const io: CommandIo = { out: options.stdout ?? process.stdout, err: options.stderr ?? process.stderr };
  const config = replayConfig(options);
  if (typeof config === 'string') return usage(io, config);
  const cloudwatch = cloudWatchOutputOf(options);
  if (typeof cloudwatch === 'string') return usage(io, cloudwatch);
  const runDir = join(config.out, config.runId);
  const unwritable = await createOutputFolder(config.out);
  if (unwritable) return fail(io, `--out ${config.out}: ${unwritable}`);
  const claimed = await claimRunFolder(runDir, config.runId, config.overwrite);
  if (claimed) return usage(io, claimed);
  const unstreamed = unstreamedGoodputWarning(config.goodput, config.plan.forceStreaming === true);
  if (unstreamed) io.err.write(`capture-replay: ${unstreamed}\n`);
  return runReplayCommand(config, io, cloudwatch);
}

function usage(io: CommandIo, message: string): number {
  io.err.write(usageMessage('replay', terminalLine(message)));
  return USAGE_EXIT;
}

/** The replay a config describes, start to exit code (its results folder made ready by the caller); with `cloudwatch`, its metrics last. */
export async function runReplayCommand(
  config: ReplayConfig,
  io: CommandIo,
  cloudwatch: CloudWatchOutput | null = null,
): Promise<number> {
  const captures = await indexCaptures(config, io);
  if (typeof captures === 'number') return captures;
  const { apiKeyEnv } = config.request;
  // Set: replayConfig refuses an --api-key-env that is not.
  const apiKey = apiKeyEnv ? process.env[apiKeyEnv] : undefined;
  const fired = await fireReplay(config, io, captures, apiKey);
  if (typeof fired === 'number') return fired;
  const code = replayOutcome(config, io, fired);
  return cloudwatch ? replayCloudWatch(cloudwatch, config, io, fired, code) : code;
}
