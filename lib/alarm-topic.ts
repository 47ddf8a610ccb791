/**
 * SNS topics CloudWatch alarms can publish to, and the alarms' actions.
 *
 * CloudWatch publishes to an encrypted topic only if the topic's key is a customer managed key
 * whose policy lets the service use it (kms:GenerateDataKey*, kms:Decrypt); the AWS managed
 * key for SNS cannot be given to it:
 * https://docs.aws.amazon.com/sns/latest/dg/sns-key-management.html#compatibility-with-aws-services
 * and the topic's access policy must let cloudwatch.amazonaws.com publish (a topic policy set
 * by the stack replaces the default one that would):
 * https://repost.aws/knowledge-center/cloudwatch-receive-sns-for-alarm-trigger
 */
import { Aws, Duration, RemovalPolicy } from 'aws-cdk-lib';
import type * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as cloudwatchActions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import type { Construct } from 'constructs';

export interface AlarmCompatibleTopic {
  topic: sns.Topic;
  /** Publishers other than CloudWatch (the functions) need kms:GenerateDataKey and kms:Decrypt on it. */
  key: kms.Key;
}

const CLOUDWATCH = 'cloudwatch.amazonaws.com';

/**
 * A topic under its own customer managed key (rotated yearly), TLS only, that this account's
 * CloudWatch alarms may publish to, the emails subscribed (each confirms by SNS's link).
 */
export function alarmCompatibleTopic(
  scope: Construct,
  id: string,
  props: { displayName: string; emails: readonly string[] },
): AlarmCompatibleTopic {
  const key = new kms.Key(scope, `${id}Key`, {
    description: `capture-replay: encrypts the ${props.displayName} topic; CloudWatch alarms may use it`,
    enableKeyRotation: true,
    removalPolicy: RemovalPolicy.DESTROY,
    pendingWindow: Duration.days(7),
  });
  key.addToResourcePolicy(
    new iam.PolicyStatement({
      sid: 'CloudWatchAlarmsPublish',
      principals: [new iam.ServicePrincipal(CLOUDWATCH)],
      actions: ['kms:GenerateDataKey*', 'kms:Decrypt'],
      resources: ['*'],
    }),
  );
  const topic = new sns.Topic(scope, id, { displayName: props.displayName, masterKey: key, enforceSSL: true });
  // Only this account's alarms, as the confused-deputy guidance for service principals asks.
  topic.addToResourcePolicy(
    new iam.PolicyStatement({
      sid: 'CloudWatchAlarmsPublish',
      principals: [new iam.ServicePrincipal(CLOUDWATCH)],
      actions: ['sns:Publish'],
      resources: [topic.topicArn],
      conditions: {
        StringEquals: { 'aws:SourceAccount': Aws.ACCOUNT_ID },
        ArnLike: { 'aws:SourceArn': `arn:${Aws.PARTITION}:cloudwatch:${Aws.REGION}:${Aws.ACCOUNT_ID}:alarm:*` },
      },
    }),
  );
  for (const email of props.emails) topic.addSubscription(new subscriptions.EmailSubscription(email));
  return { topic, key };
}

/** Every alarm notifies the topic when it goes into ALARM. */
export function notifyAlarms(alarms: readonly cloudwatch.Alarm[], topic: sns.ITopic): void {
  const action = new cloudwatchActions.SnsAction(topic);
  for (const alarm of alarms) alarm.addAlarmAction(action);
}
