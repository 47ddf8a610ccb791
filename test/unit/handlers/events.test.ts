import { describe, expect, it } from 'vitest';
import { decodeS3Key, parseIngestMessage } from '../../../lambdas/handlers/s3-events';
import { ENV, parseRuntimeConfig } from '../../../lambdas/runtime/config';

const notification = (records: { eventName: string; key: string; eTag?: string }[]) =>
  JSON.stringify({
    Records: records.map((r) => ({
      eventVersion: '2.1',
      eventSource: 'aws:s3',
      eventName: r.eventName,
      s3: {
        bucket: { name: 'caps', arn: 'arn:aws:s3:::caps' },
        object: { key: r.key, size: 10, ...(r.eTag ? { eTag: r.eTag } : {}) },
      },
    })),
  });

describe('ingest messages', () => {
  it('reads every record of an S3 notification, decoding keys (+ is a space, %2B a plus)', () => {
    const parsed = parseIngestMessage(
      notification([
        { eventName: 'ObjectCreated:Put', key: 'datacapture/ep/AllTraffic/2026/04/29/00/a+b%2Bc.jsonl', eTag: 'e1' },
        { eventName: 'ObjectCreated:CompleteMultipartUpload', key: 'datacapture/ep/x%3Dy.jsonl' },
        { eventName: 'ObjectRemoved:Delete', key: 'datacapture/old.jsonl' },
      ]),
    );
    expect(parsed).toEqual({
      kind: 'objects',
      objects: [
        { bucket: 'caps', key: 'datacapture/ep/AllTraffic/2026/04/29/00/a b+c.jsonl', etag: 'e1' },
        { bucket: 'caps', key: 'datacapture/ep/x=y.jsonl', etag: null },
      ],
      ignored: 1,
    });
  });

  it('recognises the S3 test event', () => {
    expect(
      parseIngestMessage(
        JSON.stringify({ Service: 'Amazon S3', Event: 's3:TestEvent', Time: '2026-04-29T00:00:00Z', Bucket: 'caps' }),
      ),
    ).toEqual({ kind: 'test' });
  });

  it('takes EventBridge Object Created events (keys not encoded there)', () => {
    const event = {
      'detail-type': 'Object Created',
      source: 'aws.s3',
      detail: { bucket: { name: 'caps' }, object: { key: 'datacapture/a b.jsonl', etag: 'e2' } },
    };
    expect(parseIngestMessage(JSON.stringify(event))).toEqual({
      kind: 'objects',
      objects: [{ bucket: 'caps', key: 'datacapture/a b.jsonl', etag: 'e2' }],
      ignored: 0,
    });
  });

  it.each([
    ['not json', 'message body is not JSON'],
    ['{"hello": 1}', 'neither'],
  ])('reports what it cannot read: %s', (body, reason) => {
    const parsed = parseIngestMessage(body);
    expect(parsed.kind).toBe('invalid');
    expect(parsed.kind === 'invalid' && parsed.reason).toContain(reason);
  });

  it('decodes keys as S3 encodes them', () => {
    expect(decodeS3Key('a%2Fb+c%2Bd.jsonl')).toBe('a/b c+d.jsonl');
  });
});

describe('runtime configuration', () => {
  const env = {
    [ENV.resultsBucket]: 'results',
    [ENV.replayQueueUrl]: 'https://sqs.us-east-1.amazonaws.com/1/replay',
    [ENV.collectQueueUrl]: 'https://sqs.us-east-1.amazonaws.com/1/collect',
    [ENV.targets]: '[{"name":"A","url":"https://a.example.com"}]',
  };

  it('applies defaults', () => {
    expect(parseRuntimeConfig(env)).toMatchObject({
      mode: 'file',
      leadMs: 20_000,
      slotMs: 1000,
      forceStreaming: false,
      targets: [{ name: 'A', url: 'https://a.example.com', path: '/v1/chat/completions' }],
      latePolicy: { toleranceMs: 5000, action: 'fire' },
    });
  });

  it('reports every problem at once, by variable name', () => {
    let message = '';
    try {
      parseRuntimeConfig({
        ...env,
        [ENV.targets]: 'nope',
        [ENV.mode]: 'sometimes',
        [ENV.leadMs]: '-1',
        [ENV.resultsBucket]: undefined,
      });
    } catch (error) {
      message = (error as Error).message;
    }
    for (const name of [ENV.targets, ENV.mode, ENV.leadMs, ENV.resultsBucket]) expect(message).toContain(name);
  });

  it('schedules: none by default; JSON parsed and checked like the targets', () => {
    expect(parseRuntimeConfig(env).schedules).toEqual([]);
    const nightly = { name: 'nightly', expression: 'cron(0 2 * * ? *)', window: { lastHours: 1 }, targets: ['A', 'B'] };
    expect(parseRuntimeConfig({ ...env, [ENV.schedules]: JSON.stringify([nightly]) }).schedules).toEqual([
      { ...nightly, timezone: 'UTC', timeScale: 1, dispatch: 'parallel' },
    ]);
    expect(() => parseRuntimeConfig({ ...env, [ENV.schedules]: '[{' })).toThrow(
      new RegExp(`${ENV.schedules}: not JSON`),
    );
    expect(() =>
      parseRuntimeConfig({ ...env, [ENV.schedules]: JSON.stringify([{ ...nightly, targets: ['A'] }]) }),
    ).toThrow(/two targets or more/);
  });
});
