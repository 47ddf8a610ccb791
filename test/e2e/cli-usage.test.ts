/**
 * The command line as a new user meets it, each case in its own process: usage errors (exit
 * 2, one line that names the flag typed, one line pointing to --help), --version, the demo
 * as a named command, no arguments, an unknown command, the reachability check before the
 * schedule, and --goodput reaching profile_export_aiperf.json.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, runCli, startMockProcess, type MockProcess } from '../support/processes';
import { buildProgram } from '../../lambdas/local/program';

const SAMPLE = join(REPO_ROOT, 'samples', 'datacapture');
const VERSION = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const work = mkdtempSync(join(tmpdir(), 'capture-replay-usage-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** A TCP port nothing listens on: bound, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const lines = (text: string) => text.split('\n').filter((l) => l.trim() !== '');

describe('usage errors: exit 2, one line naming the flag, one line of hint', () => {
  it.each([
    [
      'a URL without a scheme',
      ['--url', 'localhost:8000'],
      /^capture-replay replay: --url must be an http:\/\/ or https:\/\/ URL .*did you mean http:\/\/localhost:8000\?/,
    ],
    [
      'an end offset before the start offset',
      ['--url', 'http://127.0.0.1:9', '--start-offset', '5000', '--end-offset', '1000'],
      /^capture-replay replay: --end-offset \(1000\) is before --start-offset \(5000\)$/,
    ],
    [
      'a number that is not one',
      ['--url', 'http://127.0.0.1:9', '--time-scale', 'fast'],
      /^capture-replay replay: --time-scale must be a number > 0 \(got "fast"\)$/,
    ],
    [
      'a choice that is not one',
      ['--url', 'http://127.0.0.1:9', '--dispatch', 'both'],
      /^capture-replay replay: --dispatch "both": Allowed choices are parallel, sequential\.$/,
    ],
    [
      'a misspelled flag',
      ['--url', 'http://127.0.0.1:9', '--time-scal', '2'],
      /^capture-replay replay: unknown option '--time-scal'; did you mean --time-scale\?$/,
    ],
    [
      'both --url and --target',
      ['--url', 'http://127.0.0.1:9', '--target', 'B=http://127.0.0.1:9'],
      /^capture-replay replay: give either --url .* or --target NAME=URL .*, not both$/,
    ],
    [
      'a misspelled goodput metric',
      ['--url', 'http://127.0.0.1:9', '--goodput', 'time_to_frist_token:200'],
      /^capture-replay replay: --goodput: unknown metric "time_to_frist_token"; did you mean `time_to_first_token`\?/,
    ],
    [
      'a goodput pair without a value',
      ['--url', 'http://127.0.0.1:9', '--goodput', 'request_latency'],
      /^capture-replay replay: --goodput: "request_latency" is not metric:value/,
    ],
    ['a bad run id', ['--url', 'http://127.0.0.1:9', '--run-id', '../x'], /^capture-replay replay: --run-id must be /],
  ])('%s', async (_what, args, message) => {
    const run = await runCli(['replay', SAMPLE, ...args]);
    expect(run.code).toBe(2);
    const [first, hint, ...rest] = lines(run.stderr);
    expect(first).toMatch(message);
    expect(first).not.toMatch(/OffsetMs|timeScale|sampleRate/); // no internal field names
    expect(hint).toBe("Run 'capture-replay replay --help' for the options.");
    expect(rest).toEqual([]);
    expect(run.stdout).toBe('');
  });

  it.each([
    ['mock-server', ['--port', 'abc'], 'capture-replay mock-server: --port must be a number in [0, 65535] (got "abc")'],
    ['mock-sagemaker', ['--bogus'], "capture-replay mock-sagemaker: unknown option '--bogus'"],
  ])('the bundled %s too', async (command, args, message) => {
    const run = await runCli([command, ...args]);
    expect(run.code).toBe(2);
    expect(lines(run.stderr)).toEqual([message, `Run 'capture-replay ${command} --help' for the options.`]);
  });

  it('a missing argument of compare', async () => {
    const run = await runCli(['compare']);
    expect(run.code).toBe(2);
    expect(lines(run.stderr)).toEqual([
      "capture-replay compare: missing required argument 'results-dirs'",
      "Run 'capture-replay compare --help' for the options.",
    ]);
  });
});

describe('commands', () => {
  it('--version prints the version of package.json', async () => {
    const run = await runCli(['--version']);
    expect(run.code).toBe(0);
    expect(run.stdout.trim()).toBe(VERSION);
  });

  it('no arguments: a short usage on stderr, exit 2, and no demo', async () => {
    const run = await runCli([], { cwd: work });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^Usage: capture-replay <command> \[options\]/);
    expect(run.stderr).toContain('demo');
    expect(lines(run.stderr).length).toBeLessThanOrEqual(10);
    expect(run.stdout).toBe('');
  });

  it('an unknown command is named as one, with the closest command or the list', async () => {
    const typo = await runCli(['replya', SAMPLE]);
    expect(typo.code).toBe(2);
    expect(lines(typo.stderr)).toEqual([
      "capture-replay: unknown command 'replya'; did you mean replay?",
      "Run 'capture-replay --help' for the options.",
    ]);
    const other = await runCli(['frobnicate']);
    expect(other.code).toBe(2);
    const commands = buildProgram().commands.map((c) => c.name());
    expect(commands).toEqual(
      expect.arrayContaining([
        'replay',
        'compare',
        'schedule-now',
        'verify-deploy',
        'link',
        'mock-server',
        'mock-sagemaker',
        'demo',
      ]),
    );
    expect(lines(other.stderr)[0]).toBe(
      `capture-replay: unknown command 'frobnicate' (the commands are ${commands.join(', ')})`,
    );
  });

  it('--help lists the demo and the exit codes', async () => {
    const run = await runCli(['--help']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^ {2}demo \[options\]/m);
    expect(run.stdout).toMatch(/Exit codes:[\s\S]*\n {2}2 +usage error/);
  });
});

describe('preflight: every target reachable before the schedule starts', () => {
  it('fails fast against a closed port: exit 1, the cause, nothing scheduled', async () => {
    const port = await closedPort();
    const started = Date.now();
    const run = await runCli([
      'replay',
      SAMPLE,
      '--target',
      `A=http://127.0.0.1:${port}`,
      '--out',
      join(work, 'closed'),
      '--run-id',
      'closed',
      '--no-progress',
    ]);
    const seconds = (Date.now() - started) / 1000;
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      `Preflight: target A: FAILED: http://127.0.0.1:${port}: connection refused (nothing listens there) [ECONNREFUSED]`,
    );
    expect(run.stderr).toContain(
      'capture-replay: target A is not reachable, nothing was sent (check the URL, or skip this check with --no-preflight)',
    );
    expect(run.stderr).not.toMatch(/^\s+at /m); // no stack trace
    expect(run.stdout).toBe('');
    // The sample spans ten seconds: a run that went on would take more than ten; one stopped by
    // the preflight takes its process start-up, seconds on a loaded machine.
    expect(seconds).toBeLessThan(9.5);
  });

  it("names every unreachable target at once, and resolves a SageMaker target's region and credentials", async () => {
    const port = await closedPort();
    const run = await runCli(
      [
        'replay',
        SAMPLE,
        '--target',
        `A=http://127.0.0.1:${port}`,
        '--target',
        'B=sagemaker:ep?region=eu-west-1',
        '--no-progress',
        '--out',
        join(work, 'two'),
      ],
      {
        env: {
          AWS_ACCESS_KEY_ID: 'AKIDTEST',
          AWS_SECRET_ACCESS_KEY: 'test-secret',
          AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME: `http://127.0.0.1:${port}`,
          AWS_PROFILE: '',
          AWS_SESSION_TOKEN: '',
        },
      },
    );
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      new RegExp(
        /Preflight: target B: FAILED: sagemaker:ep\?region=eu-west-1: the runtime at /.source +
          /http:\/\/127\.0\.0\.1:\d+ \(AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME\): connection refused/.source,
      ),
    );
    expect(run.stderr).toContain('targets A, B are not reachable');
  });

  it('says when a SageMaker target has no credentials', async () => {
    const run = await runCli(
      [
        'replay',
        SAMPLE,
        '--target',
        'B=sagemaker:ep?region=eu-west-1',
        '--no-progress',
        '--out',
        join(work, 'nocreds'),
      ],
      {
        env: {
          AWS_ACCESS_KEY_ID: '',
          AWS_SECRET_ACCESS_KEY: '',
          AWS_SESSION_TOKEN: '',
          AWS_PROFILE: 'capture-replay-test-no-such-profile',
          AWS_CONFIG_FILE: join(work, 'no-config'),
          AWS_SHARED_CREDENTIALS_FILE: join(work, 'no-credentials'),
          AWS_EC2_METADATA_DISABLED: 'true',
          AWS_CONTAINER_CREDENTIALS_FULL_URI: '',
          AWS_CONTAINER_CREDENTIALS_RELATIVE_URI: '',
          AWS_WEB_IDENTITY_TOKEN_FILE: '',
        },
      },
    );
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/Preflight: target B: FAILED: sagemaker:ep\?region=eu-west-1: no AWS credentials found/);
  });
});

describe('a reachable target, --goodput', () => {
  let server: MockProcess;
  beforeAll(async () => {
    server = await startMockProcess(['--ttft-ms', '30', '--itl-ms', '5', '--output-tokens', '8', '--seed', '3']);
  });
  afterAll(async () => server?.stop());

  type Aggregate = Record<string, { unit: string; avg: number }> & {
    capture_replay?: { goodput?: Record<string, number> };
  };
  const read = (run: string) =>
    JSON.parse(readFileSync(join(work, 'goodput', run, 'target', 'profile_export_aiperf.json'), 'utf8')) as Aggregate;

  it('passes the preflight, and writes goodput from the SLOs given as AIPerf spells them', async () => {
    const common = [
      'replay',
      SAMPLE,
      '--url',
      server.url,
      '--streaming',
      '--time-scale',
      '20',
      '--lead',
      '100',
      '--out',
      join(work, 'goodput'),
      '--no-progress',
      '--rehearsal',
      '0',
    ];
    const [met, missed] = await Promise.all([
      runCli([...common, '--run-id', 'met', '--goodput', 'time_to_first_token:5000 inter_token_latency:1000']),
      runCli([...common, '--run-id', 'missed', '--goodput', 'time_to_first_token:1']),
    ]);
    expect(met.code, met.stderr).toBe(0);
    // --url's target, unnamed: no 'target target'.
    expect(met.stderr).toMatch(
      new RegExp(`^Preflight: ${server.url.replace(/[.]/g, '\\.')} accepts connections \\(TCP in [\\d.]+ ms\\)$`, 'm'),
    );
    const good = read('met');
    // Every request meets SLOs this loose: goodput is the request throughput.
    expect(good.goodput).toEqual({ unit: 'requests/sec', avg: good.request_throughput!.avg });
    expect(good.goodput!.avg).toBeGreaterThan(0);
    expect(good.capture_replay?.goodput).toEqual({ time_to_first_token: 5000, inter_token_latency: 1000 });
    expect(met.stdout).toMatch(/^ {2}Goodput \(req\/s\)\s+[\d.]+$/m);
    // A 1 ms first token is out of reach of a mock that waits 30 ms: no request is good.
    expect(missed.code, missed.stderr).toBe(0);
    expect(read('missed').goodput).toEqual({ unit: 'requests/sec', avg: 0 });
  }, 60_000);

  it('--no-preflight skips the check', async () => {
    const run = await runCli([
      'replay',
      SAMPLE,
      '--url',
      server.url,
      '--time-scale',
      '20',
      '--lead',
      '100',
      '--out',
      join(work, 'goodput'),
      '--run-id',
      'skip',
      '--no-progress',
      '--no-preflight',
      '--rehearsal',
      '0',
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).not.toContain('Preflight');
    expect(read('skip').goodput).toBeUndefined();
  }, 60_000);
});
