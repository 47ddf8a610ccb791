import { Annotations, CfnParameter, CfnRule, Duration, Fn, Stack, Token, type StackProps } from 'aws-cdk-lib';
import { NagSuppressions } from 'cdk-nag';
import type { Construct } from 'constructs';
import { assertDeployable, placeholdersIn, type DeploymentConfig } from './config';
import { RunsDashboard } from './dashboard';
import { addOutputs } from './outputs';
import { natLimitWarnings } from './nat-limits';
import { isCrossAccount, type DeployEnvironment } from './placement';
import { CaptureReplayStateful } from './stateful';
import { RunAlarms } from './run-alarms';
import { fireSizingOf } from './sizing';
import { FUNCTION_TIMEOUT_SECONDS, sixTimesVisibilitySeconds } from './stack-constants';
import { CaptureReplayStateless } from './stateless';

/** AWS's guidance for SQS event sources: visibility at least 6x the function timeout (lib/stack-constants.ts). */
const sixTimes = (fn: keyof typeof FUNCTION_TIMEOUT_SECONDS) =>
  Duration.seconds(sixTimesVisibilitySeconds(FUNCTION_TIMEOUT_SECONDS[fn]));

export interface CaptureReplayStackProps extends StackProps {
  config: DeploymentConfig;
}

export class CaptureReplayStack extends Stack {
  public readonly stateful: CaptureReplayStateful;
  public readonly stateless: CaptureReplayStateless;
  /** Alarms on what the runs found (lib/run-alarms.ts). */
  public readonly runAlarms: RunAlarms;
  /** The runs' dashboard (lib/dashboard.ts); none with `dashboard: false`. */
  public readonly dashboard?: RunsDashboard;

  constructor(scope: Construct, id: string, props: CaptureReplayStackProps) {
    super(scope, id, props);
    const { config } = props;
    // The rules that depend on where the stack goes, with what synth knows of it (tokens: nothing).
    const env: DeployEnvironment = {
      ...(Token.isUnresolved(this.region) ? {} : { region: this.region }),
      ...(Token.isUnresolved(this.account) ? {} : { account: this.account }),
    };
    assertDeployable(config, env);
    const crossAccount = isCrossAccount(config, env);
    const sizing = fireSizingOf(config);
    this.stateful = new CaptureReplayStateful(this, 'Stateful', {
      // The replay queue's visibility is the fire timeout + 60 s, not 6x (lib/sizing.ts says why).
      visibility: {
        ingest: sixTimes('ingest'),
        replay: Duration.seconds(sizing.visibilityTimeoutSeconds),
        collect: sixTimes('collect'),
      },
      workingFilesExpireDays: config.workingFilesExpireDays,
      ...(config.resultsExpireDays ? { resultsExpireDays: config.resultsExpireDays } : {}),
      // A delayed message ages up to 900 s before it is visible, then is held for up to the fire timeout.
      replayMaxHealthyAge: Duration.seconds(900 + sizing.timeoutSeconds + 120),
      // Scheduled runs' resources exist only with schedules: a deployment without them is unchanged.
      ...(config.schedules.length > 0
        ? {
            schedules: {
              planVisibility: sixTimes('plan'),
              ...(config.notify ? { notify: config.notify } : {}),
            },
          }
        : {}),
      ...(config.alarms ? { alarms: config.alarms } : {}),
      metricsNamespace: config.metricsNamespace,
    });
    // captureBucketAccount that synth could not compare with the stack's account: the deploy does.
    const uncheckedAccount =
      config.captureBucketAccount && env.account === undefined ? config.captureBucketAccount : undefined;
    this.stateless = new CaptureReplayStateless(this, 'Stateless', {
      config,
      stateful: this.stateful,
      sizing,
      crossAccount,
      ...(uncheckedAccount ? { uncheckedAccount } : {}),
    });
    this.runAlarms = new RunAlarms(this, 'RunAlarms', { config, topic: this.stateful.alarmTopic });
    if (config.dashboard)
      this.dashboard = new RunsDashboard(this, 'Dashboard', {
        config,
        stateful: this.stateful,
        alarms: [...this.stateful.alarms, ...this.runAlarms.alarms],
      });
    addOutputs(this, {
      config,
      stateful: this.stateful,
      stateless: this.stateless,
      sizing,
      captureSource: this.stateless.captureSource,
      crossAccount,
      ...(this.dashboard ? { dashboardName: this.dashboard.dashboardName } : {}),
    });

    // Synth works on the defaults (offline, no credentials); a deploy must not. The CLI does
    // not tell the app which command runs, so the template carries the guard: CloudFormation
    // evaluates this rule before creating or updating anything.
    const placeholders = placeholdersIn(props.config);
    if (placeholders.length > 0) {
      const message =
        `capture-replay: set ${placeholders.join(' and ')} in cdk.json (context.captureReplay) or -c ` +
        `configFile=... before deploying`;
      Annotations.of(this).addWarningV2('capture-replay:placeholders', message);
      const state = new CfnParameter(this, 'ConfigurationState', {
        type: 'String',
        default: 'placeholders',
        description: 'Left at "placeholders" by a synth with default settings; the rule below stops such a deploy.',
      });
      new CfnRule(this, 'ConfiguredBeforeDeploy', {
        assertions: [{ assert: Fn.conditionEquals(state.valueAsString, 'configured'), assertDescription: message }],
      });
    }

    // In a VPC the targets may be reached through a NAT gateway, whose limits per destination the peak can pass (lib/nat-limits.ts).
    if (config.vpc)
      for (const w of natLimitWarnings(config, sizing, env.region)) Annotations.of(this).addWarningV2(w.id, w.message);

    NagSuppressions.addStackSuppressions(this, [
      {
        id: 'AwsSolutions-IAM4',
        reason:
          'AWSLambdaBasicExecutionRole (logs only) on the functions and the CDK bucket-notification helper; nothing broader.',
      },
      {
        id: 'AwsSolutions-IAM5',
        reason:
          'Wildcards are object-key scopes: read (and, for the plan function, listing) on <capture-prefix>*, ' +
          'read/write on work/*, runs/*, hours/* and schedules/* of the results bucket, and the ' +
          's3:GetObject*/List* action groups of grantRead; the CDK bucket-notification helper needs ' +
          's3:PutBucketNotification on the imported bucket.',
      },
      {
        id: 'AwsSolutions-L1',
        reason:
          "Node.js 22 is pinned on purpose: it is the package's floor and the Node the tests and CI run on " +
          '(.ci/run); moving to a newer runtime is a tested change, not an automatic one.',
      },
      {
        id: 'AwsSolutions-SQS3',
        reason: 'The flagged queues are the dead-letter queues themselves; each has a CloudWatch alarm.',
      },
    ]);
  }
}
