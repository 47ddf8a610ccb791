/**
 * The moto shims change only what moto reads differently from AWS: batch SQS actions get
 * their batch names wherever the single name is covered (Allow, Deny and NotAction alike),
 * and nothing else in a statement moves.
 */
import { describe, expect, it } from 'vitest';
import { withMotoBatchShim, withoutConditions } from '../../support/iam/moto-iam';
import type { PolicyStatement } from '../../support/iam/policy-evaluator';

const Q = 'arn:aws:sqs:us-east-1:123456789012:replay';

describe('withMotoBatchShim', () => {
  it.each<[string, PolicyStatement, PolicyStatement]>([
    [
      'an Allow of SendMessage gains SendMessageBatch',
      { Effect: 'Allow', Action: 'sqs:SendMessage', Resource: Q },
      { Effect: 'Allow', Action: ['sqs:SendMessage', 'sqs:SendMessageBatch'], Resource: Q },
    ],
    [
      'the consumer actions gain their batch names',
      {
        Effect: 'Allow',
        Action: ['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:ChangeMessageVisibility'],
        Resource: Q,
      },
      {
        Effect: 'Allow',
        Action: [
          'sqs:ReceiveMessage',
          'sqs:DeleteMessage',
          'sqs:ChangeMessageVisibility',
          'sqs:DeleteMessageBatch',
          'sqs:ChangeMessageVisibilityBatch',
        ],
        Resource: Q,
      },
    ],
    [
      'a Deny of SendMessage denies the batch too',
      { Effect: 'Deny', Action: 'sqs:SendMessage', Resource: '*' },
      { Effect: 'Deny', Action: ['sqs:SendMessage', 'sqs:SendMessageBatch'], Resource: '*' },
    ],
    [
      'a NotAction excluding SendMessage excludes the batch too',
      { Effect: 'Allow', NotAction: 'sqs:SendMessage', Resource: '*' },
      { Effect: 'Allow', NotAction: ['sqs:SendMessage', 'sqs:SendMessageBatch'], Resource: '*' },
    ],
    [
      'a wildcard that already covers the batch name is left alone',
      { Effect: 'Allow', Action: 'sqs:Send*', Resource: Q },
      { Effect: 'Allow', Action: ['sqs:Send*'], Resource: Q },
    ],
    [
      'S3 object statements are untouched',
      { Effect: 'Allow', Action: ['s3:GetObject'], Resource: 'arn:aws:s3:::b/*' },
      { Effect: 'Allow', Action: ['s3:GetObject'], Resource: 'arn:aws:s3:::b/*' },
    ],
    [
      "s3:ListBucket gains moto's name for HeadBucket",
      { Effect: 'Allow', Action: 's3:ListBucket', Resource: 'arn:aws:s3:::b' },
      { Effect: 'Allow', Action: ['s3:ListBucket', 's3:HeadBucket'], Resource: 'arn:aws:s3:::b' },
    ],
    [
      'conditions and resources stay as they are',
      {
        Effect: 'Allow',
        Action: 'sqs:SendMessage',
        Resource: [Q],
        Condition: { Bool: { 'aws:SecureTransport': 'true' } },
      },
      {
        Effect: 'Allow',
        Action: ['sqs:SendMessage', 'sqs:SendMessageBatch'],
        Resource: [Q],
        Condition: { Bool: { 'aws:SecureTransport': 'true' } },
      },
    ],
  ])('%s', (_, statement, want) => {
    expect(withMotoBatchShim([statement])).toEqual([want]);
  });

  it('does not change its input', () => {
    const statement: PolicyStatement = { Effect: 'Allow', Action: ['sqs:SendMessage'], Resource: Q };
    withMotoBatchShim([statement]);
    expect(statement.Action).toEqual(['sqs:SendMessage']);
  });
});

describe('withoutConditions', () => {
  it('drops Condition and keeps the rest', () => {
    expect(
      withoutConditions([
        {
          Effect: 'Allow',
          Action: 's3:ListBucket',
          Resource: 'arn:aws:s3:::b',
          Condition: { StringLike: { 's3:prefix': 'runs/*' } },
        },
      ]),
    ).toEqual([{ Effect: 'Allow', Action: 's3:ListBucket', Resource: 'arn:aws:s3:::b' }]);
  });
});
