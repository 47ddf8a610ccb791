/**
 * `verify-deploy` and `link` usage errors as a user meets them (the built CLI, dist/capture-replay.mjs): exit 2,
 * one line naming the flag as typed and one pointing to --help, nothing on stdout, and no AWS
 * call (the endpoint is a closed port: any call would fail with a different message).
 */
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/processes';

describe('usage errors on the command line (exit 2, before any AWS call)', () => {
  const env = {
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'x',
    AWS_SECRET_ACCESS_KEY: 'x',
    AWS_ENDPOINT_URL: 'http://127.0.0.1:9',
  };
  const cases: [string[], string][] = [
    [['link'], 'capture-replay link: give one of <s3-uri>, --run <run-id> or --schedule <name>'],
    [
      ['link', '--run', 'file-1', '--expires', '604801'],
      'capture-replay link: --expires must be a whole number of seconds from 1 to 604800 (got "604801")',
    ],
    [
      ['verify-deploy', '--timeout', 'soon'],
      'capture-replay verify-deploy: --timeout must be a number > 0 (got "soon")',
    ],
    [['verify-deploy', '--stak', 'X'], "capture-replay verify-deploy: unknown option '--stak'; did you mean --stack?"],
  ];
  it.each(cases)('%j', async (args, line) => {
    const run = await runCli(args, { env });
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe(`${line}\nRun 'capture-replay ${args[0]} --help' for the options.\n`);
  });
});
