/**
 * Where the capture bucket is, against where the stack goes: the Region must be the same, and
 * a bucket in another account needs a setup whose events reach this account. Pure: the
 * configuration's check runs it with the Region and account `cdk synth` knows (from the
 * credentials or CDK_DEFAULT_*), the stack with its own; when either is unknown at synth,
 * the deploy-time check (lib/capture-bucket-check.ts) covers it.
 *
 * AWS's rules, with their sources: placementProblems.
 */
import type { DeploymentConfig } from './config';

/** The stack's Region and account when known at synth; undefined when they are deploy-time tokens. */
export interface DeployEnvironment {
  region?: string;
  account?: string;
}

export interface PlacementProblem {
  path: 'captureBucketRegion' | 'notifications';
  message: string;
}

type Placed = Pick<
  DeploymentConfig,
  'captureBucket' | 'captureBucketRegion' | 'captureBucketAccount' | 'notifications' | 'autoReplay'
>;

/** The capture bucket belongs to another account than the stack's (known at synth). */
export function isCrossAccount(c: Pick<DeploymentConfig, 'captureBucketAccount'>, env: DeployEnvironment): boolean {
  return c.captureBucketAccount !== undefined && env.account !== undefined && c.captureBucketAccount !== env.account;
}

/** New capture files reach the stack by a notification or a rule (autoReplay is not false). */
export function replaysNewCaptures(c: Pick<DeploymentConfig, 'autoReplay'>): boolean {
  return c.autoReplay !== false;
}

/**
 * Every placement that would deploy and never replay, one line each.
 *
 * AWS's rules:
 * - An S3 event notification's SQS queue must be in the bucket's Region:
 *   https://docs.aws.amazon.com/AmazonS3/latest/userguide/ways-to-add-notification-config-to-bucket.html
 * - S3 sends EventBridge events to the default bus of the bucket's own account and Region:
 *   https://docs.aws.amazon.com/AmazonS3/latest/userguide/EventBridge.html
 * - CDK's notification handler reads the bucket's notification configuration, then replaces it;
 *   by default only the bucket's owner may read it ("you must be the bucket owner to read the
 *   notification configuration of a bucket"), and the write replaces the owner's whole configuration:
 *   https://docs.aws.amazon.com/AmazonS3/latest/API/API_GetBucketNotificationConfiguration.html
 *   https://docs.aws.amazon.com/AmazonS3/latest/API/API_PutBucketNotificationConfiguration.html
 */
export function placementProblems(c: Placed, env: DeployEnvironment): PlacementProblem[] {
  const problems: PlacementProblem[] = [];
  if (c.captureBucketRegion && env.region && c.captureBucketRegion !== env.region) {
    problems.push({
      path: 'captureBucketRegion',
      message:
        `the capture bucket is in ${c.captureBucketRegion} and the stack would deploy to ${env.region}: deploy ` +
        `to ${c.captureBucketRegion} (AWS_REGION or the profile's region), the stack must be in the bucket's Region`,
    });
  }
  if (isCrossAccount(c, env) && c.notifications === 's3' && replaysNewCaptures(c)) {
    problems.push({
      path: 'notifications',
      message:
        `the capture bucket belongs to account ${c.captureBucketAccount}, not ${env.account}: only its owner ` +
        `can set its S3 notifications; use "notifications": "eventbridge" (the stack then outputs the rule the owner adds)`,
    });
  }
  return problems;
}
