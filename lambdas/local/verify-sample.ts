/**
 * The capture file `verify-deploy` drops into the capture bucket, and the run it starts.
 *
 * The file is the smallest bundled sample: fifteen chat requests (OpenAI-style `messages`
 * bodies, content type application/json, some base64-encoded as SageMaker writes them when
 * no content type is configured), one of them captured twice, a blank line and a line that
 * is not JSON. An HTTP chat target and a SageMaker target both take every one of its
 * records; the ingest report counts the duplicate and the bad line, as it would in a real
 * capture.
 *
 * Where it lands, and why its records are stamped now: captureRoot.
 */
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { fileRunId } from '../core/ids';

export const SAMPLE_FILE = fileURLToPath(
  new URL('../../samples/datacapture/demo-endpoint/AllTraffic/2026/04/29/00/14-03-887-0a1b2c3d.jsonl', import.meta.url),
);
export const VERIFY_ENDPOINT = 'capture-replay-verify';
export const VERIFY_VARIANT = 'AllTraffic';

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/**
 * The folder captures go under, as the plan function reads the prefix: one that does not end
 * at a folder boundary (`datacapture`) names a folder (`datacapture/...`).
 *
 * It lands as SageMaker would write a capture of an endpoint called `capture-replay-verify`
 * now: under `<prefix>capture-replay-verify/AllTraffic/yyyy/mm/dd/hh/<mm-ss-mmm>-<8 hex>.jsonl`
 * (UTC), with its records stamped from now on (their spacing kept). A `file` deployment
 * replays it `leadSeconds` after it lands; a `mirror` one at each record's inferenceTime +
 * lag, which only current times make possible (a record captured long ago is due long ago:
 * its run is finalised before anything fires). A new name each time makes each verification
 * a run of its own (the ingest keys runs on the object's key and ETag).
 */
export function captureRoot(capturePrefix: string): string {
  return capturePrefix === '' || capturePrefix.endsWith('/') ? capturePrefix : `${capturePrefix}/`;
}

/** ISO 8601 in UTC, whole seconds written as SageMaker writes them (`...T17:05:09Z`). */
const isoTime = (ms: number) =>
  ms % 1000 === 0 ? new Date(ms).toISOString().replace('.000Z', 'Z') : new Date(ms).toISOString();

/**
 * The sample as captured at `nowMs`: every record's inferenceTime moved by the same whole
 * number of seconds, so that the earliest is now's second and the spacing stays. Lines that
 * are not records (blank, not JSON) stay as they are: the ingest report counts them.
 */
export function stampSample(text: string, nowMs: number): string {
  const lines = text.split('\n');
  const records = lines.map((line) => {
    try {
      const value = JSON.parse(line) as { eventMetadata?: { inferenceTime?: unknown } } | null;
      const at =
        typeof value?.eventMetadata?.inferenceTime === 'string' ? Date.parse(value.eventMetadata.inferenceTime) : NaN;
      return Number.isFinite(at) ? { value: value as { eventMetadata: { inferenceTime: string } }, at } : null;
    } catch {
      return null;
    }
  });
  const times = records.flatMap((r) => (r ? [r.at] : []));
  if (times.length === 0) return text;
  const shift = Math.floor(nowMs / 1000) * 1000 - Math.floor(Math.min(...times) / 1000) * 1000;
  return lines
    .map((line, i) => {
      const record = records[i];
      if (!record) return line;
      record.value.eventMetadata.inferenceTime = isoTime(record.at + shift);
      return JSON.stringify(record.value);
    })
    .join('\n');
}

/** The sample's key for a capture at `now`, with `suffix` (8 hex digits) making the name unique. */
export function sampleKey(capturePrefix: string, now: Date, suffix = randomBytes(4).toString('hex')): string {
  const hour = `${now.getUTCFullYear()}/${pad(now.getUTCMonth() + 1)}/${pad(now.getUTCDate())}/${pad(now.getUTCHours())}`;
  const name = `${pad(now.getUTCMinutes())}-${pad(now.getUTCSeconds())}-${pad(now.getUTCMilliseconds(), 3)}-${suffix}.jsonl`;
  return `${captureRoot(capturePrefix)}${VERIFY_ENDPOINT}/${VERIFY_VARIANT}/${hour}/${name}`;
}

/**
 * The run ids the ingest can give this object (fileRunId). The deployment's
 * mode (`file` or `mirror`) is not a stack output, so both are watched. The ETag is the one
 * the S3 event carries: PutObject's, without its quotes.
 */
export function candidateRunIds(bucket: string, key: string, etag: string): string[] {
  const bare = etag.replace(/"/g, '');
  return (['file', 'mirror'] as const).map((mode) => fileRunId(mode, bucket, key, bare));
}
