/**
 * A local stand-in for Lambda's SQS event source mapping, so the real handlers run against
 * real (emulated) queues: receives batches, builds a real SQSEvent, invokes the handler with
 * up to `maxConcurrency` batches in flight, deletes what succeeded, and leaves failed
 * records (ReportBatchItemFailures) or a whole failed batch for redelivery after the
 * visibility timeout. The queue's redrive policy moves poison messages to the DLQ.
 */
import { DeleteMessageBatchCommand, GetQueueAttributesCommand, ReceiveMessageCommand, type Message, type SQSClient } from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';

export interface EventSourceOptions {
  client: SQSClient;
  queueUrl: string;
  handler: (event: SQSEvent, context: Context) => Promise<SQSBatchResponse | void>;
  batchSize?: number;
  visibilityTimeoutSeconds?: number;
  maxConcurrency?: number;
  pollIntervalMs?: number;
}

export interface EventSource {
  stop(): Promise<void>;
  /** Resolves once nothing is running and the queue has come back empty for `quietMs`. */
  idle(quietMs?: number): Promise<void>;
  stats: { batches: number; records: number; failedRecords: number; handlerErrors: number };
}

function context(name: string, n: number): Context {
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: name,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:us-east-1:123456789012:function:${name}`,
    memoryLimitInMB: '1024',
    awsRequestId: `${name}-${n}`,
    logGroupName: `/aws/lambda/${name}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => 900_000,
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

export async function startSqsEventSource(o: EventSourceOptions): Promise<EventSource> {
  const arn = (await o.client.send(new GetQueueAttributesCommand({ QueueUrl: o.queueUrl, AttributeNames: ['QueueArn'] }))).Attributes?.QueueArn ?? '';
  const stats = { batches: 0, records: 0, failedRecords: 0, handlerErrors: 0 };
  const inFlight = new Set<Promise<void>>();
  let running = true;
  let lastActivity = Date.now();
  const maxConcurrency = o.maxConcurrency ?? 5;

  const runBatch = async (messages: Message[]) => {
    const records: SQSRecord[] = messages.map((m) => ({
      messageId: m.MessageId ?? '',
      receiptHandle: m.ReceiptHandle ?? '',
      body: m.Body ?? '',
      attributes: {
        ApproximateReceiveCount: m.Attributes?.ApproximateReceiveCount ?? '1',
        SentTimestamp: m.Attributes?.SentTimestamp ?? String(Date.now()),
        SenderId: m.Attributes?.SenderId ?? 'local',
        ApproximateFirstReceiveTimestamp: m.Attributes?.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
      },
      messageAttributes: {},
      md5OfBody: m.MD5OfBody ?? '',
      eventSource: 'aws:sqs',
      eventSourceARN: arn,
      awsRegion: 'us-east-1',
    }));
    stats.batches++;
    stats.records += records.length;
    let failed = new Set<string>();
    try {
      const response = await o.handler({ Records: records }, context('local-fn', stats.batches));
      failed = new Set((response?.batchItemFailures ?? []).map((f) => f.itemIdentifier));
    } catch {
      stats.handlerErrors++;
      failed = new Set(records.map((r) => r.messageId));
    }
    stats.failedRecords += failed.size;
    const done = records.filter((r) => !failed.has(r.messageId));
    if (done.length > 0) {
      await o.client.send(new DeleteMessageBatchCommand({ QueueUrl: o.queueUrl, Entries: done.map((r, i) => ({ Id: String(i), ReceiptHandle: r.receiptHandle })) }));
    }
    lastActivity = Date.now();
  };

  const loop = (async () => {
    while (running) {
      if (inFlight.size >= maxConcurrency) {
        await Promise.race(inFlight);
        continue;
      }
      const out = await o.client.send(
        new ReceiveMessageCommand({
          QueueUrl: o.queueUrl,
          MaxNumberOfMessages: o.batchSize ?? 10,
          VisibilityTimeout: o.visibilityTimeoutSeconds ?? 30,
          WaitTimeSeconds: 0,
          MessageSystemAttributeNames: ['All'],
        }),
      );
      const messages = out.Messages ?? [];
      if (messages.length === 0) {
        await new Promise((r) => setTimeout(r, o.pollIntervalMs ?? 100));
        continue;
      }
      lastActivity = Date.now();
      const p: Promise<void> = runBatch(messages).finally(() => inFlight.delete(p));
      inFlight.add(p);
    }
  })();

  return {
    stats,
    async stop() {
      running = false;
      await loop;
      await Promise.all(inFlight);
    },
    async idle(quietMs = 1500) {
      while (inFlight.size > 0 || Date.now() - lastActivity < quietMs) await new Promise((r) => setTimeout(r, 100));
    },
  };
}
