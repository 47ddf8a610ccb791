/**
 * CDK assertions for SageMaker targets: the fire function's invoke grant on exactly the configured
 * endpoint (and inference component), cdk-nag with a SageMaker target, the targets the functions
 * get, and the deployment configuration's checks of a SageMaker target.
 */
import { Aspects } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { CaptureReplayStack } from '../../lib/capture-replay-stack';
import { parseDeploymentConfig, placeholdersIn } from '../../lib/config';
import { evaluate, type PolicyStatement } from '../support/iam/policy-evaluator';
import { templateApp } from '../support/cdk-app';
import { functionPolicies, type CfnTemplate } from '../support/iam/template-policies';

const config = parseDeploymentConfig({
  captureBucket: 'my-capture-bucket',
  capturePrefix: 'datacapture/llm/',
  targets: [
    { name: 'A', url: 'https://a.example.com', apiKeySecret: 'replay/key-a' },
    { name: 'B', url: 'https://b.example.com' },
  ],
});

describe('SageMaker targets', () => {
  const ACCOUNT = '123456789012';
  const ENDPOINT = (region: string, name: string) => `arn:aws:sagemaker:${region}:${ACCOUNT}:endpoint/${name}`;
  /** The fire function's statements with every intrinsic resolved (partition aws, us-east-1). */
  function fireStatements(targets: unknown[]): PolicyStatement[] {
    const t = Template.fromStack(
      new CaptureReplayStack(templateApp(), 'Sm', { config: parseDeploymentConfig({ ...config, targets }) }),
    ).toJSON() as CfnTemplate;
    const resources = Object.fromEntries(
      Object.keys(t.Resources).map((id) => [id, { Ref: id, Arn: `arn:aws:test:us-east-1:${ACCOUNT}:${id}` }]),
    );
    return functionPolicies(t, 'StatelessFire', {
      partition: 'aws',
      region: 'us-east-1',
      accountId: ACCOUNT,
      resources,
    }).statements;
  }
  const invokeStatements = (statements: PolicyStatement[]) =>
    statements.filter((s) => JSON.stringify(s.Action).includes('sagemaker:'));
  const call = (action: string, resource: string) => ({ action, resource, context: {} });

  it(
    'grants the fire function InvokeEndpoint and InvokeEndpointWithResponseStream on exactly the configured ' +
      'endpoint, its name lower-cased as in ARNs',
    () => {
      const statements = fireStatements([
        { name: 'A', url: 'https://a.example.com' },
        { name: 'B', kind: 'sagemaker', endpointName: 'My-LLM-Endpoint' },
      ]);
      expect(invokeStatements(statements)).toEqual([
        {
          Effect: 'Allow',
          Action: ['sagemaker:InvokeEndpoint', 'sagemaker:InvokeEndpointWithResponseStream'],
          Resource: ENDPOINT('us-east-1', 'my-llm-endpoint'),
        },
      ]);
      for (const action of ['sagemaker:InvokeEndpoint', 'sagemaker:InvokeEndpointWithResponseStream']) {
        expect(evaluate(statements, call(action, ENDPOINT('us-east-1', 'my-llm-endpoint')))).toBe('allowed');
        // Another endpoint, another region, another account: denied.
        expect(evaluate(statements, call(action, ENDPOINT('us-east-1', 'other-endpoint')))).toBe('implicit-deny');
        expect(evaluate(statements, call(action, ENDPOINT('us-west-2', 'my-llm-endpoint')))).toBe('implicit-deny');
        expect(
          evaluate(statements, call(action, `arn:aws:sagemaker:us-east-1:210987654321:endpoint/my-llm-endpoint`)),
        ).toBe('implicit-deny');
      }
      // Nothing else of SageMaker's: no management actions, no async invocation.
      for (const action of ['sagemaker:InvokeEndpointAsync', 'sagemaker:DescribeEndpoint', 'sagemaker:UpdateEndpoint'])
        expect(evaluate(statements, call(action, ENDPOINT('us-east-1', 'my-llm-endpoint')))).toBe('implicit-deny');
    },
  );

  it("uses the target's region when it names one, and adds the inference component it invokes", () => {
    const statements = fireStatements([
      { name: 'B', kind: 'sagemaker', endpointName: 'ep', region: 'eu-west-3', inferenceComponentName: 'Llama-IC' },
    ]);
    expect(invokeStatements(statements)).toEqual([
      {
        Effect: 'Allow',
        Action: ['sagemaker:InvokeEndpoint', 'sagemaker:InvokeEndpointWithResponseStream'],
        Resource: [
          ENDPOINT('eu-west-3', 'ep'),
          `arn:aws:sagemaker:eu-west-3:${ACCOUNT}:inference-component/llama-ic`,
          `arn:aws:sagemaker:eu-west-3:${ACCOUNT}:inference-component/Llama-IC`,
        ],
      },
    ]);
  });

  it('has no SageMaker statement without a SageMaker target, and never a wildcard', () => {
    expect(invokeStatements(fireStatements([{ name: 'A', url: 'https://a.example.com' }]))).toEqual([]);
    const statements = invokeStatements(
      fireStatements([{ name: 'B', kind: 'sagemaker', endpointName: 'ep', inferenceComponentName: 'ic' }]),
    );
    expect(statements).toHaveLength(1);
    expect(JSON.stringify(statements)).not.toMatch(/\*|\?/);
    // Only the fire function invokes.
    const template = Template.fromStack(
      new CaptureReplayStack(templateApp(), 'Sm2', {
        config: parseDeploymentConfig({ ...config, targets: [{ name: 'B', kind: 'sagemaker', endpointName: 'ep' }] }),
      }),
    );
    const holders = Object.values(template.findResources('AWS::IAM::Policy')).filter((p) =>
      JSON.stringify(p).includes('sagemaker:'),
    );
    expect(holders).toHaveLength(1);
    expect(JSON.stringify((holders[0] as { Properties: { Roles: unknown } }).Properties.Roles)).toContain(
      'StatelessFire',
    );
  });

  it('passes cdk-nag with a SageMaker target', () => {
    const app = templateApp();
    const s = new CaptureReplayStack(app, 'SmNag', {
      config: parseDeploymentConfig({
        ...config,
        targets: [
          { name: 'A', url: 'https://a.example.com' },
          { name: 'B', kind: 'sagemaker', endpointName: 'ep' },
        ],
      }),
    });
    Aspects.of(app).add(new AwsSolutionsChecks());
    app.synth();
    const findings = [
      ...Annotations.fromStack(s).findError('*', Match.stringLikeRegexp('AwsSolutions-.*')),
      ...Annotations.fromStack(s).findWarning('*', Match.stringLikeRegexp('AwsSolutions-.*')),
    ];
    expect(findings.map((f) => `${f.id}: ${String(f.entry.data).slice(0, 120)}`)).toEqual([]);
  });

  it('the functions get the target as configured (kind defaulted for HTTP targets)', () => {
    const template = Template.fromStack(
      new CaptureReplayStack(templateApp(), 'SmEnv', {
        config: parseDeploymentConfig({
          ...config,
          targets: [
            { name: 'A', url: 'https://a.example.com' },
            { name: 'B', kind: 'sagemaker', endpointName: 'ep', variant: 'AllTraffic' },
          ],
        }),
      }),
    );
    const env = (fn2: { Properties: { Environment: { Variables: Record<string, string> } } }) =>
      JSON.parse(fn2.Properties.Environment.Variables.TARGETS_JSON!);
    const fire = Object.entries(template.findResources('AWS::Lambda::Function')).find(([id]) =>
      id.startsWith('StatelessFire'),
    )![1] as never;
    expect(env(fire)).toEqual([
      { name: 'A', kind: 'http', url: 'https://a.example.com', path: '/v1/chat/completions' },
      { name: 'B', kind: 'sagemaker', endpointName: 'ep', variant: 'AllTraffic' },
    ]);
  });
});

describe('SageMaker target configuration', () => {
  const parse = (target: unknown) => () => parseDeploymentConfig({ ...config, targets: [target] });

  it("takes SageMaker's names: letters, digits and hyphens, at most 63", () => {
    expect(
      parse({
        name: 'B',
        kind: 'sagemaker',
        endpointName: 'a'.repeat(63),
        variant: 'AllTraffic',
        containerHostname: 'c1',
        inferenceComponentName: 'ic-1',
        region: 'us-gov-west-1',
        customAttributes: 'k=v',
      }),
    ).not.toThrow();
    expect(parse({ name: 'B', kind: 'sagemaker', endpointName: 'a'.repeat(64) })).toThrow(
      /targets\.0\.endpointName: endpointName is at most 63 characters/,
    );
    for (const bad of ['my_endpoint', '-ep', 'ep-', 'ep.1', ''])
      expect(parse({ name: 'B', kind: 'sagemaker', endpointName: bad }), bad).toThrow(
        /targets\.0\.endpointName: endpointName: letters, digits and hyphens/,
      );
    expect(parse({ name: 'B', kind: 'sagemaker', endpointName: 'ep', variant: 'All_Traffic' })).toThrow(
      /targets\.0\.variant/,
    );
    expect(parse({ name: 'B', kind: 'sagemaker', endpointName: 'ep', region: 'Frankfurt' })).toThrow(
      /targets\.0\.region: an AWS region name/,
    );
    expect(parse({ name: 'B', kind: 'sagemaker', endpointName: 'ep', customAttributes: 'é' })).toThrow(
      /customAttributes must be ASCII/,
    );
  });

  it('reports a misspelled key of a SageMaker target, an unknown kind, and a missing endpoint or URL clearly', () => {
    expect(parse({ name: 'B', kind: 'sagemaker', endpointName: 'ep', varient: 'AllTraffic' })).toThrow(
      /targets\.0\.varient: unknown setting; did you mean `variant`\?/,
    );
    expect(parse({ name: 'B', kind: 'bedrock', endpointName: 'ep' })).toThrow(
      /targets\.0\.kind: must be "http" \(the default\) or "sagemaker" \(got "bedrock"\)/,
    );
    expect(parse({ name: 'B', kind: 'sagemkr', endpointName: 'ep' })).toThrow(
      /targets\.0\.kind: .*\(got "sagemkr"; did you mean `sagemaker`\?\)/,
    );
    expect(parse({ name: 'B', kind: 'sagemaker' })).toThrow(/targets\.0\.endpointName/);
    expect(parse({ name: 'B', endpointName: 'ep' })).toThrow(
      /targets\.0\.url: an HTTP target needs url \(a SageMaker endpoint needs kind: "sagemaker" and endpointName\)/,
    );
  });

  it('refuses two targets of one name; a SageMaker target is no placeholder', () => {
    expect(() =>
      parseDeploymentConfig({
        ...config,
        targets: [
          { name: 'A', url: 'https://a.example.com' },
          { name: 'A', kind: 'sagemaker', endpointName: 'ep' },
        ],
      }),
    ).toThrow(/target name "A" is used twice/);
    expect(
      placeholdersIn(
        parseDeploymentConfig({
          captureBucket: 'b-1',
          targets: [{ name: 'B', kind: 'sagemaker', endpointName: 'ep' }],
        }),
      ),
    ).toEqual([]);
  });
});
