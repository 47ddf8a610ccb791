/**
 * The Region `capture-replay link` signs in. For an object in a bucket of another Region than
 * the one the command runs with (AWS_REGION, the profile's, or --region): the bucket's own,
 * which S3 requires of a presigned request (a link signed for another Region is refused,
 * whatever the signer may do). With AWS_DEFAULT_REGION alone, as the AWS CLI and the CDK CLI
 * read it: that Region. Against moto_server, the SDK pointed at it with AWS_ENDPOINT_URL as the
 * CLI runs.
 */
import { CreateBucketCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { linkCommand } from '../../lambdas/local/link';
import { describeWithMoto, startMoto, type Moto } from '../support/moto';

const BUCKET = 'results-west';
const KEY = 'runs/file-1/report.html';

function sink(): { stream: PassThrough; text: () => string } {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  return { stream, text: () => text };
}

/** The Region a presigned link is signed for (its X-Amz-Credential's scope). */
const signedRegion = (link: string) => new URL(link).searchParams.get('X-Amz-Credential')?.split('/')[2];

describeWithMoto('link to an object in another Region', () => {
  let moto: Moto;
  const saved = { ...process.env };

  beforeAll(async () => {
    moto = await startMoto();
    Object.assign(process.env, {
      AWS_ENDPOINT_URL: moto.endpoint,
      AWS_ACCESS_KEY_ID: 'testing',
      AWS_SECRET_ACCESS_KEY: 'testing',
      AWS_REGION: 'us-east-1',
    });
    const west = new S3Client({ region: 'us-west-2', endpoint: moto.endpoint, forcePathStyle: true });
    await west.send(
      new CreateBucketCommand({ Bucket: BUCKET, CreateBucketConfiguration: { LocationConstraint: 'us-west-2' } }),
    );
    await west.send(new PutObjectCommand({ Bucket: BUCKET, Key: KEY, Body: '<!doctype html>' }));
    west.destroy();
  });

  afterAll(async () => {
    process.env = saved;
    await moto?.stop();
  });

  it("signs the link for the bucket's Region, not the one the command runs in", async () => {
    for (const region of [undefined, 'us-east-1']) {
      const out = sink();
      const err = sink();
      const code = await linkCommand({ uri: `s3://${BUCKET}/${KEY}`, region, expires: 600 }, out.stream, err.stream);
      expect(code, err.text()).toBe(0);
      const link = out.text().trim();
      expect(signedRegion(link)).toBe('us-west-2');
      // The link still opens the object.
      const res = await fetch(link);
      expect(res.status).toBe(200);
      expect(await res.text()).toBe('<!doctype html>');
    }
  });

  it('runs in AWS_DEFAULT_REGION when it is the only Region set, as the AWS CLI does', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'link-region-'));
    const outputs = join(dir, 'cdk-outputs.json');
    // No queue URL in the outputs: nothing there names the Region.
    writeFileSync(outputs, JSON.stringify({ CaptureReplay: { ResultsBucketName: BUCKET } }));
    const env = { ...process.env };
    delete process.env.AWS_REGION;
    // No profile's region and no instance metadata: the environment alone says where.
    Object.assign(process.env, {
      AWS_DEFAULT_REGION: 'us-west-2',
      AWS_CONFIG_FILE: join(dir, 'no-config'),
      AWS_EC2_METADATA_DISABLED: 'true',
    });
    try {
      const out = sink();
      const err = sink();
      const code = await linkCommand({ run: 'file-1', outputs, expires: 600 }, out.stream, err.stream);
      expect(code, err.text()).toBe(0);
      expect(signedRegion(out.text().trim())).toBe('us-west-2');
    } finally {
      rmSync(dir, { recursive: true, force: true });
      process.env = env;
    }
  });
});
