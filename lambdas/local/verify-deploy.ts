/**
 * `capture-replay verify-deploy`: proves a deployment replays. It drops the bundled sample
 * capture where SageMaker would write one (verify-sample.ts), follows the run the stack
 * starts for it (verify-watch.ts) with a progress line, and prints where the results are,
 * each target's counts, the stack's CloudWatch dashboard (its DashboardUrl output) and a
 * presigned link to the run's report.html.
 *
 * The stack is found by its outputs (stack-outputs.ts). A stack that replays only on
 * schedule (AutoReplay `none`) starts no run for a new capture: the command says so and how
 * to start a scheduled run now, and writes nothing. Nothing is removed from the capture
 * bucket unless `--clean` is given: then the sample, once the run no longer needs it.
 *
 * Exit codes, and what reaches the terminal: verifyDeployCommand.
 */
import { DeleteObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { readFile } from 'node:fs/promises';
import { CaptureReplayError, CommandProblem, exitCodeOf } from '../core/errors';
import { describeAwsError } from './aws-problem';
import { USAGE_EXIT } from './cli-usage';
import { cliS3Client, DEFAULT_LINK_SECONDS, lifetimeText, presignGet, reportKey, s3Uri } from './s3-links';
import { missingOutputs, readStackOutputs, relinkCommand, stackLogGroups, type StackOutputs } from './stack-outputs';
import { terminalLine, terminalText } from './terminal-text';
import { candidateRunIds, SAMPLE_FILE, sampleKey, stampSample } from './verify-sample';
import { laterText, missingText, progressText, RunWatch, type TargetCounts } from './verify-watch';

export interface VerifyDeployOptions {
  stack?: string | undefined;
  region?: string | undefined;
  outputs?: string | undefined;
  /** Seconds to wait for the run's report. */
  timeout: number;
  clean?: boolean | undefined;
  /** Seconds the report link lasts. */
  expires?: number | undefined;
  /** Between two looks at the results bucket. */
  pollMs?: number | undefined;
}

/** How a stack replays new captures: its AutoReplay output (absent: every target, as before the output existed). */
export type AutoReplay = { kind: 'all' } | { kind: 'none' } | { kind: 'targets'; targets: string[] };

export function parseAutoReplay(value: string | undefined): AutoReplay {
  const v = (value ?? 'all').trim();
  if (v === 'all' || v === '') return { kind: 'all' };
  if (v === 'none') return { kind: 'none' };
  return {
    kind: 'targets',
    targets: v
      .split(',')
      .map((t) => t.trim())
      .filter(Boolean),
  };
}

/** What a stack that replays only on schedule tells the user, with its own plan queue filled in. */
export function scheduleOnlyText(outputs: StackOutputs): string[] {
  const queue = outputs.values.PlanQueueUrl;
  return [
    `capture-replay verify-deploy: stack ${outputs.stack} replays captures only on its schedules ` +
      `(autoReplay: false): a new capture file starts no run, so a sample cannot show the deploy works.`,
    'Start a scheduled run now instead, and open its report when it is done:',
    `  capture-replay schedule-now <schedule> --queue-url ` +
      `${queue ?? '<PlanQueueUrl output>'}${outputs.region ? ` --region ${outputs.region}` : ''}`,
    `  capture-replay link --run <the runId it prints> --stack ${outputs.stack}`,
    ...dashboardLines(outputs),
  ];
}

/** The stack's CloudWatch dashboard (its DashboardUrl output), where the runs' metrics land; none for a stack without one. */
export function dashboardLines(outputs: Pick<StackOutputs, 'values'>): string[] {
  const url = outputs.values.DashboardUrl;
  return url ? [`  dashboard: ${url} (the runs' metrics in CloudWatch, a few minutes after each run)`] : [];
}

/** One status line, rewritten in place on a terminal; elsewhere a line each time it changes. */
export class StatusLine {
  private last = '';
  constructor(private readonly err: NodeJS.WritableStream & { isTTY?: boolean }) {}
  show(text: string, elapsedS: number): void {
    if (this.err.isTTY) this.err.write(`\r\x1b[2K${terminalLine(text)} (${elapsedS} s)`);
    else if (text !== this.last) this.err.write(`${terminalLine(text)}\n`);
    this.last = text;
  }
  end(): void {
    if (this.err.isTTY && this.last) this.err.write('\n');
    this.last = '';
  }
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
const byReason = (r: Record<string, number> | undefined) =>
  Object.entries(r ?? {})
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');

/** A target's line: its counts, and why it did not replay everything. */
export function targetLine(name: string, c: TargetCounts, folder: string): string {
  const why = [
    c.failed > 0 ? `failed: ${byReason(c.failedByType)}` : '',
    c.dropped > 0 ? `dropped: ${byReason(c.droppedByReason)}` : '',
  ]
    .filter(Boolean)
    .join('; ');
  return (
    `  ${name}: ${c.scheduled} scheduled, ${c.succeeded} succeeded, ${c.failed} failed, ${c.dropped} ` +
    `dropped${why ? ` (${why})` : ''}  ${folder}`
  );
}

/** Targets that did not show the deploy works: nothing succeeded, or the accounting does not balance. */
export function unprovenTargets(counts: ReadonlyMap<string, TargetCounts>): string[] {
  return [...counts].filter(([, c]) => c.succeeded === 0 || !c.balanced).map(([name]) => name);
}

interface Upload {
  bucket: string;
  key: string;
  etag: string;
}

async function uploadSample(s3: S3Client, bucket: string, capturePrefix: string): Promise<Upload> {
  const now = Date.now();
  const key = sampleKey(capturePrefix, new Date(now));
  const body = stampSample(await readFile(SAMPLE_FILE, 'utf8'), now);
  try {
    const put = await s3.send(
      new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ContentType: 'application/jsonl' }),
    );
    if (!put.ETag)
      throw new CommandProblem(`S3 returned no ETag for ${s3Uri({ bucket, key })}: the run cannot be identified`);
    return { bucket, key, etag: put.ETag };
  } catch (error) {
    if (error instanceof CommandProblem) throw error;
    throw new CommandProblem(
      describeAwsError(error, `write the sample capture to ${s3Uri({ bucket, key })} (s3:PutObject)`),
      { cause: error },
    );
  }
}

/** Removes the sample (--clean) once the run has read it; says so either way. */
async function cleanSample(s3: S3Client, upload: Upload, runRead: boolean, err: NodeJS.WritableStream): Promise<void> {
  const uri = s3Uri(upload);
  if (!runRead) {
    err.write(
      `${terminalLine(`kept ${uri}: the ingest has not finished with it (remove it later with: aws s3 rm ${uri})`)}\n`,
    );
    return;
  }
  try {
    await s3.send(new DeleteObjectCommand({ Bucket: upload.bucket, Key: upload.key }));
    err.write(`${terminalLine(`removed ${uri}`)}\n`);
  } catch (error) {
    err.write(`${terminalLine(describeAwsError(error, `remove ${uri} (s3:DeleteObject)`))}\n`);
  }
}

interface Io {
  out: NodeJS.WritableStream;
  err: NodeJS.WritableStream & { isTTY?: boolean };
}

/** How the wait ended: the report is there, time ran out, or the run cannot start before it does. */
type Outcome = 'done' | 'timeout' | 'later';

/** Waits for the run with a progress line. */
async function follow(watch: RunWatch, timeoutS: number, pollMs: number, err: Io['err']): Promise<Outcome> {
  const started = Date.now();
  const end = started + timeoutS * 1000;
  const line = new StatusLine(err);
  try {
    for (;;) {
      const done = await watch.poll().catch((error: unknown) => {
        throw new CommandProblem(
          describeAwsError(error, `read the run's progress in s3://${watch.bucket}/ (s3:GetObject, s3:ListBucket)`),
          { cause: error },
        );
      });
      line.show(progressText(watch.state), Math.round((Date.now() - started) / 1000));
      if (done) return 'done';
      // A mirror run starts at its records' inferenceTime + lag: waiting past the timeout is no use.
      if (watch.state.firstDueMs !== null && watch.state.firstDueMs > end) return 'later';
      if (Date.now() >= end) return 'timeout';
      await new Promise((r) => setTimeout(r, Math.min(pollMs, Math.max(0, end - Date.now()))));
    }
  } finally {
    line.end();
  }
}

async function summary(
  watch: RunWatch,
  s3: S3Client,
  upload: Upload,
  outputs: StackOutputs,
  o: { expires: number; relink: (runId: string) => string; out: Io['out'] },
): Promise<string[]> {
  const { expires, relink, out } = o;
  const runId = watch.state.runId as string;
  const counts = await watch.counts();
  const ingest = watch.state.ingest;
  const report = { bucket: watch.bucket, key: reportKey(runId) };
  const link = await presignGet(s3, report, expires);
  const unproven = unprovenTargets(counts);
  out.write(
    terminalText(
      [
        unproven.length === 0
          ? 'The deploy works: the sample capture was replayed to every target.'
          : `The pipeline ran, but ${unproven.join(', ')} replayed nothing that succeeded.`,
        `  sample:  ${s3Uri(upload)}`,
        ...(ingest
          ? [
              `  ingest:  ${ingest.accepted} records accepted, ${ingest.rejected} ` +
                `rejected${ingest.rejectedByReason ? ` (${byReason(ingest.rejectedByReason)})` : ''}` +
                `${ingest.blankLines ? `, ${plural(ingest.blankLines, 'blank line')}` : ''}`,
            ]
          : []),
        `  run:     ${runId}`,
        `  results: s3://${watch.bucket}/runs/${runId}/`,
        ...[...counts].map(([name, c]) => targetLine(name, c, `s3://${watch.bucket}/runs/${runId}/${name}/`)),
        `  report:  ${s3Uri(report)}`,
        ...dashboardLines(outputs),
        `Open the report (link valid for ${lifetimeText(expires)}; a new one: ${relink(runId)}):`,
        link,
        '',
      ].join('\n'),
    ),
  );
  return unproven;
}

/** The run from the upload to the summary; the exit code. */
async function verify(outputs: StackOutputs, options: VerifyDeployOptions, io: Io): Promise<number> {
  const values = outputs.values;
  const relink = (runId: string) => relinkCommand(outputs, runId);
  const s3 = cliS3Client(outputs.region);
  try {
    const prefix = values.CapturePrefix ?? '';
    const upload = await uploadSample(s3, values.CaptureBucketName as string, prefix);
    io.err.write(`${terminalLine(`wrote the sample capture to ${s3Uri(upload)}`)}\n`);
    const candidates = candidateRunIds(upload.bucket, upload.key, upload.etag);
    const watch = new RunWatch(s3, values.ResultsBucketName as string, candidates);
    const outcome = await follow(watch, options.timeout, options.pollMs ?? 2000, io.err);
    const runRead = watch.state.phase !== 'ingest' && watch.state.phase !== 'schedule';
    let code: number;
    if (outcome === 'done') {
      code =
        (
          await summary(watch, s3, upload, outputs, {
            expires: options.expires ?? DEFAULT_LINK_SECONDS,
            relink,
            out: io.out,
          })
        ).length === 0
          ? 0
          : 1;
    } else if (outcome === 'later') {
      io.err.write(
        `capture-replay verify-deploy: ${terminalText(laterText(watch.state, options.timeout, relink).join('\n'))}\n`,
      );
      code = 1;
    } else {
      const logGroups = outputs.fromCloudFormation
        ? await stackLogGroups(outputs.stack, outputs.region)
        : "the stack's log groups: look its resources up in CloudFormation";
      const where = {
        results: watch.bucket,
        sampleUri: s3Uri(upload),
        capturePrefix: prefix,
        ingestQueueUrl: values.IngestQueueUrl,
        replayDlqUrl: values.ReplayDlqUrl,
        collectQueueUrl: values.CollectQueueUrl,
        logGroups,
        relink,
      };
      io.err.write(
        `capture-replay verify-deploy: ${terminalText(missingText(watch.state, where, candidates, options.timeout).join('\n'))}\n`,
      );
      code = 1;
    }
    if (options.clean) await cleanSample(s3, upload, runRead, io.err);
    return code;
  } finally {
    s3.destroy();
  }
}

/**
 * Runs the command. Exit codes: 0 every target replayed the sample; 1 it could not be shown (no stack, no
 * permission, the timeout, a target that replayed nothing); 2 usage, or a stack that
 * replays only on schedule.
 *
 * What the outputs hold (a prefix, a bucket or stack name, from CloudFormation or a file) and
 * what AWS answers reach the terminal through terminal-text.ts: an escape code in an outputs
 * file is shown, never run.
 */
export async function verifyDeployCommand(
  options: VerifyDeployOptions,
  io: Io = { out: process.stdout, err: process.stderr },
): Promise<number> {
  try {
    const outputs = await readStackOutputs({
      stack: options.stack,
      outputsFile: options.outputs,
      region: options.region,
    });
    if (parseAutoReplay(outputs.values.AutoReplay).kind === 'none') {
      io.err.write(`${terminalText(scheduleOnlyText(outputs).join('\n'))}\n`);
      return USAGE_EXIT;
    }
    // No CapturePrefix output: the whole bucket is the captures.
    const missing = missingOutputs(outputs, ['CaptureBucketName', 'ResultsBucketName']);
    if (missing) throw new CommandProblem(missing);
    io.err.write(`stack: ${terminalLine(outputs.source)}\n`);
    return await verify(outputs, options, io);
  } catch (error) {
    io.err.write(
      `capture-replay verify-deploy: ` +
        `${terminalLine(error instanceof CaptureReplayError ? error.message : describeAwsError(error, 'verify the deploy'))}\n`,
    );
    return exitCodeOf(error);
  }
}
