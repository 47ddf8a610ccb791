/**
 * The stack's outputs: what a user, the CLI and a capture bucket's owner in another account
 * need from a deployment. The names are a contract (the CLI reads them): renaming one breaks it.
 */
import { CfnOutput, type Stack } from 'aws-cdk-lib';
import type { CaptureSource } from './capture-source';
import { ownerBucketPolicyStatements } from './capture-source';
import { dashboardUrlOf } from './dashboard';
import type { DeploymentConfig } from './config';
import type { FireSizing } from './sizing';
import type { CaptureReplayStateful } from './stateful';
import type { CaptureReplayStateless } from './stateless';

export interface OutputSources {
  config: DeploymentConfig;
  stateful: CaptureReplayStateful;
  stateless: CaptureReplayStateless;
  sizing: FireSizing;
  captureSource: CaptureSource;
  /** The capture bucket belongs to another account (known at synth): its owner's part is output. */
  crossAccount: boolean;
  /** The runs' dashboard, when the stack has one (lib/dashboard.ts). */
  dashboardName?: string;
}

/** `all`, `none`, or the targets' names, comma-separated: what new capture files replay to. */
export function autoReplayText(c: Pick<DeploymentConfig, 'autoReplay'>): string {
  if (c.autoReplay === true) return 'all';
  if (c.autoReplay === false) return 'none';
  return c.autoReplay.targets.join(',');
}

export function addOutputs(stack: Stack, s: OutputSources): void {
  const { config, stateful, stateless } = s;
  const out = (id: string, value: string, description: string) => new CfnOutput(stack, id, { value, description });
  out('ResultsBucketName', stateful.resultsBucket.bucketName, 'Replay results: runs/<run-id>/<target>/');
  out('CaptureBucketName', config.captureBucket, 'Where Data Capture writes (read only)');
  // Not an empty Value, which CloudFormation's Outputs reference does not show as allowed
  // (https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/outputs-section-structure.html):
  // no output means the whole bucket.
  if (config.capturePrefix)
    out(
      'CapturePrefix',
      config.capturePrefix,
      'Prefix of the captures in the capture bucket (no output: the whole bucket)',
    );
  out(
    'FireSizing',
    JSON.stringify(s.sizing),
    'Fire function settings derived from peakRequestsPerSecond (lib/sizing.ts)',
  );
  out(
    'IngestQueueUrl',
    stateful.ingest.queue.queueUrl,
    'New capture files (S3 or EventBridge events) for the ingest function',
  );
  out('ReplayQueueUrl', stateful.replay.queue.queueUrl, 'Shard messages for the fire function');
  out('CollectQueueUrl', stateful.collect.queue.queueUrl, "Collect messages (a run's deadline, its last shard)");
  out('ReplayDlqUrl', stateful.replay.dlq.queueUrl, 'Shard messages that failed three times');
  out(
    'IngestRoleArn',
    stateless.ingestFunction.role!.roleArn,
    "The ingest function's role (reads captures: for KMS key and bucket policies)",
  );
  out(
    'FireRoleArn',
    stateless.fireFunction.role!.roleArn,
    "The fire function's role (reads the API key secrets, invokes SageMaker targets)",
  );
  out('CollectRoleArn', stateless.collectFunction.role!.roleArn, "The collect function's role");
  out('AutoReplay', autoReplayText(config), 'What new capture files replay to: all, none, or these targets');
  const scheduled = stateful.schedules;
  if (scheduled) {
    out(
      'PlanQueueUrl',
      scheduled.plan.queue.queueUrl,
      'Plan messages of scheduled runs: send {"v":1,"kind":"window","schedule":<name>,"scheduledTime":<ISO>} to run one now',
    );
    out(
      'SchedulerDlqUrl',
      scheduled.schedulerDlq.queueUrl,
      'Plan messages EventBridge Scheduler could not send (a scheduled run that did not start), with the error',
    );
    if (scheduled.topic) out('NotifyTopicArn', scheduled.topic.topicArn, "Scheduled runs' summaries (SNS)");
  }
  if (stateless.planFunction)
    out('PlanRoleArn', stateless.planFunction.role!.roleArn, "The plan function's role (lists and reads captures)");
  if (stateful.alarmTopic)
    out('AlarmTopicArn', stateful.alarmTopic.topicArn, 'Where every alarm of the stack notifies (SNS)');
  if (s.dashboardName)
    out(
      'DashboardUrl',
      dashboardUrlOf(s.dashboardName),
      "The CloudWatch dashboard of the runs: latency and errors per target, verdicts of the scheduled runs, the pipeline's health",
    );
  if (s.crossAccount) {
    const roles = {
      ingest: stateless.ingestFunction.role!,
      ...(stateless.planFunction ? { plan: stateless.planFunction.role! } : {}),
    };
    out(
      'CaptureOwnerBucketPolicy',
      stack.toJsonString(ownerBucketPolicyStatements(config, roles)),
      "Statements the capture bucket's owner adds to its bucket policy (JSON)",
    );
    if (s.captureSource.ownerRule)
      out(
        'CaptureOwnerEventRule',
        stack.toJsonString(s.captureSource.ownerRule),
        "The EventBridge rule the capture bucket's owner adds on its default bus, and its role's policy (JSON)",
      );
  }
}
