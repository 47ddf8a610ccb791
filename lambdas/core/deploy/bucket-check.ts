/**
 * The deploy-time check of the capture bucket (the custom resource in
 * lib/capture-bucket-check.ts): is the bucket in the stack's Region, and, when the template was
 * synthesized without knowing the account it deploys to, is the declared owner that account.
 * Pure: the handler (handlers/bucket-region-check.ts) asks S3 and hands the answer in.
 *
 * The bucket's Region comes from HeadBucket's `x-amz-bucket-region` header, which S3 sends
 * "regardless of the permissions on the bucket", to a request sent to any Region of the partition:
 * https://docs.aws.amazon.com/AmazonS3/latest/API/API_HeadBucket.html
 */

/** What HeadBucket answered: its HTTP status and its x-amz-bucket-region header, if any. */
export interface BucketProbe {
  status: number | undefined;
  region: string | undefined;
}

export interface BucketCheckInput {
  bucket: string;
  /** The Region the stack deploys to (AWS::Region). */
  stackRegion: string;
  /**
   * captureBucketAccount, passed only when synth could not compare it with the stack's account
   * (the template then assumes it is the stack's own).
   */
  declaredAccount?: string;
  /** The account the stack deploys to (AWS::AccountId). */
  stackAccount?: string;
}

export type BucketCheckVerdict = { ok: true; region: string } | { ok: false; reason: string };

/** The verdict, with a one-line reason CloudFormation shows as the deploy's failure. */
export function bucketCheckVerdict(input: BucketCheckInput, probe: BucketProbe): BucketCheckVerdict {
  const { bucket, stackRegion, declaredAccount, stackAccount } = input;
  if (declaredAccount && stackAccount && declaredAccount !== stackAccount) {
    return {
      ok: false,
      reason:
        `captureBucketAccount ${declaredAccount} is not the account this stack deploys to (${stackAccount}), ` +
        `and the template was synthesized without knowing that account: synthesize with credentials for ` +
        `${stackAccount} (cdk deploy does) so the setup for another account's bucket is built`,
    };
  }
  if (!probe.region) {
    if (probe.status === 404)
      return {
        ok: false,
        reason: `capture bucket ${bucket} does not exist (HeadBucket answered 404): check captureBucket`,
      };
    return {
      ok: false,
      reason:
        `the Region of capture bucket ${bucket} is unknown: HeadBucket answered ${probe.status ?? 'nothing'} ` +
        `without an x-amz-bucket-region header`,
    };
  }
  if (probe.region !== stackRegion) {
    return {
      ok: false,
      reason:
        `capture bucket ${bucket} is in ${probe.region} and the stack in ${stackRegion}: deploy the stack to ` +
        `${probe.region}, the Region of the bucket`,
    };
  }
  return { ok: true, region: probe.region };
}
