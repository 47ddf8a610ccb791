/**
 * S3ObjectStore's conditional writes against a stub S3 client: a 409
 * (ConditionalRequestConflict) is retried with backoff, only 412 (or 404 for If-Match) is a
 * lost race, and a 409 that does not clear is an error, never `false`.
 */
import { PutObjectCommand, S3ServiceException, type PutObjectCommandInput, type S3Client } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { CONDITIONAL_PUT_ATTEMPTS, S3ObjectStore } from '../../../lambdas/adapters/aws/s3-object-store';

const s3Error = (status: number, name: string) =>
  new S3ServiceException({ name, $fault: 'client', $metadata: { httpStatusCode: status }, message: name });
const CONFLICT = () => s3Error(409, 'ConditionalRequestConflict');
const PRECONDITION_FAILED = () => s3Error(412, 'PreconditionFailed');

/** A client whose n-th send answers `answers[n]` (an error is thrown; 'ok' succeeds), recording each PutObject input. */
function stubClient(answers: ('ok' | (() => Error))[]) {
  const inputs: PutObjectCommandInput[] = [];
  const client = {
    send(command: unknown) {
      if (!(command instanceof PutObjectCommand)) throw new Error('only PutObject is stubbed');
      inputs.push(command.input);
      const answer = answers[inputs.length - 1];
      if (answer === undefined) throw new Error(`unexpected send #${inputs.length}`);
      return answer === 'ok' ? Promise.resolve({ ETag: '"new"' }) : Promise.reject(answer());
    },
  } as unknown as S3Client;
  return { client, inputs };
}

function storeWith(answers: ('ok' | (() => Error))[]) {
  const { client, inputs } = stubClient(answers);
  const waits: number[] = [];
  const store = new S3ObjectStore(client, 'bucket', { sleep: async (ms) => void waits.push(ms) });
  return { store, inputs, waits };
}

describe('S3ObjectStore conditional writes', () => {
  it('If-None-Match: a 409 once, then success: retried after a backoff, and true', async () => {
    const { store, inputs, waits } = storeWith([CONFLICT, 'ok']);
    expect(await store.putIfAbsent('runs/r/A/_claims/0-0', '{}', 'application/json')).toBe(true);
    expect(inputs).toHaveLength(2);
    expect(
      inputs.every(
        (i) =>
          i.IfNoneMatch === '*' &&
          i.Key === 'runs/r/A/_claims/0-0' &&
          i.Body === '{}' &&
          i.ContentType === 'application/json',
      ),
    ).toBe(true);
    expect(waits).toHaveLength(1);
    expect(waits[0]).toBeGreaterThanOrEqual(0);
    expect(waits[0]).toBeLessThanOrEqual(50);
  });

  it('If-None-Match: 412 means another writer won: false at once, no retry', async () => {
    const { store, inputs, waits } = storeWith([PRECONDITION_FAILED]);
    expect(await store.putIfAbsent('k', 'x')).toBe(false);
    expect(inputs).toHaveLength(1);
    expect(waits).toEqual([]);
  });

  it('a 409 then a 412: the concurrent writer won, so false', async () => {
    const { store, inputs } = storeWith([CONFLICT, PRECONDITION_FAILED]);
    expect(await store.putIfAbsent('k', 'x')).toBe(false);
    expect(inputs).toHaveLength(2);
  });

  it('If-Match: a 409 is retried with the same ETag; 412 and 404 are lost races', async () => {
    const retried = storeWith([CONFLICT, 'ok']);
    expect(await retried.store.putIfMatch('hours/h/A/_state.json', 'v2', '"etag-1"')).toBe(true);
    expect(retried.inputs.map((i) => [i.IfMatch, i.IfNoneMatch])).toEqual([
      ['"etag-1"', undefined],
      ['"etag-1"', undefined],
    ]);
    expect(await storeWith([PRECONDITION_FAILED]).store.putIfMatch('k', 'v', '"e"')).toBe(false);
    expect(await storeWith([() => s3Error(404, 'NoSuchKey')]).store.putIfMatch('k', 'v', '"e"')).toBe(false);
  });

  it(
    `a 409 that does not clear: ${CONDITIONAL_PUT_ATTEMPTS} tries with full-jitter backoff, then an error ` +
      `(retryable), never false`,
    async () => {
      const { store, inputs, waits } = storeWith(Array.from({ length: CONDITIONAL_PUT_ATTEMPTS }, () => CONFLICT));
      await expect(store.putIfAbsent('k', 'x')).rejects.toThrow(
        /s3:\/\/bucket\/k: conditional PutObject answered 409 \(ConditionalRequestConflict\) 5 times/,
      );
      expect(inputs).toHaveLength(CONDITIONAL_PUT_ATTEMPTS);
      expect(waits).toHaveLength(CONDITIONAL_PUT_ATTEMPTS - 1);
      // Each wait is drawn below its cap: 50, 100, 200, 400 ms.
      waits.forEach((ms, i) => expect(ms).toBeLessThanOrEqual(50 * 2 ** i));
    },
  );

  it('other errors are not conflicts: thrown at once (403, 500, and 404 on a create)', async () => {
    for (const [status, name] of [
      [403, 'AccessDenied'],
      [500, 'InternalError'],
      [404, 'NoSuchBucket'],
    ] as const) {
      const { store, inputs } = storeWith([() => s3Error(status, name)]);
      await expect(store.putIfAbsent('k', 'x')).rejects.toMatchObject({ name });
      expect(inputs).toHaveLength(1);
    }
  });
});
