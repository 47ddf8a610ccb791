import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { HOURS_ROOT, RESULTS_ROOT, WORK_ROOT } from '../lambdas/core/pipeline/keys';

export interface QueuePair {
  queue: sqs.Queue;
  dlq: sqs.Queue;
  alarm: cloudwatch.Alarm;
}

export interface StatefulProps {
  /** Each queue's visibility timeout (see lib/sizing.ts for the replay queue's). */
  visibility: { ingest: Duration; replay: Duration; collect: Duration };
  /** Working files under work/ expire after this many days. */
  workingFilesExpireDays: number;
  /** Results under runs/ and hours/ expire after this many days; kept when unset. */
  resultsExpireDays?: number;
  /**
   * The replay queue's oldest message is alarming past this age: a delayed message is up
   * to 900 s old before it is even visible, and then held for up to the fire timeout.
   */
  replayMaxHealthyAge: Duration;
}

/**
 * What must survive a redeploy of code: the results bucket (retained), and the queues with
 * their dead-letter queues and alarms. Encrypted, TLS-only, no public access, no physical
 * names.
 */
export class CaptureReplayStateful extends Construct {
  public readonly resultsBucket: s3.Bucket;
  public readonly accessLogsBucket: s3.Bucket;
  public readonly ingest: QueuePair;
  public readonly replay: QueuePair;
  public readonly collect: QueuePair;
  public readonly replayAgeAlarm: cloudwatch.Alarm;

  constructor(scope: Construct, id: string, props: StatefulProps) {
    super(scope, id);
    this.accessLogsBucket = new s3.Bucket(this, 'AccessLogs', {
      encryption: s3.BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_PREFERRED,
      lifecycleRules: [{ expiration: Duration.days(90) }],
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.resultsBucket = new s3.Bucket(this, 'Results', {
      encryption: s3.BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      serverAccessLogsBucket: this.accessLogsBucket,
      serverAccessLogsPrefix: 'results/',
      // Run records, claims, shard results and referenced bodies (prompts) are working
      // state under work/: they expire. Results are the user's: kept unless asked.
      lifecycleRules: [
        { id: 'WorkingFiles', prefix: WORK_ROOT, expiration: Duration.days(props.workingFilesExpireDays), abortIncompleteMultipartUploadAfter: Duration.days(1) },
        ...[RESULTS_ROOT, HOURS_ROOT].map((prefix) => ({
          id: `Results-${prefix.replace('/', '')}`,
          prefix,
          abortIncompleteMultipartUploadAfter: Duration.days(1),
          ...(props.resultsExpireDays ? { expiration: Duration.days(props.resultsExpireDays) } : {}),
        })),
      ],
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.ingest = this.queuePair('Ingest', props.visibility.ingest);
    this.replay = this.queuePair('Replay', props.visibility.replay);
    this.replayAgeAlarm = new cloudwatch.Alarm(this, 'ReplayQueueAgeAlarm', {
      alarmDescription: 'capture-replay: shard messages are waiting longer than any healthy delay: the fire function is not keeping up (throttled, failing or at its concurrency limit)',
      metric: this.replay.queue.metricApproximateAgeOfOldestMessage({ period: Duration.minutes(1), statistic: 'Maximum' }),
      threshold: props.replayMaxHealthyAge.toSeconds(),
      evaluationPeriods: 3,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    this.collect = this.queuePair('Collect', props.visibility.collect);
  }

  private queuePair(id: string, visibilityTimeout: Duration): QueuePair {
    const dlq = new sqs.Queue(this, `${id}Dlq`, {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    const queue = new sqs.Queue(this, `${id}Queue`, {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      visibilityTimeout,
      retentionPeriod: Duration.days(4),
      deadLetterQueue: { queue: dlq, maxReceiveCount: 3 },
    });
    const alarm = new cloudwatch.Alarm(this, `${id}DlqAlarm`, {
      alarmDescription: `capture-replay: messages in the ${id.toLowerCase()} dead-letter queue`,
      metric: dlq.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(1) }),
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    return { queue, dlq, alarm };
  }
}
