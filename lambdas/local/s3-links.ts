/**
 * Where a deployment's results are, and links a browser can open: `s3://` URIs for the AWS
 * CLI, presigned HTTPS GET links for a person (the bucket stays private; the link carries the
 * signer's permission for a limited time).
 *
 * A presigned link acts with the permissions of whoever signed it, until it expires: at most
 * 7 days (604,800 s) with SigV4, and no longer than the signing credentials themselves (a
 * link signed with SSO or assumed-role session credentials stops working when the session
 * ends) (https://docs.aws.amazon.com/AmazonS3/latest/userguide/using-presigned-url.html,
 * https://docs.aws.amazon.com/cli/latest/reference/s3/presign.html).
 */
import { GetObjectCommand, HeadObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { ARTIFACT_FILES } from '../core/export/artifacts';
import { RUN_FILES } from '../core/export/run-artifacts';
import { runPrefix, targetPrefix } from '../core/pipeline/keys';
import { scheduleIndexKey } from '../core/scheduled-runs/contract';
import { isNotFound } from './aws-problem';
import { regionConfig } from './aws-region';

/** SigV4's longest presigned link, in seconds. */
export const MAX_LINK_SECONDS = 604_800;
export const DEFAULT_LINK_SECONDS = 3_600;

export interface S3Location {
  bucket: string;
  key: string;
}

export const s3Uri = (loc: S3Location) => `s3://${loc.bucket}/${loc.key}`;

/** `s3://bucket/key` as a location, or what is wrong with it. */
export function parseS3Uri(raw: string): S3Location | string {
  const m = /^s3:\/\/([^/]+)\/(.*)$/.exec(raw.trim());
  if (!m || !m[1]) return `"${raw}" is not an s3:// URI (s3://<bucket>/<key>)`;
  return { bucket: m[1], key: m[2] as string };
}

/** The run's report page. */
export const reportKey = (runId: string) => runPrefix(runId) + RUN_FILES.report;
/** A schedule's trend page. */
export const scheduleKey = (schedule: string) => scheduleIndexKey(schedule);
/** A target's result files, the manifest last (written last: its presence means the target is final). */
export const targetFileKeys = (runId: string, target: string) =>
  [ARTIFACT_FILES.records, ARTIFACT_FILES.aiperfJson, ARTIFACT_FILES.aiperfCsv, ARTIFACT_FILES.manifest].map(
    (f) => targetPrefix(runId, target) + f,
  );

/**
 * An S3 client for the command line: the SDK's default chain for credentials and region,
 * `region` overriding. Checksums only where an operation requires them, so that a presigned
 * GET carries no checksum parameters a browser cannot honour.
 */
export function cliS3Client(region: string | null | undefined): S3Client {
  return new S3Client({
    ...regionConfig(region),
    followRegionRedirects: true,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
}

/** A presigned HTTPS GET link to the object, valid `expiresIn` seconds. */
export function presignGet(client: S3Client, loc: S3Location, expiresIn: number): Promise<string> {
  return getSignedUrl(client, new GetObjectCommand({ Bucket: loc.bucket, Key: loc.key }), { expiresIn });
}

/**
 * Whether the object is there (HeadObject, authorized as s3:GetObject). A missing key is a
 * 404 only for a caller that may also list the bucket; without s3:ListBucket S3 answers 403
 * (https://docs.aws.amazon.com/AmazonS3/latest/API/API_HeadObject.html), which is thrown.
 */
export async function objectExists(client: S3Client, loc: S3Location): Promise<boolean> {
  try {
    await client.send(new HeadObjectCommand({ Bucket: loc.bucket, Key: loc.key }));
    return true;
  } catch (error) {
    if (isNotFound(error)) return false;
    throw error;
  }
}

/** How long a link lasts, in words: `1 hour`, `15 minutes`, `7 days`. */
export function lifetimeText(seconds: number): string {
  const units: [number, string][] = [
    [86_400, 'day'],
    [3_600, 'hour'],
    [60, 'minute'],
  ];
  for (const [size, unit] of units) {
    if (seconds % size === 0) {
      const n = seconds / size;
      return `${n} ${unit}${n === 1 ? '' : 's'}`;
    }
  }
  return `${seconds} seconds`;
}
