/**
 * Evidence that the emulated AWS (moto) and the local event source behave like AWS where
 * the pipeline relies on them: S3 -> SQS notifications (filters, key encoding, the test
 * event), S3 conditional creates (the shard claim), SQS delays, Lambda's partial batch
 * failures and whole-batch retries, its batching window, and redrive to the dead-letter queue.
 */
import { GetObjectCommand, ListBucketsCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import {
  ListQueuesCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import type { S3Event, SQSRecord } from 'aws-lambda';
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { S3ObjectStore } from '../../lambdas/adapters/aws/s3-object-store';
import { SqsQueue } from '../../lambdas/adapters/aws/sqs-queue';
import {
  createBucket,
  createQueue,
  createQueueWithDlq,
  drainQueue,
  notifyQueueOnObjectCreated,
} from '../support/aws-fixtures';
import { awsClientConfig, describeWithMoto, startMoto, type Moto } from '../support/moto';
import { startSqsEventSource } from '../support/sqs-event-source';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** How AWS says to read a notification's key: form-encoded, so '+' is a space. */
const decodeKey = (raw: string) => decodeURIComponent(raw.replace(/\+/g, ' '));

async function until<T>(probe: () => Promise<T | undefined>, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(200);
  }
}

describeWithMoto('emulated AWS behaves as the pipeline needs', () => {
  let moto: Moto;
  let s3: S3Client;
  let sqs: SQSClient;

  beforeAll(async () => {
    moto = await startMoto();
    s3 = new S3Client(awsClientConfig(moto.endpoint));
    sqs = new SQSClient(awsClientConfig(moto.endpoint));
  });
  afterAll(async () => {
    s3?.destroy();
    sqs?.destroy();
    await moto?.stop();
  });

  it('S3 -> SQS: a test event on configuration, then one message per matching .jsonl put, key URL-encoded', async () => {
    const bucket = await createBucket(s3, 'capture-notify');
    const queue = await createQueue(sqs, 'notify');
    await notifyQueueOnObjectCreated(s3, { bucket, queueArn: queue.arn, prefix: 'datacapture/' });

    const [testEvent, ...more] = await drainQueue(sqs, queue.url, { count: 1, timeoutMs: 5000 });
    expect(more).toHaveLength(0);
    expect(JSON.parse(testEvent!.Body!)).toMatchObject({ Service: 'Amazon S3', Event: 's3:TestEvent', Bucket: bucket });

    const key = 'datacapture/ep/AllTraffic/2026/04/29/00/capture file+1.jsonl';
    // Outside the filter: wrong suffix under the prefix, right suffix outside it, a .jsonl.gz.
    for (const k of ['datacapture/ep/notes.txt', 'elsewhere/x.jsonl', 'datacapture/ep/x.jsonl.gz']) {
      await s3.send(new PutObjectCommand({ Bucket: bucket, Key: k, Body: 'ignored' }));
    }
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: '{"a":1}\n' }));

    // Delivery is synchronous in moto; the extra empty long poll shows nothing else follows.
    const messages = await drainQueue(sqs, queue.url, { waitTimeSeconds: 1, timeoutMs: 8000 });
    expect(messages).toHaveLength(1);
    const event = JSON.parse(messages[0]!.Body!) as S3Event;
    expect(event.Records).toHaveLength(1);
    const record = event.Records[0]!;
    expect(record).toMatchObject({ eventSource: 'aws:s3', awsRegion: 'us-east-1', eventName: 'ObjectCreated:Put' });
    expect(record.s3.bucket.name).toBe(bucket);
    expect(record.s3.object.size).toBe(8);
    const raw = record.s3.object.key;
    expect(raw).not.toContain(' ');
    expect(raw).toContain('capture+file%2B1.jsonl'); // space -> '+', '+' -> '%2B', as S3 sends it
    expect(decodeKey(raw)).toBe(key);
  });

  it('S3 conditional create (If-None-Match: *): the first put wins, the second gets 412 PreconditionFailed', async () => {
    const bucket = await createBucket(s3, 'claims-raw');
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'claim', Body: 'worker-1', IfNoneMatch: '*' }));
    const second = await s3
      .send(new PutObjectCommand({ Bucket: bucket, Key: 'claim', Body: 'worker-2', IfNoneMatch: '*' }))
      .then(
        () => undefined,
        (error: unknown) => error as { name: string; $metadata?: { httpStatusCode?: number } },
      );
    expect(second?.name).toBe('PreconditionFailed');
    expect(second?.$metadata?.httpStatusCode).toBe(412);
    const body = await (
      await s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'claim' }))
    ).Body!.transformToString();
    expect(body).toBe('worker-1');
  });

  it('the S3 adapter claims through that conditional create', async () => {
    await createBucket(s3, 'claims-bucket');
    const store = new S3ObjectStore(s3, 'claims-bucket');
    expect(await store.putIfAbsent('runs/r/A/_claims/0-0', 'worker-1')).toBe(true);
    expect(await store.putIfAbsent('runs/r/A/_claims/0-0', 'worker-2')).toBe(false);
    expect(Buffer.from((await store.get('runs/r/A/_claims/0-0'))!).toString()).toBe('worker-1');
    expect(await store.get('runs/r/A/_claims/missing')).toBeNull();
    expect(await store.list('runs/r/')).toEqual(['runs/r/A/_claims/0-0']);
  });

  it('SQS holds a message with DelaySeconds back for its delay', async () => {
    const { url } = await createQueue(sqs, 'delayed');
    const sentAt = Date.now();
    await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'later', DelaySeconds: 2 }));
    const early = await sqs.send(new ReceiveMessageCommand({ QueueUrl: url, WaitTimeSeconds: 0 }));
    expect(early.Messages ?? []).toHaveLength(0);
    const late = await drainQueue(sqs, url, { count: 1, timeoutMs: 10_000 });
    const waited = Date.now() - sentAt;
    expect(late.map((m) => m.Body)).toEqual(['later']);
    // Loose bounds: at least the delay (moto's clock starts after our sentAt), well under 5x it.
    expect(waited).toBeGreaterThanOrEqual(1900);
    expect(waited).toBeLessThan(10_000);
  });

  it('the SQS adapter passes per-message delays through', async () => {
    const { url } = await createQueue(sqs, 'delayed-adapter');
    await new SqsQueue(sqs, url).sendBatch([{ id: 'a', body: 'later', delaySeconds: 2 }]);
    const early = await sqs.send(new ReceiveMessageCommand({ QueueUrl: url, WaitTimeSeconds: 0 }));
    expect(early.Messages ?? []).toHaveLength(0);
    expect((await drainQueue(sqs, url, { count: 1, timeoutMs: 10_000 })).map((m) => m.Body)).toEqual(['later']);
  });

  it('event source: Lambda-shaped records; a reported failure comes back alone, then moves to the DLQ after maxReceiveCount', async () => {
    const q = await createQueueWithDlq(sqs, 'work', { maxReceiveCount: 2 });
    const seen: SQSRecord[] = [];
    const source = await startSqsEventSource({
      client: sqs,
      queueUrl: q.url,
      batchSize: 10,
      visibilityTimeoutSeconds: 1,
      handler: async (event) => {
        seen.push(...event.Records);
        return {
          batchItemFailures: event.Records.filter((r) => r.body === 'poison').map((r) => ({
            itemIdentifier: r.messageId,
          })),
        };
      },
    });
    try {
      await sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: q.url,
          Entries: ['good-1', 'poison', 'good-2'].map((body, i) => ({
            Id: String(i),
            MessageBody: body,
            MessageAttributes: {
              kind: { DataType: 'String', StringValue: body },
              raw: { DataType: 'Binary', BinaryValue: Uint8Array.of(0, 255) },
            },
          })),
        }),
      );
      const dead = await until(
        async () => {
          const got = await drainQueue(sqs, q.dlqUrl, { waitTimeSeconds: 0 });
          return got.length > 0 ? got.map((m) => m.Body) : undefined;
        },
        20_000,
        'the poison message in the DLQ',
      );
      await source.idle(500);
      expect(dead).toEqual(['poison']);
    } finally {
      await source.stop();
    }

    const bodies = seen.map((r) => r.body);
    expect(bodies.filter((b) => b === 'good-1')).toHaveLength(1);
    expect(bodies.filter((b) => b === 'good-2')).toHaveLength(1);
    const poison = seen.filter((r) => r.body === 'poison');
    expect(poison.map((r) => r.attributes.ApproximateReceiveCount)).toEqual(['1', '2']);
    expect(source.stats).toMatchObject({
      records: 4,
      succeededRecords: 2,
      failedRecords: 2,
      handlerErrors: 0,
      invalidResponses: 0,
      deleteErrors: 0,
    });

    const first = seen[0]!;
    expect(first).toMatchObject({ eventSource: 'aws:sqs', eventSourceARN: q.arn, awsRegion: 'us-east-1' });
    expect(first.md5OfBody).toBe(createHash('md5').update(first.body).digest('hex'));
    expect(Number(first.attributes.SentTimestamp)).toBeGreaterThan(1_700_000_000_000);
    expect(first.messageAttributes.kind).toEqual({
      dataType: 'String',
      stringValue: first.body,
      stringListValues: [],
      binaryListValues: [],
    });
    expect(first.messageAttributes.raw).toEqual({
      dataType: 'Binary',
      binaryValue: 'AP8=',
      stringListValues: [],
      binaryListValues: [],
    });
  });

  it('event source: a handler that throws leaves the whole batch for redelivery', async () => {
    const { url } = await createQueue(sqs, 'throws');
    await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: url,
        Entries: ['a', 'b'].map((body) => ({ Id: body, MessageBody: body })),
      }),
    );
    const calls: string[][] = [];
    const source = await startSqsEventSource({
      client: sqs,
      queueUrl: url,
      batchSize: 10,
      visibilityTimeoutSeconds: 1,
      handler: async (event) => {
        calls.push(event.Records.map((r) => r.body).sort());
        if (calls.length === 1) throw new Error('first invocation fails');
      },
    });
    try {
      await until(async () => (source.stats.succeededRecords >= 2 ? true : undefined), 15_000, 'the retried batch');
      await source.idle(500);
    } finally {
      await source.stop();
    }
    expect(calls.flat().sort()).toEqual(['a', 'a', 'b', 'b']);
    expect(source.stats).toMatchObject({ handlerErrors: 1, failedRecords: 2, succeededRecords: 2 });
    expect(String(source.stats.errors[0])).toContain('first invocation fails');
    expect(await drainQueue(sqs, url, { waitTimeSeconds: 0 })).toHaveLength(0);
  });

  it('event source: an itemIdentifier not in the batch fails the whole batch, as Lambda does', async () => {
    const { url } = await createQueue(sqs, 'bad-response');
    await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'x' }));
    let calls = 0;
    const source = await startSqsEventSource({
      client: sqs,
      queueUrl: url,
      batchSize: 1,
      visibilityTimeoutSeconds: 1,
      handler: async () =>
        ++calls === 1 ? { batchItemFailures: [{ itemIdentifier: 'not-a-message-id' }] } : undefined,
    });
    try {
      await until(async () => (source.stats.succeededRecords >= 1 ? true : undefined), 15_000, 'the retried message');
    } finally {
      await source.stop();
    }
    expect(calls).toBe(2);
    expect(source.stats).toMatchObject({ invalidResponses: 1, failedRecords: 1, succeededRecords: 1 });
  });

  it('event source: rejects a batch size Lambda would not accept', async () => {
    const { url } = await createQueue(sqs, 'sizes');
    for (const batchSize of [0, 11, 2.5]) {
      await expect(
        startSqsEventSource({ client: sqs, queueUrl: url, batchSize, handler: async () => undefined }),
      ).rejects.toThrow(/batchSize must be an integer from 1 to 10/);
    }
  });

  /** An event source with a batching window on a new queue; each invocation's bodies and when it began. */
  async function windowed(name: string, o: { batchSize: number; batchingWindowMs: number }) {
    const { url } = await createQueue(sqs, name);
    const calls: { at: number; bodies: string[] }[] = [];
    const source = await startSqsEventSource({
      client: sqs,
      queueUrl: url,
      ...o,
      handler: async (event) => {
        calls.push({ at: Date.now(), bodies: event.Records.map((r) => r.body).sort() });
      },
    });
    const send = async (...bodies: string[]) => {
      const at = Date.now();
      await sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: url,
          Entries: bodies.map((body) => ({ Id: body, MessageBody: body })),
        }),
      );
      return at;
    };
    const handled = (n: number) =>
      until(async () => (source.stats.succeededRecords >= n ? true : undefined), 30_000, `${n} records handled`);
    return { source, calls, send, handled };
  }

  it('event source with a batching window: messages arriving within the window are one invocation, after the window', async () => {
    const { source, calls, send, handled } = await windowed('window-gathers', {
      batchSize: 10,
      batchingWindowMs: 3000,
    });
    try {
      const first = await send('a');
      await sleep(400);
      await send('b');
      await sleep(400);
      await send('c');
      await handled(3);
      await source.idle(500);
      expect(calls.map((c) => c.bodies)).toEqual([['a', 'b', 'c']]);
      // The batch is not full: the window, opened by the receive that returned 'a', is waited out.
      expect(calls[0]!.at - first).toBeGreaterThanOrEqual(3000);
    } finally {
      await source.stop();
    }
  });

  it('event source with a batching window: messages further apart than the window are separate invocations', async () => {
    const { source, calls, send, handled } = await windowed('window-apart', { batchSize: 10, batchingWindowMs: 1000 });
    try {
      await send('x');
      await sleep(2500);
      await send('y');
      await handled(2);
      await source.idle(500);
      expect(calls.map((c) => c.bodies)).toEqual([['x'], ['y']]);
    } finally {
      await source.stop();
    }
  });

  it('event source with a batching window: a full batch is invoked at once, without waiting the window out', async () => {
    const { source, calls, send, handled } = await windowed('window-full', { batchSize: 3, batchingWindowMs: 60_000 });
    try {
      const whole = await send('a', 'b', 'c');
      await handled(3);
      // Filled by a second receive, the batch goes when its last record arrives.
      const first = await send('d', 'e');
      await sleep(300);
      await send('f');
      await handled(6);
      expect(calls.map((c) => c.bodies)).toEqual([
        ['a', 'b', 'c'],
        ['d', 'e', 'f'],
      ]);
      expect(calls[0]!.at - whole).toBeLessThan(10_000);
      expect(calls[1]!.at - first).toBeLessThan(10_000);
    } finally {
      await source.stop();
    }
  });

  it('event source: rejects a batching window Lambda would not accept', async () => {
    const { url } = await createQueue(sqs, 'windows');
    for (const batchingWindowMs of [-1, 300_001, Number.NaN]) {
      await expect(
        startSqsEventSource({ client: sqs, queueUrl: url, batchingWindowMs, handler: async () => undefined }),
      ).rejects.toThrow(/batchingWindowMs must be from 0 to 300000/);
    }
  });

  // Last: it empties moto for everything above.
  it('reset() drops every bucket and queue', async () => {
    await createBucket(s3, 'before-reset');
    await createQueue(sqs, 'before-reset');
    expect((await s3.send(new ListBucketsCommand({}))).Buckets?.map((b) => b.Name)).toContain('before-reset');
    await moto.reset();
    expect((await s3.send(new ListBucketsCommand({}))).Buckets ?? []).toHaveLength(0);
    expect((await sqs.send(new ListQueuesCommand({}))).QueueUrls ?? []).toHaveLength(0);
  });
});
