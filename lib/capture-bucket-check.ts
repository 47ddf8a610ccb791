/**
 * The deploy-time check of the capture bucket: a custom resource whose function
 * (lambdas/handlers/bucket-region-check.ts) finds the bucket's Region and fails the deploy,
 * with one line naming both Regions, when it is not the stack's. The capture notification or
 * rule and the schedules depend on it, so nothing that could never fire is created first.
 *
 * A CloudFormation custom resource backed directly by the function (no provider framework):
 * the function answers CloudFormation itself, so the failure CloudFormation shows is the
 * check's line and nothing else. ServiceTimeout bounds a lost answer to minutes instead of the
 * default hour:
 * https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/aws-resource-cloudformation-customresource.html
 */
import { Aws, CustomResource, Duration } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { ReplayFunction } from './replay-function';

export interface CaptureBucketCheckProps {
  bucket: string;
  logRetention: logs.RetentionDays;
  /**
   * captureBucketAccount when synth could not compare it with the stack's account: the check
   * then refuses a deploy to another account than the one the template assumed.
   */
  declaredAccount?: string;
}

export class CaptureBucketCheck extends Construct {
  public readonly fn: ReplayFunction;
  public readonly resource: CustomResource;

  constructor(scope: Construct, id: string, props: CaptureBucketCheckProps) {
    super(scope, id);
    this.fn = new ReplayFunction(this, 'Function', {
      handlerName: 'bucket-region-check',
      logRetention: props.logRetention,
      timeout: Duration.seconds(60),
      memorySize: 256,
    });
    // HeadBucket is authorized as s3:ListBucket on the bucket; S3 sends the Region header even
    // when it refuses (another account's bucket), so this is the whole grant:
    // https://docs.aws.amazon.com/AmazonS3/latest/API/API_HeadBucket.html
    this.fn.addToRolePolicy(
      new iam.PolicyStatement({ actions: ['s3:ListBucket'], resources: [`arn:${Aws.PARTITION}:s3:::${props.bucket}`] }),
    );
    this.resource = new CustomResource(this, 'Resource', {
      serviceToken: this.fn.functionArn,
      resourceType: 'Custom::CaptureBucketCheck',
      serviceTimeout: Duration.minutes(5),
      properties: {
        BucketName: props.bucket,
        StackRegion: Aws.REGION,
        StackAccount: Aws.ACCOUNT_ID,
        ...(props.declaredAccount ? { DeclaredAccount: props.declaredAccount } : {}),
      },
    });
  }
}
