/**
 * `capture-replay link`: a presigned HTTPS link to a deployment's results, to open in a
 * browser without making the bucket public: a run's report.html (`--run`), a target's result
 * files (`--run --target`), a schedule's trend page (`--schedule`), or any object
 * (`<s3-uri>`). The results bucket comes from the stack's outputs (ResultsBucketName).
 *
 * stdout: the link (one line), or for a target one `<file> <link>` line per file, so that
 * `open "$(capture-replay link --run <id>)"` works; stderr: where it points and how long it
 * lasts. The link acts with the permissions of the identity that signs it (s3:GetObject on
 * the object), until it expires (s3-links.ts).
 *
 * Trend pages' relative links, and what reaches the terminal: linkCommand.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import { probeBucket } from '../adapters/aws/bucket-region';
import { SCHEDULE_NAME } from '../core/scheduled-runs/contract';
import { isTargetName } from '../core/target-name';
import { CaptureReplayError, CommandProblem, exitCodeOf } from '../core/errors';
import { describeAwsError } from './aws-problem';
import { USAGE_EXIT, usageMessage } from './cli-usage';
import {
  cliS3Client,
  lifetimeText,
  objectExists,
  parseS3Uri,
  presignGet,
  reportKey,
  s3Uri,
  scheduleKey,
  targetFileKeys,
  type S3Location,
} from './s3-links';
import { missingOutputs, readStackOutputs } from './stack-outputs';
import { terminalLine } from './terminal-text';

export interface LinkOptions {
  uri?: string | undefined;
  run?: string | undefined;
  target?: string | undefined;
  schedule?: string | undefined;
  stack?: string | undefined;
  outputs?: string | undefined;
  region?: string | undefined;
  /** Seconds the link lasts. */
  expires: number;
}

export type LinkRequest =
  | { kind: 'uri'; location: S3Location }
  | { kind: 'run'; runId: string; target?: string }
  | { kind: 'schedule'; name: string };

/** Run ids the pipeline and the CLI make: `file-<uuid>`, `window-<uuid>`, a UTC time with a suffix... no `/`. */
const RUN_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

/** What the arguments ask for, or what is wrong with them (a usage error). */
export function linkRequest(o: Pick<LinkOptions, 'uri' | 'run' | 'target' | 'schedule'>): LinkRequest | string {
  const given = [o.uri !== undefined, o.run !== undefined, o.schedule !== undefined].filter(Boolean).length;
  if (given !== 1)
    return `give one of <s3-uri>, --run <run-id> or --schedule <name>${given > 1 ? ', not several' : ''}`;
  if (o.target !== undefined && o.run === undefined) return '--target goes with --run (a target of that run)';
  if (o.uri !== undefined) {
    const location = parseS3Uri(o.uri);
    return typeof location === 'string' ? location : { kind: 'uri', location };
  }
  if (o.run !== undefined) {
    if (!RUN_ID.test(o.run)) return `--run takes a run id such as file-<uuid> or window-<uuid> (got "${o.run}")`;
    if (o.target !== undefined && !isTargetName(o.target))
      return `--target takes a target name: letters, digits, . _ - (got "${o.target}")`;
    return { kind: 'run', runId: o.run, ...(o.target !== undefined ? { target: o.target } : {}) };
  }
  const name = o.schedule as string;
  if (!SCHEDULE_NAME.test(name)) return `--schedule takes a schedule name: 1-64 letters, digits, . _ - (got "${name}")`;
  return { kind: 'schedule', name };
}

/** What is not there, said so the user knows whether to wait or to fix the name. */
function notThere(request: LinkRequest, uri: string): string {
  switch (request.kind) {
    case 'run':
      return request.target
        ? `no ${uri}: target ${request.target} of run ${request.runId} has not finished, or is not one of its targets`
        : `no ${uri}: run ${request.runId} has not finished (its report is written when every target has), or the run id is wrong`;
    case 'schedule':
      return (
        `no ${uri}: the trend page appears after the schedule's first run (start one now with: capture-replay ` +
        `schedule-now ${request.name})`
      );
    case 'uri':
      return `no object at ${uri}`;
  }
}

/** The object a folder URI stands for: its report.html, else its index.html (a trend page). */
async function resolveFolder(s3: S3Client, loc: S3Location): Promise<S3Location | null> {
  for (const page of ['report.html', 'index.html']) {
    const candidate = { bucket: loc.bucket, key: loc.key + page };
    if (await objectExists(s3, candidate)) return candidate;
  }
  return null;
}

async function locations(
  request: LinkRequest,
  options: LinkOptions,
): Promise<{ region: string | undefined; objects: S3Location[] }> {
  if (request.kind === 'uri') return { region: options.region, objects: [request.location] };
  const outputs = await readStackOutputs({
    stack: options.stack,
    outputsFile: options.outputs,
    region: options.region,
  });
  const missing = missingOutputs(outputs, ['ResultsBucketName']);
  if (missing) throw new CommandProblem(missing);
  const bucket = outputs.values.ResultsBucketName as string;
  const keys =
    request.kind === 'schedule'
      ? [scheduleKey(request.name)]
      : request.target
        ? targetFileKeys(request.runId, request.target)
        : [reportKey(request.runId)];
  return { region: outputs.region, objects: keys.map((key) => ({ bucket, key })) };
}

/**
 * A client in the bucket's own Region (or `s3` when it is, or the Region cannot be told): a
 * presigned link is signed for a Region, and S3 refuses one signed for another than the
 * bucket's, while the client's own calls follow S3's redirects and would not show it.
 */
async function clientInBucketRegion(s3: S3Client, bucket: string): Promise<S3Client> {
  const { region } = await probeBucket(s3, bucket);
  if (region === undefined || region === (await s3.config.region())) return s3;
  s3.destroy();
  return cliS3Client(region);
}

/**
 * A schedule's trend page links each run's report relatively: those links are not signed, so
 * a run's report opened from a presigned trend page needs its own link (`link --run <id>`).
 *
 * What an argument or the outputs hold (a URI, a bucket name) reaches the terminal through
 * terminal-text.ts: an escape code in them is shown, never run.
 */
export async function linkCommand(
  options: LinkOptions,
  out: NodeJS.WritableStream = process.stdout,
  err: NodeJS.WritableStream = process.stderr,
): Promise<number> {
  const request = linkRequest(options);
  if (typeof request === 'string') {
    err.write(usageMessage('link', terminalLine(request)));
    return USAGE_EXIT;
  }
  let s3: S3Client | undefined;
  try {
    const { region, objects } = await locations(request, options);
    s3 = cliS3Client(region);
    // A stack's results bucket is in the stack's Region; any other bucket may be elsewhere.
    if (request.kind === 'uri') s3 = await clientInBucketRegion(s3, request.location.bucket);
    let targets = objects;
    if (request.kind === 'uri' && (request.location.key === '' || request.location.key.endsWith('/'))) {
      const page = await resolveFolder(s3, request.location);
      if (!page)
        throw new CommandProblem(
          `${s3Uri(request.location)} is a folder with no report.html or index.html: give an object's URI`,
        );
      targets = [page];
    }
    // The manifest (last of a target's files) or the one page: its presence means the rest is there.
    const checked = targets[targets.length - 1] as S3Location;
    if (!(await objectExists(s3, checked))) throw new CommandProblem(notThere(request, s3Uri(checked)));
    const links = await Promise.all(targets.map((t) => presignGet(s3 as S3Client, t, options.expires)));
    if (targets.length === 1) out.write(`${terminalLine(links[0] as string)}\n`);
    else
      targets.forEach((t, i) =>
        out.write(`${terminalLine(`${t.key.slice(t.key.lastIndexOf('/') + 1)} ${links[i]}`)}\n`),
      );
    const what =
      targets.length === 1
        ? s3Uri(checked)
        : `${s3Uri({ bucket: checked.bucket, key: checked.key.slice(0, checked.key.lastIndexOf('/') + 1) })} (${targets.length} files)`;
    err.write(`${terminalLine(`${what}: link valid for ${lifetimeText(options.expires)}`)}\n`);
    return 0;
  } catch (error) {
    const said = error instanceof CaptureReplayError ? error.message : describeAwsError(error, 'make the link');
    err.write(`capture-replay link: ${terminalLine(said)}\n`);
    return exitCodeOf(error);
  } finally {
    s3?.destroy();
  }
}
