/**
 * The replay command's config (lambdas/local/replay/config.ts): the flags commander hands over
 * turned into one typed config, every default applied and every rule checked, and each
 * target's recorded input_config derived from that config.
 */
import type { Command } from 'commander';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_COMPARE_OPTIONS } from '../../../lambdas/core/compare/types';
import { buildProgram } from '../../../lambdas/local/program';
import {
  inputConfigOf,
  replayConfig,
  type ReplayCommandOptions,
  type ReplayConfig,
} from '../../../lambdas/local/replay/config';

/** The flags as commander parses them from `capture-replay replay <argv>` (program.ts), the action not run. */
async function parsedFlags(argv: string[]): Promise<ReplayCommandOptions> {
  const program = buildProgram();
  const replay = program.commands.find((c) => c.name() === 'replay') as Command;
  const got: { flags?: ReplayCommandOptions } = {};
  replay.action((capturesPath: string, options: Record<string, unknown>) => {
    got.flags = { capturesPath, ...options } as unknown as ReplayCommandOptions;
  });
  await program.parseAsync(['replay', ...argv], { from: 'user' });
  if (!got.flags) throw new Error('the replay action did not run');
  return got.flags;
}

/** One target and a run id, as a user gives them, and nothing else: every other flag at its default. */
const BASE = ['captures/', '--url', 'http://localhost:8000', '--run-id', 'run-1'];
let defaults: ReplayCommandOptions;
beforeAll(async () => {
  defaults = await parsedFlags(BASE);
});
const flags = (over: Partial<ReplayCommandOptions> = {}): ReplayCommandOptions => ({ ...defaults, ...over });

function configOf(over: Partial<ReplayCommandOptions> = {}): ReplayConfig {
  const config = replayConfig(flags(over), { KEY: 'secret' });
  if (typeof config === 'string') throw new Error(config);
  return config;
}

describe('replayConfig: defaults', () => {
  it('applies every default the flags leave out', () => {
    const config = configOf();
    expect(config).toMatchObject({
      runId: 'run-1',
      dispatch: 'parallel',
      plan: { timeScale: 1, intraSecond: 'spread', forceStreaming: false },
      seed: 1,
      request: { path: '/v1/chat/completions', timeoutMs: 600_000, apiKeyEnv: null, responseExcerpts: true },
      fire: {
        leadMs: 500,
        maxInFlight: null,
        workers: 'auto',
        wait: 'precise',
        rehearsal: 'auto',
        late: { toleranceMs: null, action: 'fire' },
        cancelGraceMs: null,
      },
      goodput: null,
      preflight: true,
      progress: true,
      compare: DEFAULT_COMPARE_OPTIONS,
      exit: { maxErrorRate: null, failOn: null },
    });
    expect(config.targets).toEqual([{ name: 'target', kind: 'http', url: new URL('http://localhost:8000') }]);
  });

  it('takes the flags as commander parses them from the command line', async () => {
    const config = replayConfig(
      await parsedFlags([
        ...BASE,
        '--target-name',
        'vllm',
        '--no-preflight',
        '--no-response-excerpts',
        '--workers',
        '3',
        '--wait',
        'coarse',
        '--late-tolerance',
        '40',
        '--late-policy',
        'drop',
        '--min-effect',
        '0.05',
        '--fail-on',
        'worse,changed',
      ]),
    );
    expect(config).toMatchObject({
      targets: [{ name: 'vllm', kind: 'http' }],
      preflight: false,
      request: { responseExcerpts: false },
      fire: { workers: 3, wait: 'coarse', late: { toleranceMs: 40, action: 'drop' } },
      compare: { ...DEFAULT_COMPARE_OPTIONS, minEffect: 0.05 },
      exit: { failOn: ['worse', 'changed'] },
    });
  });

  it('makes a run id when none is given: a UTC second and a random suffix', () => {
    expect(configOf({ runId: undefined }).runId).toMatch(/^\d{8}T\d{6}Z-[0-9a-f]{6}$/);
  });

  it('gives the plan only the options given, and the seed only with --sample', () => {
    expect(Object.keys(configOf().plan).sort()).toEqual(['forceStreaming', 'intraSecond', 'timeScale']);
    expect(configOf({ seed: 7 }).plan).not.toHaveProperty('seed');
    expect(configOf({ seed: 7, sample: 0.5 }).plan).toMatchObject({ sampleRate: 0.5, seed: 7 });
    expect(configOf({ startOffset: 5, endOffset: 9, limit: 3, model: 'm' }).plan).toMatchObject({
      startOffsetMs: 5,
      endOffsetMs: 9,
      limit: 3,
      modelOverride: 'm',
    });
  });

  it('takes the negated flags and the comparison settings', () => {
    const config = configOf({
      preflight: false,
      responseExcerpts: false,
      minEffect: 0.05,
      resamples: 100,
      failOn: ['worse'],
      maxErrorRate: 0.1,
      apiKeyEnv: 'KEY',
    });
    expect(config.preflight).toBe(false);
    expect(config.request).toMatchObject({ responseExcerpts: false, apiKeyEnv: 'KEY' });
    expect(config.compare).toEqual({ ...DEFAULT_COMPARE_OPTIONS, minEffect: 0.05, resamples: 100 });
    expect(config.exit).toEqual({ maxErrorRate: 0.1, failOn: ['worse'] });
  });
});

describe('replayConfig: usage errors in the flags own words', () => {
  it.each([
    [{ runId: 'a/b' }, `--run-id must be letters, digits, '.', '_' or '-' (got "a/b")`],
    [{ target: ['A=http://a:1'] }, 'give either --url (one target) or --target NAME=URL (one or more), not both'],
    [{ url: undefined }, 'give a target: --url <base-url>, or --target NAME=URL once per target'],
    [{ url: undefined, target: ['A=http://a:1', 'A=http://b:1'] }, 'target name "A" is given twice'],
    [
      { url: 'localhost:8000' },
      '--url must be an http:// or https:// URL or sagemaker:<endpoint-name> (got localhost:8000; did you mean http://localhost:8000?)',
    ],
    [{ startOffset: 5, endOffset: 1 }, '--end-offset (1) is before --start-offset (5)'],
    // Issue 22, round 2: numbers past what the run can hold (findings 6 and 7).
    [
      { timeout: 2 ** 31 },
      '--timeout must be at most 2147483647 ms (about 24.8 days, the longest timer Node keeps) (got 2147483648)',
    ],
    [{ rehearsal: 1e9 }, '--rehearsal must be at most 100000 (got 1000000000)'],
    [{ timeScale: 1e-300 }, '--time-scale must be a number >= 0.001, 1000 times slower than captured (got 1e-300)'],
    // A lead past Node's longest timer waited for it, the schedule never started.
    [
      { lead: 1e12 },
      '--lead must be at most 2147483647 ms (about 24.8 days, the longest timer Node keeps) (got 1000000000000)',
    ],
    // An unset API key variable: a usage error before the preflight, not a failed run after it.
    [
      { apiKeyEnv: 'CAPTURE_REPLAY_TEST_UNSET_KEY' },
      '--api-key-env CAPTURE_REPLAY_TEST_UNSET_KEY: that environment variable is not set (or is empty)',
    ],
  ] as [Partial<ReplayCommandOptions>, string][])('%j', (over, message) => {
    expect(replayConfig(flags(over), {})).toBe(message);
  });

  it('takes the largest values that fit', () => {
    expect(configOf({ timeout: 2 ** 31 - 1, rehearsal: 100_000, timeScale: 0.001, lead: 2 ** 31 - 1 })).toMatchObject({
      request: { timeoutMs: 2 ** 31 - 1 },
      fire: { rehearsal: 100_000, leadMs: 2 ** 31 - 1 },
      plan: { timeScale: 0.001 },
    });
  });

  it('--resamples: at most 100,000 (1e9 ran the bootstrap out of memory), refused by the real parser', async () => {
    const program = buildProgram().exitOverride();
    const replay = program.commands.find((c) => c.name() === 'replay') as Command;
    replay.exitOverride().configureOutput({ writeErr: () => undefined });
    await expect(program.parseAsync(['replay', ...BASE, '--resamples', '1e9'], { from: 'user' })).rejects.toThrow(
      '--resamples must be a whole number from 1 to 100000 (got "1e9")',
    );
    expect((await parsedFlags([...BASE, '--resamples', '100000'])).resamples).toBe(100_000);
  });
});

describe('inputConfigOf: what the results record, from the config', () => {
  it('an HTTP target: its URL and path, the schedule and the load as the run takes them', () => {
    const config = configOf({
      model: 'm',
      streaming: true,
      limit: 10,
      sample: 0.5,
      seed: 3,
      maxInFlight: 4,
      lateTolerance: 50,
      latePolicy: 'drop',
      workers: 2,
      wait: 'coarse',
      rehearsal: 0,
      goodput: { time_to_first_token: 200 },
    });
    expect(inputConfigOf(config, 'target').captureReplay).toEqual({
      tool: 'capture-replay',
      target: 'target',
      endpoint: {
        url: 'http://localhost:8000',
        path: '/v1/chat/completions',
        streaming: 'forced',
        model_override: 'm',
        timeout_ms: 600_000,
      },
      capture: 'captures/',
      limit: 10,
      max_in_flight: 4,
      run_id: 'run-1',
      goodput: { time_to_first_token: 200 },
      schedule: {
        start_offset_ms: null,
        end_offset_ms: null,
        time_scale: 1,
        intra_second: 'spread',
        sample: 0.5,
        seed: 3,
        lead_ms: 500,
      },
      load: { late_tolerance_ms: 50, late_policy: 'drop', workers: 2, wait: 'coarse', rehearsal: 0 },
    });
  });

  it('a SageMaker target: its spec instead of a URL; the seed recorded without --sample', () => {
    const config = configOf({ url: undefined, target: ['A=http://a:8000', 'S=sagemaker:my-endpoint'], seed: 9 });
    const recorded = inputConfigOf(config, 'S').captureReplay;
    expect(recorded).toMatchObject({
      target: 'S',
      endpoint: { url: null, path: null, streaming: 'as_captured', model_override: null },
      sagemaker: { spec: 'sagemaker:my-endpoint', endpointName: 'my-endpoint' },
    });
    expect(recorded).toMatchObject({
      schedule: { sample: null, seed: 9 },
      load: { workers: 'auto', wait: 'precise', rehearsal: 'auto', late_tolerance_ms: null, late_policy: 'fire' },
    });
    expect(inputConfigOf(config, 'A').captureReplay).toMatchObject({
      endpoint: { url: 'http://a:8000', path: '/v1/chat/completions' },
    });
  });
});
