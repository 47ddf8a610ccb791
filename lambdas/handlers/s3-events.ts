/**
 * What an ingest queue message can carry: an S3 event notification (one or more records,
 * keys URL-encoded with `+` for space), S3's `s3:TestEvent` (sent when a notification is
 * configured: ignored), or an EventBridge "Object Created" event (keys not encoded).
 */
import { z } from 'zod';

export interface CaptureObjectRef {
  bucket: string;
  key: string;
  etag: string | null;
}

const s3Notification = z.object({
  Records: z.array(
    z.object({
      eventName: z.string(),
      s3: z.object({
        bucket: z.object({ name: z.string() }),
        object: z.object({ key: z.string(), eTag: z.string().optional() }),
      }),
    }),
  ),
});
const testEvent = z.object({ Event: z.literal('s3:TestEvent') });
const eventBridge = z.object({
  'detail-type': z.literal('Object Created'),
  detail: z.object({
    bucket: z.object({ name: z.string() }),
    object: z.object({ key: z.string(), etag: z.string().optional() }),
  }),
});

export type ParsedIngestMessage =
  | { kind: 'test' }
  | { kind: 'objects'; objects: CaptureObjectRef[]; ignored: number }
  | { kind: 'invalid'; reason: string };

export function decodeS3Key(key: string): string {
  return decodeURIComponent(key.replace(/\+/g, ' '));
}

export function parseIngestMessage(body: string): ParsedIngestMessage {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return { kind: 'invalid', reason: 'message body is not JSON' };
  }
  if (testEvent.safeParse(value).success) return { kind: 'test' };
  const bridge = eventBridge.safeParse(value);
  if (bridge.success) {
    const { bucket, object } = bridge.data.detail;
    return {
      kind: 'objects',
      objects: [{ bucket: bucket.name, key: object.key, etag: object.etag ?? null }],
      ignored: 0,
    };
  }
  const notification = s3Notification.safeParse(value);
  if (!notification.success)
    return {
      kind: 'invalid',
      reason: 'neither an S3 notification, an S3 test event nor an EventBridge Object Created event',
    };
  const created = notification.data.Records.filter((r) => r.eventName.startsWith('ObjectCreated'));
  return {
    kind: 'objects',
    objects: created.map((r) => ({
      bucket: r.s3.bucket.name,
      key: decodeS3Key(r.s3.object.key),
      etag: r.s3.object.eTag ?? null,
    })),
    ignored: notification.data.Records.length - created.length,
  };
}
