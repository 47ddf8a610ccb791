/**
 * The emulated S3 is as strict as S3 on conditional writes: of writers that all read one
 * ETag (or all create a key), exactly one succeeds and the others get 412
 * (https://docs.aws.amazon.com/AmazonS3/latest/userguide/conditional-writes.html). moto 5
 * alone can let two succeed (it checks, then writes, on separate threads), which loses an
 * update the hour roll-up's merge relies on S3 to refuse. Python's thread switch interval
 * is shortened so that the threads interleave often enough to show it: plain moto_server
 * lets two writers through in a few rounds in a hundred.
 */
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { S3ObjectStore } from '../../lambdas/adapters/aws/s3-object-store';
import { createBucket } from '../support/aws-fixtures';
import { awsClientConfig, describeWithMoto, startMoto, strictMotoCommand, type Moto } from '../support/moto';

const ROUNDS = 30;
const WRITERS = 8;

describeWithMoto('moto as strict as S3 on conditional writes', () => {
  let moto: Moto;
  let s3: S3Client;
  let store: S3ObjectStore;

  beforeAll(async () => {
    if (strictMotoCommand() === null && process.env.CI === 'true')
      throw new Error(
        'no Python on the PATH imports moto: the tests would run on a moto whose conditional writes are not atomic',
      );
    moto = await startMoto({ env: { CR_MOTO_SWITCH_INTERVAL: '0.000001' } });
    s3 = new S3Client({ ...awsClientConfig(moto.endpoint), maxAttempts: 1 });
    await createBucket(s3, 'strict-bucket');
    store = new S3ObjectStore(s3, 'strict-bucket', { attempts: 1 });
  }, 60_000);

  afterAll(async () => {
    s3?.destroy();
    await moto?.stop();
  });

  it(`of ${WRITERS} writers with one ETag, one succeeds, in each of ${ROUNDS} rounds; likewise of ${WRITERS} creators`, async () => {
    const winners: number[] = [];
    const creators: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const { ETag } = await s3.send(
        new PutObjectCommand({ Bucket: 'strict-bucket', Key: 'cas', Body: `base ${round}` }),
      );
      const writes = await Promise.all(
        Array.from({ length: WRITERS }, (_, i) => store.putIfMatch('cas', `round ${round} writer ${i}`, ETag!)),
      );
      winners.push(writes.filter(Boolean).length);
      const creates = await Promise.all(
        Array.from({ length: WRITERS }, (_, i) => store.putIfAbsent(`new-${round}`, `creator ${i}`)),
      );
      creators.push(creates.filter(Boolean).length);
    }
    expect(winners.filter((n) => n !== 1)).toEqual([]);
    expect(creators.filter((n) => n !== 1)).toEqual([]);
  }, 120_000);
});
