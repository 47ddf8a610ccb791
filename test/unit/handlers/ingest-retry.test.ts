/**
 * The ingest handler's partial-batch decision rests on the error hierarchy (core/errors.ts
 * isFinal): a file overwritten since its event (S3's 412 to If-Match) and any other final
 * error are acknowledged and logged; an error outside the hierarchy (S3 throttling, a bug)
 * fails that record alone, for a retry.
 */
import { S3ServiceException, type S3Client } from '@aws-sdk/client-s3';
import type { Context, SQSEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../../lambdas/core/errors';
import { makeIngestHandler } from '../../../lambdas/handlers/ingest';
import type { Deps } from '../../../lambdas/runtime/deps';

const context = { functionName: 'ingest', getRemainingTimeInMillis: () => 300_000 } as unknown as Context;
const s3Error = (name: string, status: number) =>
  new S3ServiceException({ name, $fault: 'client', $metadata: { httpStatusCode: status }, message: name });

/** One SQS record per key, each an S3 notification of that key. */
const event = (keys: string[]): SQSEvent => ({
  Records: keys.map((key) => ({
    messageId: key,
    receiptHandle: key,
    body: JSON.stringify({
      Records: [{ eventName: 'ObjectCreated:Put', s3: { bucket: { name: 'captures' }, object: { key, eTag: 'e1' } } }],
    }),
    attributes: {} as never,
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:us-east-1:123456789012:ingest',
    awsRegion: 'us-east-1',
  })),
});

/** A handler whose S3 GetObject of each key throws what `failures` says. */
function handlerWith(failures: Record<string, unknown>) {
  const logs: { level: string; message: string; fields: Record<string, unknown> }[] = [];
  const log = (level: string) => (message: string, fields: Record<string, unknown>) =>
    void logs.push({ level, message, fields });
  const s3 = {
    send: async (command: { input: { Key: string } }) => {
      throw failures[command.input.Key];
    },
  } as unknown as S3Client;
  const deps = {
    config: { targets: [], mode: 'file' },
    s3,
    logger: { info: log('info'), warn: log('warn'), error: log('error') },
  } as unknown as Deps;
  return { handler: makeIngestHandler(() => deps), logs };
}

describe('the ingest handler: retry or acknowledge', () => {
  it('acknowledges a superseded file and another final error; fails the others alone for a retry', async () => {
    const { handler, logs } = handlerWith({
      'a.jsonl': s3Error('PreconditionFailed', 412),
      'b.jsonl': new ConfigurationError('a setting the file cannot be run with'),
      'c.jsonl': s3Error('SlowDown', 503),
      'd.jsonl': new Error('a bug'),
    });
    const result = await handler(event(['a.jsonl', 'b.jsonl', 'c.jsonl', 'd.jsonl']), context);
    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: 'c.jsonl' }, { itemIdentifier: 'd.jsonl' }] });
    expect(logs.map((l) => [l.level, l.message, l.fields.key])).toEqual([
      ['warn', 'capture file superseded, ignored', 'a.jsonl'],
      ['error', 'capture file not ingested', 'b.jsonl'],
    ]);
    expect(logs[1]!.fields).toMatchObject({
      error: 'ConfigurationError',
      reason: 'a setting the file cannot be run with',
    });
  });
});
