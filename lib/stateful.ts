import { Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { DIMENSION, INGEST_METRICS } from '../lambdas/core/metrics/cloudwatch';
import { alarmCompatibleTopic, notifyAlarms } from './alarm-topic';
import { HOURS_ROOT, RESULTS_ROOT, WORK_ROOT } from '../lambdas/core/pipeline/keys';
import { SCHEDULES_ROOT } from '../lambdas/core/scheduled-runs/contract';
import { MAX_RECEIVE_COUNT } from './stack-constants';

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
  /**
   * Scheduled runs (only when the configuration declares schedules): the plan queue's
   * visibility, and the notify block (an existing topic, or emails for a topic created here).
   */
  schedules?: { planVisibility: Duration; notify?: { topicArn?: string; emails?: string[] } };
  /**
   * Where the alarms notify: an existing topic, or emails on a topic created here. Without it,
   * the notify topic (scheduled runs) when there is one; else the alarms have no action.
   */
  alarms?: { topicArn?: string; emails?: string[] };
  /** The namespace of the runs' metrics (the deployment's metricsNamespace). */
  metricsNamespace: string;
}

/** What scheduled runs add: the plan queue, the scheduler's dead-letter queue, the summaries' topic. */
export interface ScheduleState {
  plan: QueuePair;
  /**
   * Where EventBridge Scheduler puts a plan message it could not send after its retries
   * (with the error): not a redrive target of the plan queue, which has its own DLQ.
   */
  schedulerDlq: sqs.Queue;
  schedulerDlqAlarm: cloudwatch.Alarm;
  /** Scheduled runs' summaries; none without notify. */
  topic?: sns.ITopic;
  /** The created topic's customer managed key (when the topic also takes the alarms): its publishers need it. */
  topicKey?: kms.IKey;
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
  /** A run the fire function's concurrency cannot start on time (the ingest or plan function's ExpectedLatenessSeconds above 0). */
  public readonly undersizedRunAlarm: cloudwatch.Alarm;
  public readonly schedules?: ScheduleState;
  /** Every alarm of the stack. */
  public readonly alarms: cloudwatch.Alarm[];
  /** Where the alarms notify; none when neither alarms nor notify is configured. */
  public readonly alarmTopic?: sns.ITopic;

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
        {
          id: 'WorkingFiles',
          prefix: WORK_ROOT,
          expiration: Duration.days(props.workingFilesExpireDays),
          abortIncompleteMultipartUploadAfter: Duration.days(1),
        },
        ...[RESULTS_ROOT, HOURS_ROOT].map((prefix) => ({
          id: `Results-${prefix.replace('/', '')}`,
          prefix,
          abortIncompleteMultipartUploadAfter: Duration.days(1),
          ...(props.resultsExpireDays ? { expiration: Duration.days(props.resultsExpireDays) } : {}),
        })),
        // A schedule's history and trend page never expire, even with resultsExpireDays: they
        // are one line (~4 KB for two targets) per run, and the months of trend are what a schedule is for. The
        // runs they link to under runs/ do expire with resultsExpireDays (expiry counts from an
        // object's last write, so expiring history.jsonl, rewritten at every run, would only
        // ever delete a schedule that stopped running: a surprise, not a saving).
        {
          id: `Results-${SCHEDULES_ROOT.replace('/', '')}`,
          prefix: SCHEDULES_ROOT,
          abortIncompleteMultipartUploadAfter: Duration.days(1),
        },
      ],
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.ingest = this.queuePair('Ingest', props.visibility.ingest);
    this.replay = this.queuePair('Replay', props.visibility.replay);
    this.replayAgeAlarm = new cloudwatch.Alarm(this, 'ReplayQueueAgeAlarm', {
      alarmDescription:
        'capture-replay: shard messages are waiting longer than any healthy delay: the fire function is not ' +
        'keeping up (throttled, failing or at its concurrency limit)',
      metric: this.replay.queue.metricApproximateAgeOfOldestMessage({
        period: Duration.minutes(1),
        statistic: 'Maximum',
      }),
      threshold: props.replayMaxHealthyAge.toSeconds(),
      evaluationPeriods: 3,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    this.collect = this.queuePair('Collect', props.visibility.collect);
    this.undersizedRunAlarm = new cloudwatch.Alarm(this, 'UndersizedRunAlarm', {
      alarmDescription:
        'capture-replay: a run needs more fire invocations at once than the fire function may run, and its ' +
        "requests will go out late (the ingest report's capacity and the ingest or plan log say by how much, " +
        'and the value of peakRequestsPerSecond that fits)',
      metric: new cloudwatch.Metric({
        namespace: props.metricsNamespace,
        metricName: INGEST_METRICS.expectedLateness.name,
        dimensionsMap: { [DIMENSION.stack]: Stack.of(this).stackName },
        statistic: 'Maximum',
        period: Duration.minutes(5),
      }),
      threshold: 0,
      evaluationPeriods: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    // The notify topic takes the alarms too unless they have their own.
    if (props.schedules) this.schedules = this.scheduleState(props.schedules, !props.alarms);
    this.alarms = [
      this.ingest.alarm,
      this.replay.alarm,
      this.replayAgeAlarm,
      this.collect.alarm,
      this.undersizedRunAlarm,
      ...(this.schedules ? [this.schedules.plan.alarm, this.schedules.schedulerDlqAlarm] : []),
    ];
    const alarmTopic = props.alarms ? this.alarmsTopic(props.alarms) : this.schedules?.topic;
    if (alarmTopic) {
      notifyAlarms(this.alarms, alarmTopic);
      this.alarmTopic = alarmTopic;
    }
  }

  private alarmsTopic(alarms: NonNullable<StatefulProps['alarms']>): sns.ITopic {
    if (alarms.topicArn) return sns.Topic.fromTopicArn(this, 'AlarmTopic', alarms.topicArn);
    return alarmCompatibleTopic(this, 'AlarmTopic', {
      displayName: 'capture-replay alarms',
      emails: alarms.emails ?? [],
    }).topic;
  }

  private scheduleState(props: NonNullable<StatefulProps['schedules']>, takesAlarms: boolean): ScheduleState {
    const plan = this.queuePair('Plan', props.planVisibility);
    // SSE-SQS, as every queue here: EventBridge Scheduler sends to it with the execution
    // role's sqs:SendMessage alone (a queue under a customer managed KMS key would also need
    // kms:GenerateDataKey and kms:Decrypt for the role).
    const schedulerDlq = new sqs.Queue(this, 'SchedulerDlq', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    const schedulerDlqAlarm = new cloudwatch.Alarm(this, 'SchedulerDlqAlarm', {
      alarmDescription:
        'capture-replay: EventBridge Scheduler could not send a plan message (a scheduled run did not ' +
        'start); the message in the scheduler dead-letter queue says why',
      metric: schedulerDlq.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(1) }),
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    const notify = props.notify;
    let topic: sns.ITopic | undefined;
    let topicKey: kms.IKey | undefined;
    if (notify?.topicArn) {
      topic = sns.Topic.fromTopicArn(this, 'NotifyTopic', notify.topicArn);
    } else if (notify && takesAlarms) {
      // CloudWatch cannot use the AWS managed key: a key of the stack's own (lib/alarm-topic.ts).
      ({ topic, key: topicKey } = alarmCompatibleTopic(this, 'NotifyTopic', {
        displayName: 'capture-replay scheduled runs',
        emails: notify.emails ?? [],
      }));
    } else if (notify) {
      // The AWS managed key for SNS: its key policy lets principals of this account use it
      // through SNS, so the publishing functions need no KMS grant and the stack no key.
      const created = new sns.Topic(this, 'NotifyTopic', {
        displayName: 'capture-replay scheduled runs',
        masterKey: kms.Alias.fromAliasName(this, 'SnsManagedKey', 'alias/aws/sns'),
        enforceSSL: true,
      });
      for (const email of notify.emails ?? []) created.addSubscription(new subscriptions.EmailSubscription(email));
      topic = created;
    }
    return { plan, schedulerDlq, schedulerDlqAlarm, ...(topic ? { topic } : {}), ...(topicKey ? { topicKey } : {}) };
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
      deadLetterQueue: { queue: dlq, maxReceiveCount: MAX_RECEIVE_COUNT },
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
