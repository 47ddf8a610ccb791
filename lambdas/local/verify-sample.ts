/**
 * The capture file `verify-deploy` drops into the capture bucket, and the run it starts.
 *
 * The file is the smallest bundled sample, copied byte for byte: fifteen chat requests
 * (OpenAI-style `messages` bodies, content type application/json, some base64-encoded as
 * SageMaker writes them without a configured content type), one of them captured twice, a
 * blank line and a line that is not JSON. An HTTP chat target and a SageMaker target both take
 * every one of its records; the ingest report counts the duplicate and the bad line, as it
 * would in a real capture. Its records keep their captured times (2026-04-29): a scheduled
 * window never contains them, and a `mirror` deployment replays them at once, as late as
 * they are (or drops them, with `latePolicy: drop`).
 *
 * It lands where SageMaker would write a capture of an endpoint called
 * `capture-replay-verify` this hour: `<prefix>capture-replay-verify/AllTraffic/yyyy/mm/dd/hh/
 * <mm-ss-mmm>-<8 hex>.jsonl` (UTC), a new name each time, so that every verification is a run
 * of its own (the ingest keys runs on the object's key and ETag).
 */
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { deterministicUuid } from '../core/ids';

export const SAMPLE_FILE = fileURLToPath(new URL('../../samples/datacapture/demo-endpoint/AllTraffic/2026/04/29/00/14-03-887-0a1b2c3d.jsonl', import.meta.url));
export const VERIFY_ENDPOINT = 'capture-replay-verify';
export const VERIFY_VARIANT = 'AllTraffic';

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/**
 * The folder captures go under, as the plan function reads the prefix: one that does not end
 * at a folder boundary (`datacapture`) names a folder (`datacapture/...`).
 */
export function captureRoot(capturePrefix: string): string {
  return capturePrefix === '' || capturePrefix.endsWith('/') ? capturePrefix : `${capturePrefix}/`;
}

/** The sample's key for a capture at `now`, with `suffix` (8 hex digits) making the name unique. */
export function sampleKey(capturePrefix: string, now: Date, suffix = randomBytes(4).toString('hex')): string {
  const hour = `${now.getUTCFullYear()}/${pad(now.getUTCMonth() + 1)}/${pad(now.getUTCDate())}/${pad(now.getUTCHours())}`;
  const name = `${pad(now.getUTCMinutes())}-${pad(now.getUTCSeconds())}-${pad(now.getUTCMilliseconds(), 3)}-${suffix}.jsonl`;
  return `${captureRoot(capturePrefix)}${VERIFY_ENDPOINT}/${VERIFY_VARIANT}/${hour}/${name}`;
}

/**
 * The run ids the ingest can give this object: `<mode>-<uuid of mode, bucket, key, ETag>`
 * (lambdas/handlers/ingest.ts fileRunId; a unit test holds the two equal). The deployment's
 * mode (`file` or `mirror`) is not a stack output, so both are watched. The ETag is the one
 * the S3 event carries: PutObject's, without its quotes.
 */
export function candidateRunIds(bucket: string, key: string, etag: string): string[] {
  const bare = etag.replace(/"/g, '');
  return (['file', 'mirror'] as const).map((mode) => `${mode}-${deterministicUuid(mode, bucket, key, bare)}`);
}
