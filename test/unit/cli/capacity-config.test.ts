/**
 * The capacity command's config (lambdas/local/capacity/config.ts), from the flags as the real
 * commander program parses them: the defaults the issue names, the replay config every step
 * starts from (the window as offsets, replay's own defaults), and usage errors in the flags'
 * words.
 */
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import {
  capacityConfig,
  type CapacityCommandOptions,
  type CapacityConfig,
} from '../../../lambdas/local/capacity/config';
import { buildProgram } from '../../../lambdas/local/program';

/** The flags as commander parses them from `capture-replay capacity <argv>`, the action not run; or commander's error. */
async function parsedFlags(argv: string[]): Promise<CapacityCommandOptions | string> {
  const program = buildProgram().exitOverride();
  const capacity = program.commands.find((c) => c.name() === 'capacity') as Command;
  capacity.exitOverride().configureOutput({ writeErr: () => undefined });
  const got: { flags?: CapacityCommandOptions } = {};
  capacity.action((capturesPath: string, options: Record<string, unknown>) => {
    got.flags = { capturesPath, ...options } as unknown as CapacityCommandOptions;
  });
  try {
    await program.parseAsync(['capacity', ...argv], { from: 'user' });
  } catch (error) {
    return (error as Error).message;
  }
  if (!got.flags) throw new Error('the capacity action did not run');
  return got.flags;
}

const BASE = [
  'captures/',
  '--target',
  'A=http://a:8000',
  '--target',
  'B=http://b:8000',
  '--goodput',
  'time_to_first_token:300',
  '--run-id',
  'cap-1',
];

async function configOf(argv: string[]): Promise<CapacityConfig | string> {
  const flags = await parsedFlags(argv);
  return typeof flags === 'string' ? flags : capacityConfig(flags);
}

describe('capacityConfig', () => {
  it(
    'the defaults: a 3-minute window, 99 % goodput, 1 % errors, x2 from 1x to 64x, 0.1 resolution, 5 s ' +
      'cool-down, one target at a time',
    async () => {
      const config = (await configOf(BASE)) as CapacityConfig;
      expect(config).toMatchObject({
        runId: 'cap-1',
        window: { startOffsetMs: 0, endOffsetMs: 180_000 },
        objectives: { slos: { time_to_first_token: 300 }, minGoodput: 0.99, maxErrorRate: 0.01, maxClientLagMs: 100 },
        search: { startFactor: 1, growth: 2, resolution: 0.1, maxFactor: 64 },
        cooldownMs: 5000,
        together: false,
      });
      // Every step replays with replay's own rules and defaults: the window as offsets, the SLOs as goodput.
      expect(config.replay).toMatchObject({
        plan: { startOffsetMs: 0, endOffsetMs: 180_000, timeScale: 1, intraSecond: 'spread' },
        goodput: { time_to_first_token: 300 },
        progress: true,
        preflight: true,
        fire: { leadMs: 500, rehearsal: 'auto' },
      });
      expect(config.replay.targets.map((t) => t.name)).toEqual(['A', 'B']);
    },
  );

  it('takes the window as a duration from --start-offset, and the search settings', async () => {
    const config = (await configOf([
      ...BASE,
      '--window',
      '90s',
      '--start-offset',
      '60000',
      '--growth',
      '1.5',
      '--resolution',
      '0.25',
      '--max-factor',
      '8',
      '--cooldown',
      '0',
      '--together',
      '--max-client-lag',
      '50',
    ])) as CapacityConfig;
    expect(config).toMatchObject({
      window: { startOffsetMs: 60_000, endOffsetMs: 150_000 },
      search: { growth: 1.5, resolution: 0.25, maxFactor: 8 },
      cooldownMs: 0,
      together: true,
      objectives: { maxClientLagMs: 50 },
    });
    expect(((await configOf([...BASE, '--window', '2m'])) as CapacityConfig).window.endOffsetMs).toBe(120_000);
    expect(((await configOf([...BASE, '--window', '500ms'])) as CapacityConfig).window.endOffsetMs).toBe(500);
  });

  it.each([
    [['--growth', '1'], '--growth must be a number > 1 (got "1")'],
    [['--window', '3 minutes'], '--window must be a duration > 0 such as 90s, 3m or 1h (got "3 minutes")'],
    [['--max-factor', '0.5'], '--max-factor (0.5) is below --start-factor (1)'],
    [['--min-goodput', '1.5'], '--min-goodput must be a number in (0, 1] (got "1.5")'],
    [['--target', 'C=ftp://c'], '--target C must be an http:// or https:// URL'],
    // Issue 22 item 7: numbers past what a step can take.
    [['--max-factor', '5000'], '--max-factor must be at most 1000, the largest amplification (got 5000)'],
    [
      ['--cooldown', '1e300'],
      '--cooldown must be at most 2147483 s (about 24.8 days, the longest timer Node keeps) (got 1e+300)',
    ],
    [['--lead', '1e12'], '--lead must be at most 2147483647 ms'],
    // Issue 32 finding 3: factors no step can tell apart, whose steps shared a folder and a name.
    [
      ['--start-factor', '0.0000001'],
      "--start-factor must be at least 0.001, one request in a thousand of the window's (got 1e-7)",
    ],
    [
      ['--resolution', '0.0000001'],
      '--resolution must be at least 0.001, a thousandth of the traffic: no step tells finer apart (got 1e-7)',
    ],
    [['--growth', '1.001'], '--growth must be at least 1.01, each step 1 % above the last (got 1.001)'],
  ])('refuses %j in its own words', async (extra, message) => {
    expect(await configOf([...BASE, ...extra])).toContain(message);
  });

  it('takes --overwrite and --no-progress as replay does (issue 32, findings 1 and 10)', async () => {
    expect(((await configOf([...BASE, '--overwrite', '--no-progress'])) as CapacityConfig).replay).toMatchObject({
      overwrite: true,
      progress: false,
    });
    expect(((await configOf(BASE)) as CapacityConfig).replay).toMatchObject({ overwrite: false, progress: true });
  });

  it('needs --goodput and a --target', async () => {
    expect(await configOf(['captures/', '--target', 'A=http://a:8000'])).toMatch(/--goodput/);
    expect(await configOf(['captures/', '--goodput', 'time_to_first_token:300'])).toMatch(/--target/);
  });
});

describe('capacity takes the captures as replay does: --from/--to and --region (issue 20)', () => {
  const FROM = Date.parse('2026-04-29T10:00:00Z');

  it('--from: --window of captured time from it, the records chosen by time (the S3 partitions too)', async () => {
    const config = (await configOf([...BASE, '--from', '2026-04-29T10:00:00Z'])) as CapacityConfig;
    expect(config.window).toEqual({
      startOffsetMs: 0,
      endOffsetMs: 180_000,
      captureWindow: { startMs: FROM, endMs: FROM + 180_000 },
    });
    expect(config.replay.window).toEqual({ startMs: FROM, endMs: FROM + 180_000 });
    // The time window is the records': no offsets on top of it.
    expect(config.replay.plan.startOffsetMs).toBeUndefined();
    expect(config.replay.plan.endOffsetMs).toBeUndefined();
  });

  it('--to: the --window before it; both: [from, to)', async () => {
    const before = (await configOf([...BASE, '--to', '2026-04-29T10:03:00Z', '--window', '1m'])) as CapacityConfig;
    expect(before.replay.window).toEqual({ startMs: FROM + 120_000, endMs: FROM + 180_000 });
    const both = (await configOf([
      ...BASE,
      '--from',
      '2026-04-29T10:00:00Z',
      '--to',
      '2026-04-29T10:02:00Z',
    ])) as CapacityConfig;
    expect(both.replay.window).toEqual({ startMs: FROM, endMs: FROM + 120_000 });
    expect(both.window).toMatchObject({ startOffsetMs: 0, endOffsetMs: 120_000 });
  });

  it('--region for s3:// captures', async () => {
    const config = (await configOf([
      's3://bucket/captures/',
      ...BASE.slice(1),
      '--region',
      'eu-west-1',
      '--from',
      '-1h',
    ])) as CapacityConfig;
    expect(config.replay).toMatchObject({ capturesPath: 's3://bucket/captures/', region: 'eu-west-1' });
    expect(config.capturesPath).toBe('s3://bucket/captures/');
  });

  it.each([
    [
      ['--from', '2026-04-29T10:00:00Z', '--to', '2026-04-29T11:00:00Z'],
      '--from 2026-04-29T10:00:00.000Z to --to 2026-04-29T11:00:00.000Z is longer than --window (180 s), the ' +
        'captured traffic a step replays: narrow them, or give a longer --window',
    ],
    [
      ['--from', '2026-04-29T10:00:00Z', '--to', '2026-04-29T09:00:00Z'],
      '--from (2026-04-29T10:00:00.000Z) must be before --to (2026-04-29T09:00:00.000Z)',
    ],
    [
      ['--from', '2026-04-29T10:00:00Z', '--start-offset', '1000'],
      '--from/--to and --start-offset/--end-offset both choose the window: use one or the other',
    ],
    [['--region', 'eu-west-1'], '--region is the region of s3:// captures'],
    [['--from', '2026-04-29T10:00:00'], '--from'],
  ])('refuses %j in its own words', async (extra, message) => {
    expect(await configOf([...BASE, ...extra])).toContain(message);
  });
});
