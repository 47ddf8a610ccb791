/**
 * Reading a function's IAM statements out of a CloudFormation template: every intrinsic
 * the CDK emits resolved against emulated resources, the role found through the function,
 * and anything unresolvable refused.
 */
import { describe, expect, it } from 'vitest';
import {
  functionEnvironment,
  functionPolicies,
  resolveIntrinsics,
  type CfnTemplate,
  type Resolver,
} from '../../support/iam/template-policies';

const ACCOUNT = '123456789012';
const QUEUE_URL = `http://127.0.0.1:5000/${ACCOUNT}/replay`;
const QUEUE_ARN = `arn:aws:sqs:us-east-1:${ACCOUNT}:replay`;

const resolver: Resolver = {
  partition: 'aws',
  region: 'us-east-1',
  accountId: ACCOUNT,
  resources: {
    Results1: { Ref: 'results-bucket', Arn: 'arn:aws:s3:::results-bucket' },
    Replay1: { Ref: QUEUE_URL, Arn: QUEUE_ARN, QueueName: 'replay', QueueUrl: QUEUE_URL },
  },
};

const template: CfnTemplate = {
  Parameters: { Mode: { Default: 'file' } },
  Resources: {
    Results1: { Type: 'AWS::S3::Bucket' },
    Replay1: { Type: 'AWS::SQS::Queue' },
    FnRole1: {
      Type: 'AWS::IAM::Role',
      Properties: {
        ManagedPolicyArns: [
          {
            'Fn::Join': [
              '',
              ['arn:', { Ref: 'AWS::Partition' }, ':iam::aws:policy/service-role/AWSLambdaBasicExecutionRole'],
            ],
          },
          { Ref: 'Extra1' },
        ],
        Policies: [
          {
            PolicyName: 'inline',
            PolicyDocument: {
              Statement: {
                Effect: 'Allow',
                Action: 'sqs:GetQueueAttributes',
                Resource: { 'Fn::GetAtt': ['Replay1', 'Arn'] },
              },
            },
          },
        ],
      },
    },
    Fn1: {
      Type: 'AWS::Lambda::Function',
      Properties: {
        Role: { 'Fn::GetAtt': ['FnRole1', 'Arn'] },
        Environment: { Variables: { QUEUE: { Ref: 'Replay1' }, MODE: { Ref: 'Mode' }, FIXED: 'x' } },
      },
    },
    FnRoleDefaultPolicy: {
      Type: 'AWS::IAM::Policy',
      Properties: {
        Roles: [{ Ref: 'FnRole1' }],
        PolicyDocument: {
          Statement: [
            {
              Effect: 'Allow',
              Action: ['s3:GetObject', 's3:PutObject'],
              Resource: { 'Fn::Join': ['', [{ 'Fn::GetAtt': ['Results1', 'Arn'] }, '/runs/*']] },
            },
            {
              Effect: 'Allow',
              Action: 's3:GetObject',
              Resource: { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':s3:::capture-bucket/datacapture/*']] },
            },
            {
              Effect: 'Allow',
              Action: 'sqs:SendMessage',
              Resource: {
                'Fn::Sub': 'arn:${AWS::Partition}:sqs:${AWS::Region}:${AWS::AccountId}:${Replay1.QueueName}',
              },
            },
          ],
        },
      },
    },
    OtherRolePolicy: {
      Type: 'AWS::IAM::Policy',
      Properties: {
        Roles: [{ Ref: 'OtherRole' }],
        PolicyDocument: { Statement: [{ Effect: 'Allow', Action: '*', Resource: '*' }] },
      },
    },
    Extra1: {
      Type: 'AWS::IAM::ManagedPolicy',
      Properties: { PolicyDocument: { Statement: [{ Effect: 'Deny', Action: 's3:DeleteObject', Resource: '*' }] } },
    },
  },
};

describe('resolveIntrinsics', () => {
  it.each([
    ['Ref to a resource', { Ref: 'Replay1' }, QUEUE_URL],
    ['Ref to a pseudo parameter', { Ref: 'AWS::AccountId' }, ACCOUNT],
    ['Ref to a parameter with a default', { Ref: 'Mode' }, 'file'],
    ['Fn::GetAtt list form', { 'Fn::GetAtt': ['Replay1', 'QueueName'] }, 'replay'],
    ['Fn::GetAtt string form', { 'Fn::GetAtt': 'Results1.Arn' }, 'arn:aws:s3:::results-bucket'],
    [
      'Fn::Join of an imported bucket',
      { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':s3:::capture-bucket']] },
      'arn:aws:s3:::capture-bucket',
    ],
    [
      'Fn::Select of Fn::Split (queue name from its ARN)',
      { 'Fn::Select': [5, { 'Fn::Split': [':', { 'Fn::GetAtt': ['Replay1', 'Arn'] }] }] },
      'replay',
    ],
    [
      'Fn::Sub with pseudo parameters and an attribute',
      { 'Fn::Sub': 'https://sqs.${AWS::Region}.${AWS::URLSuffix}/${AWS::AccountId}/${Replay1.QueueName}' },
      `https://sqs.us-east-1.amazonaws.com/${ACCOUNT}/replay`,
    ],
    [
      'Fn::Sub with a variable map and an escape',
      { 'Fn::Sub': ['${Bucket}/${!Literal}', { Bucket: { Ref: 'Results1' } }] },
      'results-bucket/${Literal}',
    ],
    ['nested in objects and lists', { A: [{ Ref: 'Results1' }, 'x'] }, { A: ['results-bucket', 'x'] }],
  ])('%s', (_, value, want) => {
    expect(resolveIntrinsics(value, template, resolver)).toEqual(want);
  });

  it.each([
    ['a logical id the resolver does not know', { Ref: 'Nope' }, /Ref Nope/],
    [
      'an attribute the resolver does not have',
      { 'Fn::GetAtt': ['Results1', 'DomainName'] },
      /no DomainName for Results1/,
    ],
    ['Fn::If', { 'Fn::If': ['C', 'a', 'b'] }, /Fn::If is not supported/],
    ['Fn::ImportValue', { 'Fn::ImportValue': 'x' }, /Fn::ImportValue is not supported/],
    ['AWS::StackName without a stack name', { Ref: 'AWS::StackName' }, /stackName/],
    ['Fn::Select out of range', { 'Fn::Select': [9, ['a']] }, /out of range/],
  ])('refuses %s', (_, value, error) => {
    expect(() => resolveIntrinsics(value, template, resolver)).toThrow(error);
  });
});

describe('functionPolicies', () => {
  it("collects the role's attached policies, inline policies and template managed policies, resolved", () => {
    const p = functionPolicies(template, 'Fn', resolver);
    expect(p.functionId).toBe('Fn1');
    expect(p.roleId).toBe('FnRole1');
    expect(p.statements).toEqual([
      { Effect: 'Allow', Action: ['s3:GetObject', 's3:PutObject'], Resource: 'arn:aws:s3:::results-bucket/runs/*' },
      { Effect: 'Allow', Action: 's3:GetObject', Resource: 'arn:aws:s3:::capture-bucket/datacapture/*' },
      { Effect: 'Allow', Action: 'sqs:SendMessage', Resource: QUEUE_ARN },
      { Effect: 'Allow', Action: 'sqs:GetQueueAttributes', Resource: QUEUE_ARN },
      { Effect: 'Deny', Action: 's3:DeleteObject', Resource: '*' },
    ]);
    expect(p.origins).toEqual([
      'FnRoleDefaultPolicy',
      'FnRoleDefaultPolicy',
      'FnRoleDefaultPolicy',
      'FnRole1/inline',
      'Extra1',
    ]);
    // Another role's policy is not this function's.
    expect(JSON.stringify(p.statements)).not.toContain('"Action":"*"');
    expect(p.externalManagedPolicyArns).toEqual(['arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole']);
  });

  it('functionEnvironment resolves the variables the handler reads', () => {
    expect(functionEnvironment(template, 'Fn', resolver)).toEqual({ QUEUE: QUEUE_URL, MODE: 'file', FIXED: 'x' });
  });

  it('needs exactly one function for the prefix, and a role of the template', () => {
    expect(() => functionPolicies(template, 'Nope', resolver)).toThrow(/found 0/);
    const imported: CfnTemplate = {
      Resources: {
        ...template.Resources,
        Fn1: { Type: 'AWS::Lambda::Function', Properties: { Role: 'arn:aws:iam::1:role/x' } },
      },
    };
    expect(() => functionPolicies(imported, 'Fn', resolver)).toThrow(/cannot be read/);
    const twice: CfnTemplate = { Resources: { ...template.Resources, Fn2: template.Resources.Fn1! } };
    expect(() => functionPolicies(twice, 'Fn', resolver)).toThrow(/found 2/);
  });
});
