/**
 * `capture-replay replay`: the flags turned into one config (config.ts; a problem is a usage
 * error, exit 2), the captures indexed (ingest.ts), the schedule fired (fire.ts), and what it
 * did said with its exit code (outcome.ts).
 */
import { usageMessage, USAGE_EXIT } from '../cli-usage';
import { replayConfig, type ReplayCommandOptions, type ReplayConfig } from './config';
import { fireReplay } from './fire';
import { indexCaptures } from './ingest';
import { fail, type CommandIo } from './io';
import { replayOutcome } from './outcome';

export async function replayCommand(options: ReplayCommandOptions): Promise<number> {
  const io: CommandIo = { out: options.stdout ?? process.stdout, err: options.stderr ?? process.stderr };
  const config = replayConfig(options);
  if (typeof config === 'string') {
    io.err.write(usageMessage('replay', config));
    return USAGE_EXIT;
  }
  return runReplayCommand(config, io);
}

/** The replay a config describes, start to exit code. */
export async function runReplayCommand(config: ReplayConfig, io: CommandIo): Promise<number> {
  const captures = await indexCaptures(config, io);
  if (typeof captures === 'number') return captures;
  const { apiKeyEnv } = config.request;
  const apiKey = apiKeyEnv ? process.env[apiKeyEnv] : undefined;
  if (apiKeyEnv && !apiKey) return fail(io, `--api-key-env ${apiKeyEnv}: that environment variable is not set`);
  const fired = await fireReplay(config, io, captures, apiKey);
  if (typeof fired === 'number') return fired;
  return replayOutcome(config, io, fired);
}
