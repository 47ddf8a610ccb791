/**
 * verify-deploy's pieces without AWS: where the sample goes and which file it is, the run
 * ids the ingest gives it, how a stack's outputs and AutoReplay are read, and what the
 * command says when something is missing. The command against emulated AWS is
 * test/integration/verify-deploy.test.ts.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { PassThrough } from 'node:stream';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readCaptures } from '../../../lambdas/adapters/local/capture-files';
import { DuplicateFilter } from '../../../lambdas/core/capture/duplicates';
import { IngestReportBuilder } from '../../../lambdas/core/capture/ingest-report';
import { buildPlan } from '../../../lambdas/core/plan/plan';
import { discoverCaptureFolders } from '../../../lambdas/core/scheduled-runs/window-plan';
import type { CaptureRecord } from '../../../lambdas/core/types';
import { fileRunId } from '../../../lambdas/core/ids';
import { describeAwsError } from '../../../lambdas/local/aws-problem';
import {
  outputsFromFile,
  regionOfOutputs,
  relinkCommand,
  stackStatusProblem,
  type StackOutputs,
} from '../../../lambdas/local/stack-outputs';
import {
  dashboardLines,
  parseAutoReplay,
  scheduleOnlyText,
  StatusLine,
  targetLine,
  unprovenTargets,
} from '../../../lambdas/local/verify-deploy';
import {
  candidateRunIds,
  captureRoot,
  SAMPLE_FILE,
  sampleKey,
  stampSample,
} from '../../../lambdas/local/verify-sample';
import {
  laterText,
  missingText,
  progressText,
  type RunState,
  type Whereabouts,
} from '../../../lambdas/local/verify-watch';
import { REPO_ROOT } from '../../support/processes';

const AT = new Date('2026-11-26T17:05:09.042Z');

/** A line as JSON, or null when it is not JSON. */
function jsonOrNull(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    return null;
  }
}
/** The records' inferenceTimes, epoch ms, in file order. */
const timesOf = (text: string) =>
  text.split('\n').flatMap((l) => {
    const time = (jsonOrNull(l) as { eventMetadata?: { inferenceTime?: string } } | null)?.eventMetadata?.inferenceTime;
    return time ? [Date.parse(time)] : [];
  });
/** Each line without its inferenceTime, re-serialized when JSON: what stamping must not change. */
const withoutTimes = (text: string) =>
  text
    .replace(/"inferenceTime":\s*"[^"]*"/g, '"inferenceTime":""')
    .split('\n')
    .map((l) => (jsonOrNull(l) === null ? l : JSON.stringify(jsonOrNull(l))));

describe('the verification sample', () => {
  it('lands where SageMaker would write a capture of endpoint capture-replay-verify this hour (UTC)', () => {
    expect(sampleKey('datacapture/', AT, 'abcd1234')).toBe(
      'datacapture/capture-replay-verify/AllTraffic/2026/11/26/17/05-09-042-abcd1234.jsonl',
    );
    // A prefix that does not end at a folder boundary names a folder, as the plan function reads it.
    expect(sampleKey('datacapture', AT, 'abcd1234')).toBe(
      'datacapture/capture-replay-verify/AllTraffic/2026/11/26/17/05-09-042-abcd1234.jsonl',
    );
    expect(sampleKey('', AT, 'abcd1234')).toBe(
      'capture-replay-verify/AllTraffic/2026/11/26/17/05-09-042-abcd1234.jsonl',
    );
    expect(captureRoot('a/b')).toBe('a/b/');
    // A new name each time: each verification is a run of its own.
    expect(sampleKey('p/', AT)).not.toBe(sampleKey('p/', AT));
    expect(sampleKey('p/', AT)).toMatch(
      /^p\/capture-replay-verify\/AllTraffic\/2026\/11\/26\/17\/05-09-042-[0-9a-f]{8}\.jsonl$/,
    );
  });

  it('is found by the scheduled windows as an endpoint folder beside the real ones', async () => {
    const key = sampleKey('datacapture/', AT, 'abcd1234');
    const keys = [key, 'datacapture/my-llm/AllTraffic/2026/11/26/17/00-00-000-x.jsonl'];
    const listFolders = async (prefix: string) =>
      [
        ...new Set(
          keys.filter((k) => k.startsWith(prefix)).map((k) => prefix + k.slice(prefix.length).split('/')[0] + '/'),
        ),
      ].sort();
    const { folders, ignored } = await discoverCaptureFolders({ listFolders }, 'datacapture/', {});
    expect(ignored).toEqual([]);
    expect(folders).toContainEqual({
      prefix: 'datacapture/capture-replay-verify/AllTraffic/',
      endpoint: 'capture-replay-verify',
      variant: 'AllTraffic',
    });
  });

  it('is the smallest bundled capture file', () => {
    const files: string[] = [];
    const walk = (dir: string) =>
      readdirSync(dir, { withFileTypes: true }).forEach((e) =>
        e.isDirectory() ? walk(join(dir, e.name)) : e.name.endsWith('.jsonl') && files.push(join(dir, e.name)),
      );
    walk(join(REPO_ROOT, 'samples'));
    expect(files.length).toBeGreaterThan(1);
    const smallest = files.sort((a, b) => statSync(a).size - statSync(b).size)[0];
    expect(SAMPLE_FILE).toBe(smallest);
  });

  it('is stamped from now on, its spacing, its bad lines and its duplicate kept', () => {
    const original = readFileSync(SAMPLE_FILE, 'utf8');
    const now = Date.parse('2026-11-26T17:05:09.042Z');
    const stamped = stampSample(original, now);
    const before = timesOf(original);
    const after = timesOf(stamped);
    expect(Math.min(...after)).toBe(Date.parse('2026-11-26T17:05:09Z'));
    expect(after.map((t) => t - after[0]!)).toEqual(before.map((t) => t - before[0]!));
    expect(stamped).toMatch(/"inferenceTime":"2026-11-26T17:05:09Z"/);
    // Every line but the times is as it was: blank and non-JSON lines, bodies, ids.
    expect(withoutTimes(stamped)).toEqual(withoutTimes(original));
    expect(stampSample('not json\n', now)).toBe('not json\n');
  });

  it('has every accepted record replayable by a chat target and by a SageMaker target', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'verify-sample-'));
    const file = join(dir, 'sample.jsonl');
    writeFileSync(file, stampSample(readFileSync(SAMPLE_FILE, 'utf8'), Date.now()));
    const report = new IngestReportBuilder();
    const records: CaptureRecord[] = [];
    for await (const r of readCaptures(file, report, new DuplicateFilter())) records.push(r);
    rmSync(dir, { recursive: true, force: true });
    const totals = report.build().totals;
    expect(totals.accepted).toBe(15);
    expect(totals.rejectedByReason).toEqual({ invalid_json: 1, duplicate: 1 });
    for (const targetKind of ['openai-chat', 'sagemaker'] as const) {
      const plan = buildPlan(records, { runId: 'verify', targetKind, timeScale: 1, intraSecond: 'spread' });
      expect({ targetKind, requests: plan.requests.length, incompatible: plan.incompatible.length }).toEqual({
        targetKind,
        requests: 15,
        incompatible: 0,
      });
    }
  });

  it('is looked for under the run ids the ingest gives it, in either mode', () => {
    const ref = { bucket: 'capture-bucket', key: sampleKey('datacapture/', AT, 'abcd1234'), etag: null };
    const etag = '9b2cf535f27731c974343645a3985328';
    // PutObject's ETag comes quoted; the S3 event's (which the ingest keys on) does not.
    expect(candidateRunIds(ref.bucket, ref.key, `"${etag}"`)).toEqual([
      fileRunId('file', ref.bucket, ref.key, etag),
      fileRunId('mirror', ref.bucket, ref.key, etag),
    ]);
  });
});

const outputs = (values: StackOutputs['values'], extra: Partial<StackOutputs> = {}): StackOutputs => ({
  stack: 'CaptureReplay',
  source: 'stack CaptureReplay (eu-west-1)',
  region: 'eu-west-1',
  fromCloudFormation: true,
  values,
  ...extra,
});

describe('stack outputs', () => {
  it('reads the file cdk deploy --outputs-file writes', () => {
    const one = JSON.stringify({ Replay: { ResultsBucketName: 'r', Other: 'x' } });
    expect(outputsFromFile(one, 'o.json', undefined)).toEqual({
      stack: 'Replay',
      values: { ResultsBucketName: 'r', Other: 'x' },
    });
    const two = JSON.stringify({ A: { ResultsBucketName: 'a' }, B: { ResultsBucketName: 'b' } });
    expect(outputsFromFile(two, 'o.json', 'B').values).toEqual({ ResultsBucketName: 'b' });
    expect(() => outputsFromFile(two, 'o.json', undefined)).toThrow(
      'o.json holds several stacks (A, B): name one with --stack',
    );
    expect(() => outputsFromFile(two, 'o.json', 'C')).toThrow('o.json has no stack C (it has A, B)');
    expect(() => outputsFromFile('{"A": ', 'o.json', undefined)).toThrow(/^o\.json is not JSON/);
    expect(() => outputsFromFile('[1]', 'o.json', undefined)).toThrow(/is not a `cdk deploy --outputs-file` file/);
    expect(() => outputsFromFile('{}', 'o.json', undefined)).toThrow(/is not a `cdk deploy --outputs-file` file/);
    // An output the commands read that is not a string: said as such, not as an older stack's missing output (issue 32 item 12).
    expect(() =>
      outputsFromFile('{"A": {"ResultsBucketName": 123, "CapturePrefix": {"x": 1}, "Other": 5}}', 'o.json', undefined),
    ).toThrow(
      'o.json: ResultsBucketName is 123, CapturePrefix is {"x":1}, not a string: give the file `cdk deploy --outputs-file` wrote, unedited',
    );
  });

  it("takes the stack's region from its queue URLs or topic ARNs when no region is given", () => {
    expect(regionOfOutputs({ IngestQueueUrl: 'https://sqs.eu-west-3.amazonaws.com/123456789012/q' })).toBe('eu-west-3');
    expect(regionOfOutputs({ AlarmTopicArn: 'arn:aws:sns:ap-south-1:123456789012:t' })).toBe('ap-south-1');
    expect(regionOfOutputs({ IngestQueueUrl: 'http://127.0.0.1:5000/123456789012/q' })).toBeNull();
  });

  it('refuses a stack that is still deploying or whose deploy failed, naming its events', () => {
    expect(stackStatusProblem('S', 'UPDATE_COMPLETE')).toBeNull();
    expect(stackStatusProblem('S', 'UPDATE_ROLLBACK_COMPLETE')).toBeNull();
    expect(stackStatusProblem('S', 'CREATE_IN_PROGRESS')).toMatch(
      /^stack S is CREATE_IN_PROGRESS: wait for the deploy to finish \(aws cloudformation describe-stack-events --stack-name S\)$/,
    );
    expect(stackStatusProblem('S', 'ROLLBACK_COMPLETE')).toMatch(
      /^stack S is ROLLBACK_COMPLETE: its deploy did not succeed/,
    );
  });

  it('reads AutoReplay as all, none or target names (absent: all)', () => {
    expect(parseAutoReplay(undefined)).toEqual({ kind: 'all' });
    expect(parseAutoReplay('all')).toEqual({ kind: 'all' });
    expect(parseAutoReplay('none')).toEqual({ kind: 'none' });
    expect(parseAutoReplay('A, B')).toEqual({ kind: 'targets', targets: ['A', 'B'] });
  });

  it('tells a schedule-only stack how to start a scheduled run now, with its plan queue', () => {
    const text = scheduleOnlyText(
      outputs({ PlanQueueUrl: 'https://sqs.eu-west-1.amazonaws.com/1/plan', AutoReplay: 'none' }),
    ).join('\n');
    expect(text).toMatch(/replays captures only on its schedules/);
    expect(text).toContain(
      'capture-replay schedule-now <schedule> --queue-url https://sqs.eu-west-1.amazonaws.com/1/plan --region eu-west-1',
    );
    expect(text).toContain('capture-replay link --run <the runId it prints> --stack CaptureReplay');
    expect(text).not.toContain('dashboard');
  });

  it("names the stack's dashboard (its DashboardUrl output), read from an outputs file as any output; none without one", () => {
    const url =
      'https://eu-west-1.console.aws.amazon.com/cloudwatch/home?region=eu-west-1#dashboards/dashboard/CaptureReplay-eu-west-1';
    const read = outputsFromFile(
      JSON.stringify({ CaptureReplay: { ResultsBucketName: 'b', DashboardUrl: url } }),
      'o.json',
      undefined,
    );
    expect(read.values.DashboardUrl).toBe(url);
    expect(dashboardLines({ values: { DashboardUrl: url } })).toEqual([
      `  dashboard: ${url} (the runs' metrics in CloudWatch, a few minutes after each run)`,
    ]);
    expect(dashboardLines({ values: {} })).toEqual([]);
    expect(scheduleOnlyText(outputs({ AutoReplay: 'none', DashboardUrl: url })).join('\n')).toContain(
      `  dashboard: ${url}`,
    );
  });
});

describe('what verify-deploy says', () => {
  const where: Whereabouts = {
    results: 'results-bucket',
    sampleUri: 's3://capture-bucket/datacapture/capture-replay-verify/x.jsonl',
    capturePrefix: 'datacapture/',
    ingestQueueUrl: 'https://sqs/ingest',
    replayDlqUrl: 'https://sqs/replay-dlq',
    collectQueueUrl: 'https://sqs/collect',
    logGroups: {
      ingest: '/aws/lambda/ingest-logs',
      fire: '/aws/lambda/fire-logs',
      collect: '/aws/lambda/collect-logs',
    },
    relink: (runId) =>
      relinkCommand(
        {
          stack: 'Replay-llama',
          source: 'stack Replay-llama (eu-west-1)',
          region: 'eu-west-1',
          fromCloudFormation: true,
        },
        runId,
      ),
  };
  const state = (s: Partial<RunState>): RunState => ({
    phase: 'ingest',
    runId: null,
    ingest: null,
    targets: [],
    finished: [],
    deadlineMs: null,
    firstDueMs: null,
    mode: null,
    lagMs: null,
    ...s,
  });

  it('no run: names the ingest reports it looked for, the sample, the ingest queue and log group', () => {
    const text = missingText(state({}), where, ['file-1', 'mirror-1'], 300).join('\n');
    expect(text).toContain(
      'no run started within 300 s: the ingest wrote no s3://results-bucket/runs/file-1/ingest_report.json ' +
        'nor s3://results-bucket/runs/mirror-1/ingest_report.json',
    );
    expect(text).toContain(where.sampleUri);
    expect(text).toContain('the ingest queue https://sqs/ingest');
    expect(text).toContain('capture prefix "datacapture/"');
    expect(text).toContain("the ingest function's log group: /aws/lambda/ingest-logs");
  });

  it('not scheduled: names the run record and the ingest logs', () => {
    const text = missingText(state({ phase: 'schedule', runId: 'file-1' }), where, ['file-1'], 60).join('\n');
    expect(text).toContain('no s3://results-bucket/work/file-1/_run.json');
    expect(text).toContain('/aws/lambda/ingest-logs');
  });

  it('a target not finished: names its manifest, the replay DLQ, the fire and collect logs, and how to get the link later', () => {
    const text = missingText(
      state({
        phase: 'targets',
        runId: 'file-1',
        targets: ['A', 'B'],
        finished: ['A'],
        deadlineMs: Date.now() + 60_000,
        mode: 'mirror',
      }),
      where,
      ['file-1'],
      60,
    ).join('\n');
    expect(text).toContain('s3://results-bucket/runs/file-1/B/run_manifest.json is not there after 60 s');
    expect(text).not.toContain('runs/file-1/A/run_manifest.json');
    expect(text).toContain('The run may still finish');
    expect(text).toContain('mirror mode');
    expect(text).toContain('https://sqs/replay-dlq');
    expect(text).toContain(
      "the fire and collect functions' log groups: /aws/lambda/fire-logs, /aws/lambda/collect-logs",
    );
    expect(text).toContain('capture-replay link --run file-1 --stack Replay-llama --region eu-west-1');
  });

  it('no report: names report.html and the collect logs; log groups it could not look up are a command to list them', () => {
    const text = missingText(
      state({ phase: 'report', runId: 'file-1', targets: ['A'], finished: ['A'] }),
      { ...where, logGroups: 'aws cloudformation describe-stack-resources ...' },
      ['file-1'],
      60,
    ).join('\n');
    expect(text).toContain('s3://results-bucket/runs/file-1/report.html is not there');
    expect(text).toContain(
      "the collect function's log group (list them with: aws cloudformation describe-stack-resources ...)",
    );
  });

  it('the progress line is rewritten in place on a terminal, and written once per change elsewhere', () => {
    const sink = (isTTY: boolean) => {
      const chunks: string[] = [];
      return { chunks, stream: Object.assign(new PassThrough(), { isTTY, write: (c: string) => chunks.push(c) > 0 }) };
    };
    const tty = sink(true);
    const line = new StatusLine(tty.stream);
    line.show('ingesting', 1);
    line.show('ingesting', 3);
    line.end();
    expect(tty.chunks).toEqual(['\r\x1b[2Kingesting (1 s)', '\r\x1b[2Kingesting (3 s)', '\n']);
    const log = sink(false);
    const plain = new StatusLine(log.stream);
    plain.show('ingesting', 1);
    plain.show('ingesting', 3);
    plain.show('replaying', 5);
    plain.end();
    expect(log.chunks).toEqual(['ingesting\n', 'replaying\n']);
  });

  it('a run that starts after the timeout (mirror lag): says when it starts, why, and what to do', () => {
    const first = Date.now() + 900_000;
    const text = laterText(
      state({ phase: 'targets', runId: 'mirror-1', targets: ['A'], firstDueMs: first, mode: 'mirror', lagMs: 900_000 }),
      300,
      where.relink,
    ).join('\n');
    expect(text).toContain(
      `run mirror-1 is scheduled, but its first request is due at ${new Date(first).toISOString()} (mirror ` +
        `mode: each request is due at its inferenceTime + 900 s), after --timeout 300 s`,
    );
    expect(text).toMatch(/--timeout 10[12]\d\b/);
    expect(text).toContain('capture-replay link --run mirror-1 --stack Replay-llama --region eu-west-1');
  });

  it('the link command it suggests points at the same stack: its outputs file, or a name and region that are not the defaults', () => {
    const cfn = (stack: string, region: string | undefined) => ({
      stack,
      source: `stack ${stack}`,
      region,
      fromCloudFormation: true,
    });
    expect(relinkCommand(cfn('CaptureReplay', undefined), 'file-1')).toBe('capture-replay link --run file-1');
    expect(relinkCommand(cfn('Replay-llama', 'us-west-2'), 'file-1')).toBe(
      'capture-replay link --run file-1 --stack Replay-llama --region us-west-2',
    );
    expect(
      relinkCommand(
        { stack: 'X', source: 'out dir/cdk-outputs.json', region: 'us-west-2', fromCloudFormation: false },
        'file-1',
      ),
    ).toBe("capture-replay link --run file-1 --outputs 'out dir/cdk-outputs.json'");
  });

  it('progress names the phase and the targets still running', () => {
    expect(progressText(state({}))).toMatch(/^waiting for the ingest/);
    expect(progressText(state({ phase: 'targets', runId: 'file-1', targets: ['A', 'B'], finished: ['B'] }))).toBe(
      'run file-1 replaying: 1/2 targets done (waiting for A)',
    );
  });

  it("a target's line gives its counts and why it did not replay everything; a target with no success is not proof", () => {
    const ok = { scheduled: 15, succeeded: 15, failed: 0, dropped: 0, balanced: true };
    const bad = {
      scheduled: 15,
      succeeded: 0,
      failed: 15,
      dropped: 0,
      balanced: true,
      failedByType: { ConnectionError: 15 },
    };
    expect(targetLine('A', ok, 's3://r/runs/x/A/')).toBe(
      '  A: 15 scheduled, 15 succeeded, 0 failed, 0 dropped  s3://r/runs/x/A/',
    );
    expect(targetLine('B', bad, 's3://r/runs/x/B/')).toBe(
      '  B: 15 scheduled, 0 succeeded, 15 failed, 0 dropped (failed: ConnectionError 15)  s3://r/runs/x/B/',
    );
    expect(
      unprovenTargets(
        new Map([
          ['A', ok],
          ['B', bad],
        ]),
      ),
    ).toEqual(['B']);
    expect(unprovenTargets(new Map([['A', { ...ok, balanced: false }]]))).toEqual(['A']);
  });

  it('an AWS error is one line with what to do', () => {
    expect(
      describeAwsError(
        Object.assign(new Error('Could not load credentials from any providers'), { name: 'CredentialsProviderError' }),
        'read the outputs',
      ),
    ).toBe(
      'could not read the outputs: CredentialsProviderError: Could not load credentials from any providers ' +
        '(no AWS credentials found: configure the AWS CLI (aws configure, aws sso login) or set AWS_PROFILE / ' +
        'AWS_ACCESS_KEY_ID)',
    );
    expect(describeAwsError(new Error('Region is missing'), 'x')).toMatch(
      /\(no AWS region: pass --region or set AWS_REGION/,
    );
    // HEAD errors have no body: the SDK names them Unknown, with the status.
    expect(
      describeAwsError(
        Object.assign(new Error('UnknownError'), { name: 'Unknown', $metadata: { httpStatusCode: 403 } }),
        'read s3://r/k',
      ),
    ).toBe(
      'could not read s3://r/k: HTTP 403 (your identity lacks the permission (docs/first-deploy.md lists what these commands need))',
    );
    expect(
      describeAwsError(Object.assign(new Error('The provided token has expired.'), { name: 'ExpiredToken' }), 'x'),
    ).toMatch(/the credentials have expired/);
  });
});
