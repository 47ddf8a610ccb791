/**
 * The AWS meter on real SDK v3 clients whose HTTP layer is a stub: SQS billed requests by
 * 64 KB chunk (a batch by its total payload, a receive by what came back), S3 requests by
 * price class, retries counted per attempt, failures before a response not billed.
 */
import {
  DeleteObjectCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import {
  DeleteMessageBatchCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { AwsMeter, s3RequestClass, sqsBilledRequests, sqsPayload } from '../../support/aws-meter';

const md5 = (s: string) => createHash('md5').update(s).digest('hex');
const QUEUE = 'http://127.0.0.1:1/123456789012/replay';

interface StubRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  query?: Record<string, unknown>;
  body?: unknown;
}
type Reply = { status: number; headers?: Record<string, string>; body?: string };

/** A request handler the SDK calls instead of the network. */
function stub(reply: (req: StubRequest, target: string) => Reply | Error) {
  return {
    handle: async (req: StubRequest) => {
      const r = reply(req, req.headers['x-amz-target'] ?? '');
      if (r instanceof Error) throw r;
      return {
        response: { statusCode: r.status, headers: r.headers ?? {}, body: Readable.from([Buffer.from(r.body ?? '')]) },
      };
    },
  };
}

const config = {
  region: 'us-east-1',
  endpoint: 'http://127.0.0.1:1',
  credentials: { accessKeyId: 'x', secretAccessKey: 'x' },
};

/** An SQS stub that answers sends with the right MD5s (the SDK checks them) and receives with `messages`. */
function sqsClient(messages: string[] = [], fail: { status: number; times: number } | null = null) {
  let failures = 0;
  return new SQSClient({
    ...config,
    maxAttempts: 2,
    requestHandler: stub((req, target) => {
      if (fail && failures < fail.times) {
        failures++;
        return {
          status: fail.status,
          headers: { 'content-type': 'application/x-amz-json-1.0' },
          body: JSON.stringify({ __type: 'com.amazonaws.sqs#InternalError', message: 'boom' }),
        };
      }
      const body = JSON.parse(
        req.body instanceof Uint8Array
          ? Buffer.from(req.body.buffer, req.body.byteOffset, req.body.byteLength).toString('utf8')
          : String(req.body ?? '{}'),
      ) as { Entries?: { Id: string; MessageBody: string }[]; MessageBody?: string };
      const json = (o: unknown): Reply => ({
        status: 200,
        headers: { 'content-type': 'application/x-amz-json-1.0' },
        body: JSON.stringify(o),
      });
      if (target.endsWith('.SendMessageBatch'))
        return json({
          Successful: body.Entries!.map((e) => ({
            Id: e.Id,
            MessageId: `m-${e.Id}`,
            MD5OfMessageBody: md5(e.MessageBody),
          })),
          Failed: [],
        });
      if (target.endsWith('.SendMessage')) return json({ MessageId: 'm', MD5OfMessageBody: md5(body.MessageBody!) });
      if (target.endsWith('.ReceiveMessage'))
        return json({
          Messages: messages.map((b, i) => ({
            MessageId: `r${i}`,
            ReceiptHandle: `h${i}`,
            Body: b,
            MD5OfBody: md5(b),
          })),
        });
      if (target.endsWith('.DeleteMessageBatch')) return json({ Successful: [{ Id: '0' }], Failed: [] });
      return json({});
    }),
  });
}

describe('pricing rules', () => {
  it('bills SQS per started 64 KB chunk, at least one request', () => {
    expect([0, 1, 65_536, 65_537, 262_144, 1_048_576].map(sqsBilledRequests)).toEqual([1, 1, 1, 2, 4, 16]);
  });

  it('sizes SQS payloads from bodies and message attributes', () => {
    const attrs = { trace: { DataType: 'String', StringValue: 'abc' } };
    expect(sqsPayload('SendMessage', { MessageBody: 'héllo', MessageAttributes: attrs }, undefined)).toEqual({
      bytes: 6 + 5 + 6 + 3,
      messages: 1,
    });
    expect(
      sqsPayload('SendMessageBatch', { Entries: [{ MessageBody: 'ab' }, { MessageBody: 'cde' }] }, undefined),
    ).toEqual({ bytes: 5, messages: 2 });
    expect(sqsPayload('ReceiveMessage', {}, { Messages: [{ Body: 'xyz' }] })).toEqual({ bytes: 3, messages: 1 });
    expect(sqsPayload('GetQueueAttributes', {}, {})).toEqual({ bytes: 0, messages: 0 });
  });

  it.each([
    ['PutObject', 'put'],
    ['CopyObject', 'put'],
    ['UploadPart', 'put'],
    ['CreateMultipartUpload', 'put'],
    ['CompleteMultipartUpload', 'put'],
    ['ListObjectsV2', 'put'],
    ['PutBucketNotificationConfiguration', 'put'],
    ['CreateBucket', 'put'],
    ['GetObject', 'get'],
    ['HeadObject', 'get'],
    ['GetBucketNotificationConfiguration', 'get'],
    ['DeleteObject', 'free'],
    ['DeleteObjects', 'free'],
    ['AbortMultipartUpload', 'free'],
  ] as const)('S3 %s is %s-class', (operation, cls) => {
    expect(s3RequestClass(operation)).toBe(cls);
  });
});

describe('AwsMeter on SQS clients', () => {
  it('bills a batch by its total payload and counts messages per queue', async () => {
    const meter = new AwsMeter();
    const sqs = meter.attach(sqsClient(), 'ingest');
    const body = 'x'.repeat(100 * 1024); // 100 KiB: 2 chunks alone
    await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: QUEUE,
        Entries: [0, 1, 2].map((i) => ({ Id: String(i), MessageBody: body })),
      }),
    );
    await sqs.send(new SendMessageCommand({ QueueUrl: `${QUEUE}-collect`, MessageBody: 'small' }));
    const batch = meter.operations({ operation: 'SendMessageBatch' })[0];
    const single = meter.operations({ operation: 'SendMessage' })[0];
    expect(batch).toMatchObject({
      label: 'ingest',
      service: 'SQS',
      operation: 'SendMessageBatch',
      resource: 'replay',
      calls: 1,
      billed: 5,
      messages: 3,
      payloadBytes: 300 * 1024,
    });
    expect(single).toMatchObject({
      operation: 'SendMessage',
      resource: 'replay-collect',
      calls: 1,
      billed: 1,
      messages: 1,
    });
    expect(meter.totals()).toMatchObject({ calls: 2, sqs: { calls: 2, billed: 6 } });
    expect(meter.totals({ label: 'other' }).calls).toBe(0);
  });

  it('bills receives by what came back, and counts empty receives', async () => {
    const meter = new AwsMeter();
    const full = meter.attach(sqsClient(['a'.repeat(70_000), 'b'.repeat(70_000)]), 'poller');
    const empty = meter.attach(sqsClient([]), 'poller');
    await full.send(new ReceiveMessageCommand({ QueueUrl: QUEUE, MaxNumberOfMessages: 10 }));
    await empty.send(new ReceiveMessageCommand({ QueueUrl: QUEUE, MaxNumberOfMessages: 10 }));
    await full.send(new DeleteMessageBatchCommand({ QueueUrl: QUEUE, Entries: [{ Id: '0', ReceiptHandle: 'h0' }] }));
    expect(meter.operations({ operation: 'ReceiveMessage' })).toMatchObject([
      { calls: 2, billed: 3 + 1, messages: 2, emptyReceives: 1 },
    ]);
    expect(meter.totals()).toMatchObject({ sqs: { calls: 3, billed: 5, emptyReceives: 1, emptyReceiveBilled: 1 } });
  });

  it('counts each attempt of a retried call, the failed one as an error', async () => {
    const meter = new AwsMeter();
    const sqs = meter.attach(sqsClient([], { status: 500, times: 1 }));
    await sqs.send(new SendMessageCommand({ QueueUrl: QUEUE, MessageBody: 'once' }));
    expect(meter.operations()).toMatchObject([
      { operation: 'SendMessage', calls: 2, errors: 1, billed: 2, messages: 1 },
    ]);
  });

  it('does not bill an attempt that never reached the service', async () => {
    const meter = new AwsMeter();
    const sqs = meter.attach(
      new SQSClient({
        ...config,
        maxAttempts: 1,
        requestHandler: stub(() => Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })),
      }),
    );
    await expect(sqs.send(new SendMessageCommand({ QueueUrl: QUEUE, MessageBody: 'x' }))).rejects.toThrow(
      /ECONNREFUSED/,
    );
    expect(meter.operations()).toMatchObject([{ calls: 0, unsent: 1, billed: 0 }]);
  });
});

describe('AwsMeter on S3 clients', () => {
  it('counts requests by price class and bucket, errors included', async () => {
    const meter = new AwsMeter();
    let puts = 0;
    const s3 = meter.attach(
      new S3Client({
        ...config,
        forcePathStyle: true,
        requestHandler: stub((req): Reply => {
          if (req.method === 'PUT')
            return ++puts === 2
              ? {
                  status: 412,
                  headers: { 'content-type': 'application/xml' },
                  body: '<Error><Code>PreconditionFailed</Code><Message>exists</Message></Error>',
                }
              : { status: 200, headers: { etag: '"e"' } };
          if (req.method === 'DELETE') return { status: 204 };
          if (req.query?.['list-type'] === '2')
            return {
              status: 200,
              headers: { 'content-type': 'application/xml' },
              body: '<ListBucketResult><IsTruncated>false</IsTruncated><KeyCount>0</KeyCount></ListBucketResult>',
            };
          return { status: 200, headers: { 'content-type': 'text/plain', 'content-length': '5' }, body: 'hello' };
        }),
      }),
      'fire',
    );
    await s3.send(new PutObjectCommand({ Bucket: 'results', Key: 'a', Body: 'x' }));
    await expect(
      s3.send(new PutObjectCommand({ Bucket: 'results', Key: 'a', Body: 'x', IfNoneMatch: '*' })),
    ).rejects.toThrow();
    const got = await s3.send(new GetObjectCommand({ Bucket: 'results', Key: 'a' }));
    expect(await got.Body!.transformToString()).toBe('hello');
    await s3.send(new ListObjectsV2Command({ Bucket: 'results' }));
    await s3.send(new DeleteObjectCommand({ Bucket: 'results', Key: 'a' }));
    expect(meter.totals()).toMatchObject({ calls: 5, errors: 1, s3: { put: 3, get: 1, free: 1 } });
    expect(meter.operations({ operation: 'PutObject' })).toMatchObject([
      { label: 'fire', resource: 'results', calls: 2, errors: 1, billed: 2, s3Class: 'put' },
    ]);
    expect(meter.operations({ operation: 'DeleteObject' })).toMatchObject([{ billed: 0, s3Class: 'free' }]);
    meter.reset();
    expect(meter.operations()).toEqual([]);
  });
});
