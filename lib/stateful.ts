import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';

export interface QueuePair {
  queue: sqs.Queue;
  dlq: sqs.Queue;
  alarm: cloudwatch.Alarm;
}

export interface StatefulProps {
  /** Each queue's visibility timeout: at least 6x its consumer function's timeout. */
  visibility: { ingest: Duration; replay: Duration; collect: Duration };
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
      // Claims, shard results and referenced bodies are working state: expire them.
      lifecycleRules: [{ prefix: 'runs/', abortIncompleteMultipartUploadAfter: Duration.days(1) }],
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.ingest = this.queuePair('Ingest', props.visibility.ingest);
    this.replay = this.queuePair('Replay', props.visibility.replay);
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
