/**
 * The harness's decisions that do not need moto: when an emulated-AWS suite runs, skips or
 * fails, and how a handler's batch response maps to failed messages under Lambda's rules.
 */
import type { SQSBatchResponse, SQSRecord } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { motoGate, type MotoGate } from '../../support/moto';
import { failedMessageIds, toSqsRecord } from '../../support/sqs-event-source';

describe('motoGate', () => {
  it.each<[boolean, string | undefined, MotoGate]>([
    [true, undefined, 'run'],
    [true, 'true', 'run'],
    [false, undefined, 'skip'],
    [false, 'false', 'skip'],
    [false, '1', 'skip'], // only the exact value CI sets here makes it mandatory
    [false, 'true', 'fail'],
  ])('available=%s CI=%s -> %s', (available, ci, expected) => {
    expect(motoGate(available, { CI: ci })).toBe(expected);
  });
});

describe('failedMessageIds (ReportBatchItemFailures)', () => {
  const records = ['m1', 'm2', 'm3'].map((id) =>
    toSqsRecord({ MessageId: id, ReceiptHandle: `rh-${id}`, Body: id }, 'arn:aws:sqs:us-east-1:123456789012:q'),
  );
  const sorted = (s: Set<string>) => [...s].sort();

  it.each<[string, SQSBatchResponse | void, string[], boolean]>([
    ['no response: all succeeded', undefined, [], false],
    ['empty list: all succeeded', { batchItemFailures: [] }, [], false],
    ['one named failure', { batchItemFailures: [{ itemIdentifier: 'm2' }] }, ['m2'], false],
    [
      'two named failures',
      { batchItemFailures: [{ itemIdentifier: 'm3' }, { itemIdentifier: 'm1' }] },
      ['m1', 'm3'],
      false,
    ],
    ['unknown id fails the whole batch', { batchItemFailures: [{ itemIdentifier: 'm9' }] }, ['m1', 'm2', 'm3'], true],
    ['empty id fails the whole batch', { batchItemFailures: [{ itemIdentifier: '' }] }, ['m1', 'm2', 'm3'], true],
  ])('%s', (_name, response, failed, invalid) => {
    const verdict = failedMessageIds(records, response);
    expect(sorted(verdict.failed)).toEqual(failed);
    expect(verdict.invalid).toBe(invalid);
  });
});

describe('toSqsRecord', () => {
  it('maps an SDK message to the record Lambda delivers', () => {
    const record: SQSRecord = toSqsRecord(
      {
        MessageId: 'id-1',
        ReceiptHandle: 'rh',
        Body: 'hello',
        MD5OfBody: '5d41402abc4b2a76b9719d911017c592',
        Attributes: {
          ApproximateReceiveCount: '3',
          SentTimestamp: '1767225600000',
          SenderId: 'AIDA',
          ApproximateFirstReceiveTimestamp: '1767225601000',
        },
        MessageAttributes: {
          n: { DataType: 'Number', StringValue: '42' },
          b: { DataType: 'Binary', BinaryValue: Uint8Array.of(104, 105) },
        },
      },
      'arn:aws:sqs:us-east-1:123456789012:q',
    );
    expect(record).toEqual({
      messageId: 'id-1',
      receiptHandle: 'rh',
      body: 'hello',
      attributes: {
        ApproximateReceiveCount: '3',
        SentTimestamp: '1767225600000',
        SenderId: 'AIDA',
        ApproximateFirstReceiveTimestamp: '1767225601000',
      },
      messageAttributes: {
        n: { dataType: 'Number', stringValue: '42', stringListValues: [], binaryListValues: [] },
        b: { dataType: 'Binary', binaryValue: 'aGk=', stringListValues: [], binaryListValues: [] },
      },
      md5OfBody: '5d41402abc4b2a76b9719d911017c592',
      eventSource: 'aws:sqs',
      eventSourceARN: 'arn:aws:sqs:us-east-1:123456789012:q',
      awsRegion: 'us-east-1',
    });
  });
});
