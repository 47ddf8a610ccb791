import { createHash } from 'node:crypto';

/**
 * A UUID-formatted identifier derived from its parts (SHA-256, version nibble 8 "custom").
 * Deterministic ids make at-least-once delivery safe: a request fired for the same run,
 * target and plan index always carries the same X-Request-ID, so duplicates collapse.
 */
export function deterministicUuid(...parts: (string | number)[]): string {
  const hex = createHash('sha256').update(parts.map(String).join('\u001f')).digest('hex');
  const variant = ((parseInt(hex.charAt(16), 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/**
 * The run id of a capture file version replayed on its own (`file` mode) or mirrored
 * (`mirror`): the same object and ETag (as the S3 event carries it, unquoted) always map to the
 * same run, so a redelivered event schedules nothing twice and `verify-deploy` knows which run
 * to watch.
 */
export function fileRunId(mode: 'file' | 'mirror', bucket: string, key: string, etag: string): string {
  return `${mode}-${deterministicUuid(mode, bucket, key, etag)}`;
}
