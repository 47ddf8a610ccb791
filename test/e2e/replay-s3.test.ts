/**
 * `capture-replay replay s3://...` (and `capacity s3://...`) as a user runs it (the built CLI, its own process)
 * against moto_server holding a week of Data Capture hour partitions (test/support/
 * capture-week.ts), the bundled mock server as the target (its own process, logging what it
 * receives). The CLI reaches moto through a recording proxy (test/support/s3-request-log.ts),
 * so the LISTs and GETs are counted on the wire: a window reads only its partitions and the
 * hour after, and exactly the window's requests are sent. The errors a user meets (no such
 * bucket, no credentials, a refusal, a bad flag) are one line each, exit 1 (2 for usage).
 *
 * The refusals run with moto's IAM enforcement on, talking to moto directly (the proxy's Host
 * header would not match the signature). moto 5.2.1 recomputes S3 signatures over the decoded
 * URL, so a ListObjectsV2 whose prefix or delimiter holds '/' fails SignatureDoesNotMatch
 * rather than AccessDenied (test/support/iam/moto-iam.ts): those tests read a `.jsonl` object
 * at the bucket's top, whose listing has no '/'.
 */
import { CreateBucketCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { captureWeek, HOUR_MS, type CaptureWeek } from '../support/capture-week';
import { createUserWithPolicy, setMotoEnforcement, UNAUTHENTICATED, withMotoBatchShim } from '../support/iam/moto-iam';
import { awsClientConfig, describeWithMoto, startMoto, type Moto } from '../support/moto';
import { runCli, startMockProcess, type MockProcess } from '../support/processes';
import { startS3RequestLog, type S3RequestLog } from '../support/s3-request-log';

const BUCKET = 'capture-week';

describeWithMoto('replay s3:// against moto: only the window is read', () => {
  let moto: Moto;
  let enforced: Moto;
  let proxy: S3RequestLog;
  let mock: MockProcess;
  let dir = '';
  let week: CaptureWeek;

  const env = (extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => ({
    AWS_ENDPOINT_URL: proxy.url,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'testing',
    AWS_SECRET_ACCESS_KEY: 'testing',
    AWS_CONFIG_FILE: join(dir, 'none'),
    AWS_SHARED_CREDENTIALS_FILE: join(dir, 'none'),
    AWS_EC2_METADATA_DISABLED: 'true',
    ...extra,
  });
  // Hours of captured traffic in well under a second.
  const replay = (args: string[], extra: NodeJS.ProcessEnv = {}) =>
    runCli(
      [
        'replay',
        ...args,
        '--url',
        mock.url,
        '--out',
        dir,
        '--time-scale',
        '20000',
        '--rehearsal',
        '0',
        '--no-progress',
      ],
      { env: env(extra) },
    );
  const at = (hour: number, minute = 0) => week.startMs + hour * HOUR_MS + minute * 60_000;
  const iso = (ms: number) => new Date(ms).toISOString();
  /** The prompts the mock received: each record's prompt is its eventId. */
  const received = async (): Promise<string[]> => {
    const text = await readFile(join(dir, 'mock.log'), 'utf8').catch(() => '');
    return text
      .split('\n')
      .filter(Boolean)
      .map(
        (l) =>
          (
            JSON.parse(
              Buffer.from((JSON.parse(l) as { body_base64: string }).body_base64, 'base64').toString('utf8'),
            ) as { messages: { content: string }[] }
          ).messages[0]!.content,
      );
  };
  const partitionKeys = (hours: number[]) =>
    [...week.files.keys()].filter((k) => hours.some((h) => k.startsWith(week.partitionPrefix(h)))).sort();

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'replay-s3-'));
    [moto, enforced] = await Promise.all([startMoto(), startMoto({ env: { INITIAL_NO_AUTH_ACTION_COUNT: '0' } })]);
    proxy = await startS3RequestLog(moto.endpoint);
    mock = await startMockProcess([
      '--ttft-ms',
      '2',
      '--itl-ms',
      '1',
      '--output-tokens',
      '2',
      '--log',
      join(dir, 'mock.log'),
    ]);
    week = captureWeek({ prefix: 'datacapture/', endpoint: 'week-endpoint' });
    const s3 = new S3Client(awsClientConfig(moto.endpoint));
    await s3.send(new CreateBucketCommand({ Bucket: BUCKET }));
    const puts = [...week.files].map(
      ([key, text]) =>
        () =>
          s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: text })),
    );
    puts.push(() =>
      s3.send(
        new PutObjectCommand({ Bucket: BUCKET, Key: `${week.partitionPrefix(51)}_SUCCESS`, Body: Buffer.alloc(0) }),
      ),
    );
    for (let i = 0; i < puts.length; i += 16) await Promise.all(puts.slice(i, i + 16).map((put) => put()));
  }, 120_000);

  afterAll(async () => {
    await Promise.all([mock?.stop(), proxy?.close(), moto?.stop(), enforced?.stop()]);
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('--from/--to: exactly the window is sent; only its partitions and the hour after are listed and read', async () => {
    proxy.requests.length = 0;
    const from = at(50, 30);
    const to = at(52, 15);
    const result = await replay([
      `s3://${BUCKET}/datacapture/week-endpoint/`,
      '--from',
      iso(from),
      '--to',
      iso(to),
      '--run-id',
      'window',
    ]);
    expect(result.stderr).not.toMatch(/Error|at .*\.ts:\d+/);
    expect(result.code, result.stderr).toBe(0);

    const windowIds = week.records.filter((r) => r.timeMs >= from && r.timeMs < to).map((r) => r.eventId);
    // 50:40, 50:59:30 (in hour 51's partition), 51:10, 51:40, 51:59:30, 52:10.
    expect(windowIds.length).toBe(6);
    expect((await received()).sort()).toEqual([...windowIds].sort());

    // Objects listed: the four partitions, nothing else; folders: only to find the variant's years.
    const lists = proxy.lists();
    expect(lists.filter((l) => l.delimiter === null).map((l) => l.prefix)).toEqual(
      [50, 51, 52, 53].map((h) => week.partitionPrefix(h)),
    );
    expect(lists.filter((l) => l.delimiter === '/').map((l) => l.prefix)).toEqual([
      'datacapture/week-endpoint/',
      'datacapture/week-endpoint/AllTraffic/',
    ]);
    // Whole objects read (pass 1): each .jsonl of those partitions once; byte ranges (pass 2) of those only.
    const gets = proxy.gets();
    const whole = gets.filter((g) => g.range === null).map((g) => g.key);
    expect([...whole].sort()).toEqual(partitionKeys([50, 51, 52, 53]).filter((k) => k.endsWith('.jsonl')));
    const ranged = gets.filter((g) => g.range !== null);
    expect(ranged.length).toBeGreaterThan(0);
    expect(ranged.every((g) => partitionKeys([50, 51, 52, 53]).includes(g.key))).toBe(true);
    expect(proxy.requests.every((r) => r.method === 'GET')).toBe(true);

    // The same accounting as a local folder, with s3:// names.
    const ingest = JSON.parse(await readFile(join(dir, 'window', 'ingest_report.json'), 'utf8')) as {
      files: { file: string }[];
      skippedFiles: { file: string; reason: string }[];
      window: Record<string, unknown>;
    };
    expect(ingest.files.map((f) => f.file)).toEqual(
      partitionKeys([50, 51, 52, 53])
        .filter((k) => k.endsWith('.jsonl'))
        .map((k) => `s3://${BUCKET}/${k}`),
    );
    expect(ingest.skippedFiles).toEqual([
      { file: `s3://${BUCKET}/${week.partitionPrefix(51)}_SUCCESS`, reason: 'not a .jsonl file' },
    ]);
    // Three records in each of the four partitions read.
    expect(ingest.window).toEqual({ start: iso(from), end: iso(to), inWindow: 6, outsideWindow: 12 - 6 });
    const manifest = JSON.parse(await readFile(join(dir, 'window', 'target', 'run_manifest.json'), 'utf8')) as {
      scheduled: number;
      succeeded: number;
    };
    expect(manifest).toMatchObject({ scheduled: 6, succeeded: 6 });
  }, 60_000);

  it('--end-offset from the first record: the first partition, the hour after it and the window, no more', async () => {
    proxy.requests.length = 0;
    const before = (await received()).length;
    const result = await replay([
      `s3://${BUCKET}/datacapture/`,
      '--start-offset',
      String(30 * HOUR_MS),
      '--end-offset',
      String(30 * HOUR_MS + 40 * 60_000),
      '--run-id',
      'offsets',
    ]);
    expect(result.code, result.stderr).toBe(0);
    // First record: hour 0, minute 10; the window is hour 30 minute 10 to hour 30 minute 50.
    expect((await received()).slice(before).sort()).toEqual(['ev-30-10', 'ev-30-40']);
    const whole = proxy
      .gets()
      .filter((g) => g.range === null)
      .map((g) => g.key);
    expect([...new Set(whole)].sort()).toEqual(partitionKeys([0, 1, 30, 31]));
  }, 60_000);

  it('capacity s3:// --from (issue 20): the window from --from, only its partitions and the hour after read', async () => {
    proxy.requests.length = 0;
    const before = (await received()).length;
    const from = at(50, 30);
    const args = [
      'capacity',
      `s3://${BUCKET}/datacapture/week-endpoint/`,
      '--from',
      iso(from),
      '--window',
      '30m',
      '--target',
      `A=${mock.url}`,
      '--goodput',
      'request_latency:60000',
    ];
    const result = await runCli(
      [
        ...args,
        '--max-factor',
        '1',
        '--cooldown',
        '0',
        '--out',
        dir,
        '--run-id',
        'capacity',
        '--time-scale',
        '20000',
        '--rehearsal',
        '0',
      ],
      { env: env() },
    );
    expect(result.code, result.stderr).toBe(0);
    // 50:40 and 50:59:30 (in hour 51's partition): the warm-up's, then the 1x step's.
    const windowIds = week.records
      .filter((r) => r.timeMs >= from && r.timeMs < from + 30 * 60_000)
      .map((r) => r.eventId);
    expect(windowIds.length).toBe(2);
    expect((await received()).slice(before).sort()).toEqual([...windowIds, ...windowIds].sort());
    const whole = proxy
      .gets()
      .filter((g) => g.range === null)
      .map((g) => g.key);
    expect([...new Set(whole)].sort()).toEqual(partitionKeys([50, 51]).filter((k) => k.endsWith('.jsonl')));
    const doc = JSON.parse(await readFile(join(dir, 'capacity', 'capacity.json'), 'utf8')) as {
      window: Record<string, unknown>;
      targets: { sustained_factor: number | null; steps: { requests: number; outcome: string }[] }[];
    };
    expect(doc.window).toEqual({
      start_offset_ms: 0,
      end_offset_ms: 30 * 60_000,
      captured_requests: 2,
      capture_window: { start: iso(from), end: iso(from + 30 * 60_000) },
    });
    const [target] = doc.targets;
    expect(target?.steps.map((step) => step.requests)).toEqual([2]);
    // The 1x step meets the objectives, unless this CLI, on a machine busy with the other test
    // files, sent late: then the step says so and sustains nothing (capacity/measure.ts).
    const outcome = target!.steps[0]!.outcome;
    if (outcome === 'met') expect(target!.sustained_factor).toBe(1);
    else expect(outcome).toBe('client');
  }, 90_000);

  it('no such bucket, no credentials, a bad --from: one line each, exit 1 or 2', async () => {
    const missing = await replay(['s3://no-such-bucket-here/datacapture/', '--from', '-2h']);
    expect(missing.code).toBe(1);
    expect(missing.stderr.trim().split('\n')).toEqual([
      'capture-replay: could not read s3://no-such-bucket-here/datacapture/: NoSuchBucket: there is no ' +
        'bucket named no-such-bucket-here (or not in this account)',
    ]);

    const anonymous = await replay([`s3://${BUCKET}/datacapture/`, '--from', '-2h'], {
      AWS_ACCESS_KEY_ID: '',
      AWS_SECRET_ACCESS_KEY: '',
      AWS_PROFILE: '',
    });
    expect(anonymous.code).toBe(1);
    expect(anonymous.stderr.trim().split('\n')).toHaveLength(1);
    expect(anonymous.stderr).toMatch(
      /^capture-replay: could not read s3:\/\/capture-week\/datacapture\/: .*no AWS credentials found/,
    );

    const zoneless = await replay([`s3://${BUCKET}/datacapture/`, '--from', '2026-04-29T10:00:00']);
    expect(zoneless.code).toBe(2);
    expect(zoneless.stderr.split('\n')[0]).toBe(
      'capture-replay replay: --from must be an ISO 8601 time with a zone (2026-04-29T10:00:00Z, ' +
        '2026-04-29T12:00+02:00) or a time before now (now, -2h, -90m, -1d) (got "2026-04-29T10:00:00": add ' +
        'its zone, e.g. Z for UTC)',
    );
  });

  it('AccessDenied on the listing and on the read: one line each, exit 1', async () => {
    await setMotoEnforcement(enforced.endpoint, false);
    const admin = new S3Client(awsClientConfig(enforced.endpoint));
    await admin.send(new CreateBucketCommand({ Bucket: 'denied' }));
    await admin.send(
      new PutObjectCommand({ Bucket: 'denied', Key: 'capture.jsonl', Body: week.files.get(partitionKeys([3])[0]!)! }),
    );
    const nobody = await createUserWithPolicy(enforced.endpoint, UNAUTHENTICATED, 'nobody', [
      { Effect: 'Allow', Action: 'sqs:SendMessage', Resource: '*' },
    ]);
    const lister = await createUserWithPolicy(
      enforced.endpoint,
      UNAUTHENTICATED,
      'lister',
      withMotoBatchShim([{ Effect: 'Allow', Action: 's3:ListBucket', Resource: 'arn:aws:s3:::denied' }]),
    );
    await setMotoEnforcement(enforced.endpoint, true);
    const as = (creds: { accessKeyId: string; secretAccessKey: string }) => ({
      AWS_ENDPOINT_URL: enforced.endpoint,
      AWS_ACCESS_KEY_ID: creds.accessKeyId,
      AWS_SECRET_ACCESS_KEY: creds.secretAccessKey,
    });
    const expected =
      'capture-replay: could not read s3://denied/capture.jsonl: AccessDenied: your identity may not read it ' +
      '(reading captures takes s3:ListBucket on the bucket and s3:GetObject on the objects under the prefix)';

    const listing = await replay(['s3://denied/capture.jsonl'], as(nobody));
    expect(listing.code).toBe(1);
    expect(listing.stderr.trim().split('\n')).toEqual([expected]);

    const reading = await replay(['s3://denied/capture.jsonl'], as(lister));
    expect(reading.code).toBe(1);
    expect(reading.stderr.trim().split('\n')).toEqual([expected]);
  });
});
