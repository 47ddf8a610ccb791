/**
 * The captured window on the command line: --from/--to as parsed (time-flag.ts, through the
 * program's own parser), validated with --region and the offsets (replay/config.ts), and
 * applied by replay's first pass to a local folder (replay/ingest.ts with captures-source.ts):
 * records outside it counted, not indexed, and kept out of the duplicate rule, as the plan
 * function's window runs keep them out.
 */
import type { Command } from 'commander';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { awsCliRegion } from '../../../lambdas/local/aws-region';
import { capturesLocation } from '../../../lambdas/local/captures-source';
import { buildProgram } from '../../../lambdas/local/program';
import {
  inputConfigOf,
  replayConfig,
  type ReplayCommandOptions,
  type ReplayConfig,
} from '../../../lambdas/local/replay/config';
import { indexCaptures, type CaptureIndex } from '../../../lambdas/local/replay/ingest';
import { parseTimeFlag } from '../../../lambdas/local/time-flag';
import { captureLine } from '../../support/capture-week';

const NOW = Date.UTC(2026, 10, 26, 12, 0, 0);

describe('parseTimeFlag', () => {
  it.each([
    ['2026-04-29T10:00:00Z', Date.UTC(2026, 3, 29, 10)],
    ['2026-04-29T12:00+02:00', Date.UTC(2026, 3, 29, 10)],
    ['2026-04-29T10:00:00.250Z', Date.UTC(2026, 3, 29, 10, 0, 0, 250)],
    ['2026-04-29T05:30:00-0430', Date.UTC(2026, 3, 29, 10)],
    ['now', NOW],
    ['-2h', NOW - 2 * 3_600_000],
    ['-90m', NOW - 90 * 60_000],
    ['-30s', NOW - 30_000],
    ['-1d', NOW - 86_400_000],
    ['-1.5h', NOW - 5_400_000],
  ])('%s', (raw, expected) => expect(parseTimeFlag('--from', raw, NOW)).toBe(expected));

  it.each([
    ['2026-04-29T10:00:00', ': add its zone, e.g. Z for UTC'],
    ['2026-04-29', ': add its zone, e.g. Z for UTC'],
    ['2026-02-30T10:00:00Z', ''],
    ['2026-04-29T24:00:00Z', ''],
    ['+2h', ''],
    ['2h', ''],
    ['yesterday', ''],
  ])('%s is refused, naming the flag and the forms', (raw, hint) => {
    expect(parseTimeFlag('--to', raw, NOW)).toBe(
      `--to must be an ISO 8601 time with a zone (2026-04-29T10:00:00Z, 2026-04-29T12:00+02:00) or a time ` +
        `before now (now, -2h, -90m, -1d) (got "${raw}"${hint})`,
    );
  });

  it(
    'refuses a time more than a day after now: no capture is from the future, and an s3:// window to 9999 is ' +
      '70 million hour partitions (issue 32 item 12)',
    () => {
      expect(parseTimeFlag('--to', '9999-12-31T23:59:59Z', NOW)).toBe(
        '--to 9999-12-31T23:59:59Z is 7973 years after now: no capture is from the future; give now or a time before it (e.g. -1h)',
      );
      expect(parseTimeFlag('--from', '2026-11-28T12:00:00Z', NOW)).toBe(
        '--from 2026-11-28T12:00:00Z is 2 days after now: no capture is from the future; give now or a time before it (e.g. -1h)',
      );
      // Clocks disagree: up to a day ahead is taken.
      expect(parseTimeFlag('--to', '2026-11-27T12:00:00Z', NOW)).toBe(Date.UTC(2026, 10, 27, 12));
    },
  );
});

/** The flags as commander parses them from `capture-replay replay <argv>`, the action not run. */
async function parsed(argv: string[]): Promise<ReplayCommandOptions> {
  const program = buildProgram();
  const replay = program.commands.find((c) => c.name() === 'replay') as Command;
  const got: { flags?: ReplayCommandOptions } = {};
  replay.action((capturesPath: string, options: Record<string, unknown>) => {
    got.flags = { capturesPath, ...options } as unknown as ReplayCommandOptions;
  });
  await program.parseAsync(['replay', ...argv, '--url', 'http://localhost:8000', '--run-id', 'r'], { from: 'user' });
  if (!got.flags) throw new Error('the replay action did not run');
  return got.flags;
}

describe('--from, --to and --region in the replay config', () => {
  it('a window by time, recorded in input_config', async () => {
    const config = replayConfig(
      await parsed([
        's3://bucket/datacapture/',
        '--from',
        '2026-04-29T10:00:00Z',
        '--to',
        '2026-04-29T11:30:00Z',
        '--region',
        'eu-west-1',
      ]),
    ) as ReplayConfig;
    expect(config.window).toEqual({ startMs: Date.UTC(2026, 3, 29, 10), endMs: Date.UTC(2026, 3, 29, 11, 30) });
    expect(config.region).toBe('eu-west-1');
    const schedule = (inputConfigOf(config, 'target').captureReplay as { schedule: Record<string, unknown> }).schedule;
    expect(schedule.capture_window).toEqual({ start: '2026-04-29T10:00:00.000Z', end: '2026-04-29T11:30:00.000Z' });
  });

  it('one side open; relative forms; no window without the flags', async () => {
    expect((replayConfig(await parsed(['captures/', '--from', '-2h'])) as ReplayConfig).window).toEqual({
      startMs: expect.any(Number) as number,
      endMs: null,
    });
    expect((replayConfig(await parsed(['captures/', '--to', 'now'])) as ReplayConfig).window).toEqual({
      startMs: null,
      endMs: expect.any(Number) as number,
    });
    const plain = replayConfig(await parsed(['captures/'])) as ReplayConfig;
    expect([plain.window, plain.region]).toEqual([null, null]);
    expect(
      (inputConfigOf(plain, 'target').captureReplay as { schedule: Record<string, unknown> }).schedule,
    ).not.toHaveProperty('capture_window');
  });

  it.each([
    [
      ['captures/', '--from', '-1h', '--start-offset', '1000'],
      '--from/--to and --start-offset/--end-offset both choose the window: use one or the other',
    ],
    [
      ['captures/', '--to', '-1h', '--end-offset', '1000'],
      '--from/--to and --start-offset/--end-offset both choose the window: use one or the other',
    ],
    [
      ['captures/', '--from', '2026-04-29T11:00:00Z', '--to', '2026-04-29T10:00:00Z'],
      '--from (2026-04-29T11:00:00.000Z) must be before --to (2026-04-29T10:00:00.000Z)',
    ],
    [
      ['captures/', '--region', 'us-east-1'],
      '--region is the region of s3:// captures (a SageMaker target takes its own: sagemaker:<endpoint>?region=...)',
    ],
    [['s3://'], '"s3://" names no bucket: s3://<bucket>/<capture prefix>'],
  ])('%j: %s', async (argv, message) => {
    expect(replayConfig(await parsed(argv))).toBe(message);
  });
});

it('the region as the AWS CLI finds it: --region, AWS_REGION (the SDK reads it), AWS_DEFAULT_REGION, then the profile (the SDK)', () => {
  expect(awsCliRegion('eu-west-1', { AWS_REGION: 'us-east-1', AWS_DEFAULT_REGION: 'us-west-2' })).toBe('eu-west-1');
  expect(awsCliRegion(null, { AWS_REGION: 'us-east-1', AWS_DEFAULT_REGION: 'us-west-2' })).toBeUndefined();
  expect(awsCliRegion(null, { AWS_DEFAULT_REGION: 'us-west-2' })).toBe('us-west-2');
  expect(awsCliRegion(null, { AWS_DEFAULT_REGION: '' })).toBeUndefined();
  expect(awsCliRegion(null, {})).toBeUndefined();
});

describe('capturesLocation', () => {
  it.each([
    ['captures/', { kind: 'local', path: 'captures/' }],
    ['s3://b', { kind: 's3', bucket: 'b', prefix: '' }],
    ['s3://b/', { kind: 's3', bucket: 'b', prefix: '' }],
    ['S3://b/data/capture/', { kind: 's3', bucket: 'b', prefix: 'data/capture/' }],
    ['s3://b/x.jsonl', { kind: 's3', bucket: 'b', prefix: 'x.jsonl' }],
  ])('%s', (raw, expected) => expect(capturesLocation(raw)).toEqual(expected));
});

describe('a window applied to a local folder', () => {
  let dir = '';
  const T = Date.UTC(2026, 3, 29, 10);
  const min = (m: number) => T + m * 60_000;
  const sink = () => {
    let text = '';
    return {
      stream: { write: (chunk: string) => ((text += chunk), true) } as unknown as NodeJS.WritableStream,
      text: () => text,
    };
  };
  const index = async (from: number, to: number) => {
    const err = sink();
    const config = replayConfig(
      await parsed([
        join(dir, 'captures'),
        '--from',
        new Date(from).toISOString(),
        '--to',
        new Date(to).toISOString(),
        '--no-preflight',
        '--out',
        join(dir, 'out'),
      ]),
    ) as ReplayConfig;
    return { result: await indexCaptures(config, { out: sink().stream, err: err.stream }), err: err.text() };
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'captures-window-'));
    await mkdir(join(dir, 'captures'), { recursive: true });
    // "early": a copy outside the window (earlier) and one inside; "twice": two copies inside.
    const lines = [
      captureLine('early', min(5)),
      captureLine('a', min(10)),
      captureLine('twice', min(20)),
      captureLine('twice', min(25)),
      captureLine('early', min(30)),
      captureLine('late', min(70)),
    ];
    await writeFile(join(dir, 'captures', 'c.jsonl'), lines.join('\n') + '\n');
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('records outside are counted, not indexed; a copy outside the window does not take an in-window record away', async () => {
    const { result, err } = await index(min(10), min(60));
    const captures = result as CaptureIndex;
    // a, twice (the earlier copy), early (its in-window copy): the later "twice" is a duplicate.
    expect(captures.records.length).toBe(3);
    expect(captures.ingest.totals.rejectedByReason).toEqual({ duplicate: 1 });
    expect((captures.ingest as unknown as { window: unknown }).window).toEqual({
      start: new Date(min(10)).toISOString(),
      end: new Date(min(60)).toISOString(),
      inWindow: 3,
      outsideWindow: 2,
    });
    expect(err).toContain(
      `In the window ${new Date(min(10)).toISOString()} to ${new Date(min(60)).toISOString()}: 3 record(s); 2 outside it, not replayed\n`,
    );
    const plan = captures.records.planOnce({
      runId: 'r',
      targetKind: 'openai-chat',
      timeScale: 1,
      intraSecond: 'spread',
    });
    expect(plan.entries.map((e) => e.record.source.line)).toEqual([2, 3, 5]);
  });

  it('nothing in the window: exit 1, the report written, the line says how many were outside', async () => {
    const { result, err } = await index(min(100), min(200));
    expect(result).toBe(1);
    const at = join(dir, 'out', 'r', 'ingest_report.json');
    expect(err.trim().split('\n').at(-1)).toBe(
      `capture-replay: no capture record in the window ${new Date(min(100)).toISOString()} to ` +
        `${new Date(min(200)).toISOString()} (6 outside it; see ${at})`,
    );
    expect(JSON.parse(await readFile(at, 'utf8'))).toMatchObject({ window: { inWindow: 0, outsideWindow: 6 } });
  });
});
