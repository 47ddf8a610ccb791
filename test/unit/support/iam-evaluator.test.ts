/**
 * The IAM evaluator against AWS's documented rules, one table per rule. Every case names
 * the outcome AWS gives; a case that would pass with a permissive evaluator has a twin that
 * must be denied.
 */
import { describe, expect, it } from 'vitest';
import { iamCallsFor, type AwsCall } from '../../support/iam/aws-call-recorder';
import {
  evaluate,
  explain,
  requiredStatements,
  resourceMatches,
  unusedActions,
  unusedResources,
  type Decision,
  type PolicyStatement,
  type Request,
} from '../../support/iam/policy-evaluator';

const US = { region: 'us-east-1', partition: 'aws' };
const ACCOUNT = '123456789012';
const QUEUE_URL = `http://127.0.0.1:5000/${ACCOUNT}/replay`;
const QUEUE_ARN = `arn:aws:sqs:us-east-1:${ACCOUNT}:replay`;

const req = (action: string, resource: string, context: Record<string, string> = {}): Request => ({
  action,
  resource,
  context,
});
const allow = (
  Action: string | string[],
  Resource: string | string[],
  extra: Partial<PolicyStatement> = {},
): PolicyStatement => ({ Effect: 'Allow', Action, Resource, ...extra });
const deny = (
  Action: string | string[],
  Resource: string | string[],
  extra: Partial<PolicyStatement> = {},
): PolicyStatement => ({ Effect: 'Deny', Action, Resource, ...extra });

/** The single IAM request an SDK command is authorized as (via the recorder's mapping). */
function only(client: string, command: string, input: Record<string, unknown>): AwsCall {
  const calls = iamCallsFor(client, command, input, US);
  expect(calls).toHaveLength(1);
  return calls[0]!;
}

interface Case {
  name: string;
  statements: PolicyStatement[];
  request: Request;
  want: Decision;
}

function table(cases: Case[]): void {
  it.each(cases)('$name -> $want', ({ statements, request, want }) => {
    expect(evaluate(statements, request)).toBe(want);
  });
}

describe('evaluation logic: explicit deny wins, otherwise an allow is needed', () => {
  const get = req('s3:GetObject', 'arn:aws:s3:::results/runs/r1/x');
  table([
    { name: 'no statement at all', statements: [], request: get, want: 'implicit-deny' },
    {
      name: 'an allow for the action and resource',
      statements: [allow('s3:GetObject', 'arn:aws:s3:::results/runs/*')],
      request: get,
      want: 'allowed',
    },
    {
      name: 'an allow for another action only',
      statements: [allow('s3:PutObject', 'arn:aws:s3:::results/runs/*')],
      request: get,
      want: 'implicit-deny',
    },
    {
      name: 'an allow for another resource only',
      statements: [allow('s3:GetObject', 'arn:aws:s3:::results/hours/*')],
      request: get,
      want: 'implicit-deny',
    },
    {
      name: 'allow and a matching deny (deny listed last)',
      statements: [allow('s3:*', '*'), deny('s3:GetObject', 'arn:aws:s3:::results/runs/*')],
      request: get,
      want: 'explicit-deny',
    },
    {
      name: 'allow and a matching deny (deny listed first)',
      statements: [
        deny('s3:GetObject', 'arn:aws:s3:::results/*'),
        allow('s3:GetObject', 'arn:aws:s3:::results/runs/r1/x'),
      ],
      request: get,
      want: 'explicit-deny',
    },
    {
      name: 'a deny for another resource does not deny',
      statements: [allow('s3:GetObject', '*'), deny('s3:GetObject', 'arn:aws:s3:::other/*')],
      request: get,
      want: 'allowed',
    },
    {
      name: 'a deny alone is still no allow',
      statements: [deny('s3:PutObject', '*')],
      request: get,
      want: 'implicit-deny',
    },
  ]);
});

describe('Action and NotAction', () => {
  const get = req('s3:GetObject', 'arn:aws:s3:::b/k');
  table([
    {
      name: 'action names are case-insensitive',
      statements: [allow('S3:getobject', '*')],
      request: get,
      want: 'allowed',
    },
    { name: '* wildcard in an action', statements: [allow('s3:Get*', '*')], request: get, want: 'allowed' },
    {
      name: '? wildcard matches one character',
      statements: [allow('s3:Get?bject', '*')],
      request: get,
      want: 'allowed',
    },
    {
      name: '? does not match two characters',
      statements: [allow('s3:Ge?bject', '*')],
      request: get,
      want: 'implicit-deny',
    },
    {
      name: 'a prefix without a wildcard is not a match',
      statements: [allow('s3:Get', '*')],
      request: get,
      want: 'implicit-deny',
    },
    {
      name: 'an action list: any entry',
      statements: [allow(['sqs:SendMessage', 's3:GetObject'], '*')],
      request: get,
      want: 'allowed',
    },
    {
      name: 'the service prefix must match',
      statements: [allow('sqs:GetObject', '*')],
      request: get,
      want: 'implicit-deny',
    },
    {
      name: 'Allow NotAction: every other action is allowed',
      statements: [{ Effect: 'Allow', NotAction: 's3:DeleteObject*', Resource: '*' }],
      request: get,
      want: 'allowed',
    },
    {
      name: 'Allow NotAction: the listed action is not',
      statements: [{ Effect: 'Allow', NotAction: ['s3:DeleteObject*', 's3:GetObject'], Resource: '*' }],
      request: get,
      want: 'implicit-deny',
    },
    {
      name: 'Deny NotAction denies everything but the listed actions',
      statements: [allow('s3:*', '*'), { Effect: 'Deny', NotAction: 's3:PutObject', Resource: '*' }],
      request: get,
      want: 'explicit-deny',
    },
    {
      name: 'Deny NotAction leaves the listed action alone',
      statements: [allow('s3:*', '*'), { Effect: 'Deny', NotAction: ['s3:PutObject', 's3:GetObject'], Resource: '*' }],
      request: get,
      want: 'allowed',
    },
  ]);
});

describe('Resource and NotResource', () => {
  table([
    {
      name: 'resource ARNs are case-sensitive',
      statements: [allow('s3:GetObject', 'arn:aws:s3:::Results/runs/*')],
      request: req('s3:GetObject', 'arn:aws:s3:::results/runs/x'),
      want: 'implicit-deny',
    },
    {
      name: 'a wildcard in the middle of a resource matches across /',
      statements: [allow('s3:GetObject', 'arn:aws:s3:::results/runs/*/A/run_manifest.json')],
      request: req('s3:GetObject', 'arn:aws:s3:::results/runs/r1/sub/A/run_manifest.json'),
      want: 'allowed',
    },
    {
      name: 'a wildcard in the middle still needs the rest to match',
      statements: [allow('s3:GetObject', 'arn:aws:s3:::results/runs/*/A/run_manifest.json')],
      request: req('s3:GetObject', 'arn:aws:s3:::results/runs/r1/A/profile_export.jsonl'),
      want: 'implicit-deny',
    },
    {
      name: 'the bucket ARN does not cover its objects',
      statements: [allow('s3:GetObject', 'arn:aws:s3:::results')],
      request: req('s3:GetObject', 'arn:aws:s3:::results/runs/x'),
      want: 'implicit-deny',
    },
    {
      name: 'bucket/* does not cover the bucket itself',
      statements: [allow('s3:ListBucket', 'arn:aws:s3:::results/*')],
      request: req('s3:ListBucket', 'arn:aws:s3:::results'),
      want: 'implicit-deny',
    },
    {
      name: 'a * ending a segment expands beyond the colons',
      statements: [allow('sqs:SendMessage', 'arn:aws:sqs:us-east-1:*')],
      request: req('sqs:SendMessage', QUEUE_ARN),
      want: 'allowed',
    },
    {
      name: 'a * inside a segment stays within it',
      statements: [allow('s3:GetObject', 'arn:aws:s3:::results/a*z')],
      request: req('s3:GetObject', 'arn:aws:s3:::results/a:b:z'),
      want: 'implicit-deny',
    },
    {
      name: '?????? matches the six characters Secrets Manager appends',
      statements: [
        allow(
          'secretsmanager:GetSecretValue',
          `arn:aws:secretsmanager:us-east-1:${ACCOUNT}:secret:replay/key-a-??????`,
        ),
      ],
      request: req(
        'secretsmanager:GetSecretValue',
        `arn:aws:secretsmanager:us-east-1:${ACCOUNT}:secret:replay/key-a-AbC123`,
      ),
      want: 'allowed',
    },
    {
      name: '?????? does not match five',
      statements: [
        allow(
          'secretsmanager:GetSecretValue',
          `arn:aws:secretsmanager:us-east-1:${ACCOUNT}:secret:replay/key-a-??????`,
        ),
      ],
      request: req(
        'secretsmanager:GetSecretValue',
        `arn:aws:secretsmanager:us-east-1:${ACCOUNT}:secret:replay/key-a-AbC12`,
      ),
      want: 'implicit-deny',
    },
    {
      name: 'NotResource: any other resource',
      statements: [{ Effect: 'Allow', Action: 's3:GetObject', NotResource: 'arn:aws:s3:::secret/*' }],
      request: req('s3:GetObject', 'arn:aws:s3:::results/x'),
      want: 'allowed',
    },
    {
      name: 'NotResource: not the listed one',
      statements: [
        { Effect: 'Allow', Action: 's3:GetObject', NotResource: ['arn:aws:s3:::secret/*', 'arn:aws:s3:::results/*'] },
      ],
      request: req('s3:GetObject', 'arn:aws:s3:::results/x'),
      want: 'implicit-deny',
    },
  ]);

  it('"*" alone is every resource; other non-ARN patterns are refused', () => {
    expect(resourceMatches('*', 'arn:aws:s3:::anything/at/all')).toBe(true);
    expect(() => resourceMatches('results/*', 'arn:aws:s3:::results/x')).toThrow(/not an ARN pattern/);
  });
});

describe('Condition', () => {
  const listRuns = ['s3:ListBucket', 'arn:aws:s3:::results'] as const;
  const prefixLike = (...values: string[]): PolicyStatement =>
    allow('s3:ListBucket', 'arn:aws:s3:::results', { Condition: { StringLike: { 's3:prefix': values } } });
  table([
    {
      name: 'StringLike s3:prefix runs/* and prefix runs/r1/',
      statements: [prefixLike('runs/*')],
      request: req(...listRuns, { 's3:prefix': 'runs/r1/' }),
      want: 'allowed',
    },
    {
      name: 'StringLike s3:prefix runs/* and prefix hours/',
      statements: [prefixLike('runs/*')],
      request: req(...listRuns, { 's3:prefix': 'hours/' }),
      want: 'implicit-deny',
    },
    {
      name: 'StringLike s3:prefix runs/* and no prefix at all (key missing)',
      statements: [prefixLike('runs/*')],
      request: req(...listRuns),
      want: 'implicit-deny',
    },
    {
      name: 'StringLike values are OR-ed',
      statements: [prefixLike('runs/*', 'hours/*')],
      request: req(...listRuns, { 's3:prefix': 'hours/h/A/' }),
      want: 'allowed',
    },
    {
      name: 'StringLike is case-sensitive',
      statements: [prefixLike('runs/*')],
      request: req(...listRuns, { 's3:prefix': 'RUNS/' }),
      want: 'implicit-deny',
    },
    {
      name: 'StringLike ? is one character',
      statements: [prefixLike('run?/')],
      request: req(...listRuns, { 's3:prefix': 'runs/' }),
      want: 'allowed',
    },
    {
      name: 'StringEquals exact',
      statements: [allow(...listRuns, { Condition: { StringEquals: { 's3:prefix': 'runs/' } } })],
      request: req(...listRuns, { 's3:prefix': 'runs/x' }),
      want: 'implicit-deny',
    },
    {
      name: 'StringEquals does not treat * as a wildcard',
      statements: [allow(...listRuns, { Condition: { StringEquals: { 's3:prefix': 'runs/*' } } })],
      request: req(...listRuns, { 's3:prefix': 'runs/x' }),
      want: 'implicit-deny',
    },
    {
      name: 'condition key names are case-insensitive',
      statements: [allow(...listRuns, { Condition: { StringEquals: { 'S3:Prefix': 'runs/' } } })],
      request: req(...listRuns, { 's3:prefix': 'runs/' }),
      want: 'allowed',
    },
    {
      name: 'StringNotEquals with the key missing is true',
      statements: [allow(...listRuns, { Condition: { StringNotEquals: { 's3:prefix': 'secret/' } } })],
      request: req(...listRuns),
      want: 'allowed',
    },
    {
      name: 'StringNotEquals with several values is NOR: one equal value fails it',
      statements: [allow(...listRuns, { Condition: { StringNotEquals: { 's3:prefix': ['a/', 'b/'] } } })],
      request: req(...listRuns, { 's3:prefix': 'b/' }),
      want: 'implicit-deny',
    },
    {
      name: 'StringNotEquals with several values is NOR: no equal value passes',
      statements: [allow(...listRuns, { Condition: { StringNotEquals: { 's3:prefix': ['a/', 'b/'] } } })],
      request: req(...listRuns, { 's3:prefix': 'c/' }),
      want: 'allowed',
    },
    {
      name: 'StringNotLike with the key missing is true',
      statements: [deny(...listRuns, { Condition: { StringNotLike: { 's3:prefix': 'runs/*' } } }), allow(...listRuns)],
      request: req(...listRuns),
      want: 'explicit-deny',
    },
    {
      name: 'StringNotLike matching value is false',
      statements: [
        deny(...listRuns, { Condition: { StringNotLike: { 's3:prefix': ['runs/*', 'hours/*'] } } }),
        allow(...listRuns),
      ],
      request: req(...listRuns, { 's3:prefix': 'hours/x/' }),
      want: 'allowed',
    },
    {
      name: 'keys of one operator are AND-ed',
      statements: [allow(...listRuns, { Condition: { StringLike: { 's3:prefix': 'runs/*', 's3:delimiter': '/' } } })],
      request: req(...listRuns, { 's3:prefix': 'runs/' }),
      want: 'implicit-deny',
    },
    {
      name: 'operators are AND-ed',
      statements: [
        allow(...listRuns, {
          Condition: { StringLike: { 's3:prefix': 'runs/*' }, StringEquals: { 's3:max-keys': '10' } },
        }),
      ],
      request: req(...listRuns, { 's3:prefix': 'runs/', 's3:max-keys': '10' }),
      want: 'allowed',
    },
    {
      name: 'operators are AND-ed (one false)',
      statements: [
        allow(...listRuns, {
          Condition: { StringLike: { 's3:prefix': 'runs/*' }, StringEquals: { 's3:max-keys': '10' } },
        }),
      ],
      request: req(...listRuns, { 's3:prefix': 'runs/', 's3:max-keys': '1000' }),
      want: 'implicit-deny',
    },
    {
      name: 'Bool: a TLS-only deny hits an insecure request',
      statements: [
        allow('s3:GetObject', '*'),
        deny('s3:*', '*', { Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
      ],
      request: req('s3:GetObject', 'arn:aws:s3:::b/k', { 'aws:SecureTransport': 'false' }),
      want: 'explicit-deny',
    },
    {
      name: 'Bool: the same deny spares a TLS request',
      statements: [
        allow('s3:GetObject', '*'),
        deny('s3:*', '*', { Condition: { Bool: { 'aws:SecureTransport': false } } }),
      ],
      request: req('s3:GetObject', 'arn:aws:s3:::b/k', { 'aws:SecureTransport': 'true' }),
      want: 'allowed',
    },
    {
      name: 'Bool: with the key missing the condition is false',
      statements: [allow('s3:GetObject', '*', { Condition: { Bool: { 'aws:SecureTransport': 'true' } } })],
      request: req('s3:GetObject', 'arn:aws:s3:::b/k'),
      want: 'implicit-deny',
    },
    {
      name: 'ArnLike: per component, with wildcards',
      statements: [
        allow('sqs:SendMessage', '*', { Condition: { ArnLike: { 'aws:SourceArn': 'arn:aws:s3:::capture-*' } } }),
      ],
      request: req('sqs:SendMessage', QUEUE_ARN, { 'aws:SourceArn': 'arn:aws:s3:::capture-bucket' }),
      want: 'allowed',
    },
    {
      name: 'ArnEquals: the account component must match',
      statements: [
        allow('sqs:SendMessage', '*', {
          Condition: { ArnEquals: { 'aws:SourceArn': `arn:aws:lambda:us-east-1:${ACCOUNT}:function:fire` } },
        }),
      ],
      request: req('sqs:SendMessage', QUEUE_ARN, {
        'aws:SourceArn': 'arn:aws:lambda:us-east-1:210987654321:function:fire',
      }),
      want: 'implicit-deny',
    },
    {
      name: 'ArnLike: a wildcard does not reach into another component',
      statements: [
        allow('sqs:SendMessage', '*', { Condition: { ArnLike: { 'aws:SourceArn': 'arn:aws:lambda:us-*' } } }),
      ],
      request: req('sqs:SendMessage', QUEUE_ARN, {
        'aws:SourceArn': `arn:aws:lambda:us-east-1:${ACCOUNT}:function:fire`,
      }),
      want: 'implicit-deny',
    },
    {
      name: '...IfExists: a missing key passes',
      statements: [allow(...listRuns, { Condition: { StringLikeIfExists: { 's3:prefix': 'runs/*' } } })],
      request: req(...listRuns),
      want: 'allowed',
    },
    {
      name: '...IfExists: a present key is still tested',
      statements: [allow(...listRuns, { Condition: { StringLikeIfExists: { 's3:prefix': 'runs/*' } } })],
      request: req(...listRuns, { 's3:prefix': 'other/' }),
      want: 'implicit-deny',
    },
    {
      name: 'Null true: the key must be absent',
      statements: [allow(...listRuns, { Condition: { Null: { 's3:prefix': 'true' } } })],
      request: req(...listRuns, { 's3:prefix': 'runs/' }),
      want: 'implicit-deny',
    },
  ]);

  it.each([
    [
      'an operator it does not implement',
      { NumericLessThan: { 's3:max-keys': '10' } },
      /NumericLessThan is not implemented/,
    ],
    ['a set operator', { 'ForAnyValue:StringLike': { 's3:prefix': 'runs/*' } }, /set operators/],
    ['a policy variable', { StringLike: { 's3:prefix': '${aws:username}/*' } }, /policy variables/],
  ])('throws on %s, even for a request the statement does not otherwise match', (_, Condition, error) => {
    const statements = [allow('s3:ListBucket', 'arn:aws:s3:::results', { Condition })];
    expect(() => evaluate(statements, req('s3:GetObject', 'arn:aws:s3:::elsewhere/k'))).toThrow(error);
  });
});

describe('malformed statements are refused, not guessed at', () => {
  it.each([
    [
      'a Principal (resource policies only)',
      { Effect: 'Allow', Principal: '*', Action: 's3:GetObject', Resource: '*' },
      /Principal/,
    ],
    ['no Resource', { Effect: 'Allow', Action: 's3:GetObject' }, /Resource and NotResource/],
    [
      'Action and NotAction',
      { Effect: 'Allow', Action: 's3:GetObject', NotAction: 's3:PutObject', Resource: '*' },
      /Action and NotAction/,
    ],
    ['an unknown Effect', { Effect: 'allow', Action: 's3:GetObject', Resource: '*' }, /Effect/],
    [
      'an unresolved intrinsic',
      { Effect: 'Allow', Action: 's3:GetObject', Resource: { 'Fn::GetAtt': ['B', 'Arn'] } },
      /unresolved/,
    ],
    [
      'a policy variable in a resource',
      { Effect: 'Allow', Action: 's3:GetObject', Resource: 'arn:aws:s3:::b/${aws:username}/*' },
      /policy variables/,
    ],
  ])('%s', (_, statement, error) => {
    expect(() => evaluate([statement as unknown as PolicyStatement], req('s3:GetObject', 'arn:aws:s3:::b/k'))).toThrow(
      error,
    );
  });

  it('a secret recorded by name must be resolved to its ARN first', () => {
    const call = only('SecretsManagerClient', 'GetSecretValueCommand', { SecretId: 'replay/key-a' });
    expect(call.resourceIsName).toBe(true);
    expect(() => evaluate([allow('secretsmanager:GetSecretValue', '*')], call)).toThrow(/resolve it first/);
  });
});

describe('AWS facts, through the recorder mapping and the evaluator', () => {
  it('SendMessageBatch needs sqs:SendMessage; a grant of sqs:SendMessageBatch alone does not authorize it', () => {
    const batch = only('SQSClient', 'SendMessageBatchCommand', { QueueUrl: QUEUE_URL, Entries: [] });
    expect(batch).toMatchObject({ action: 'sqs:SendMessage', resource: QUEUE_ARN });
    expect(evaluate([allow('sqs:SendMessage', QUEUE_ARN)], batch)).toBe('allowed');
    expect(evaluate([allow('sqs:SendMessageBatch', QUEUE_ARN)], batch)).toBe('implicit-deny');
  });

  it('DeleteMessageBatch needs sqs:DeleteMessage', () => {
    const batch = only('SQSClient', 'DeleteMessageBatchCommand', { QueueUrl: QUEUE_URL, Entries: [] });
    expect(evaluate([allow('sqs:DeleteMessage', QUEUE_ARN)], batch)).toBe('allowed');
    expect(evaluate([allow('sqs:DeleteMessageBatch', QUEUE_ARN)], batch)).toBe('implicit-deny');
  });

  it('ListObjectsV2 is s3:ListBucket on the bucket, limited by a StringLike s3:prefix condition', () => {
    const policy = [
      allow('s3:ListBucket', 'arn:aws:s3:::results', {
        Condition: { StringLike: { 's3:prefix': ['runs/*', 'hours/*'] } },
      }),
    ];
    const list = (Prefix?: string) =>
      only('S3Client', 'ListObjectsV2Command', { Bucket: 'results', ...(Prefix !== undefined ? { Prefix } : {}) });
    expect(evaluate(policy, list('runs/r1/A/_results/'))).toBe('allowed');
    expect(evaluate(policy, list('hours/2026-04-29T00/A/_runs/'))).toBe('allowed');
    expect(evaluate(policy, list('datacapture/'))).toBe('implicit-deny');
    expect(evaluate(policy, list())).toBe('implicit-deny'); // no prefix: the key is missing
    // s3:ListObjectsV2 is not an IAM action: granting it authorizes nothing.
    expect(evaluate([allow('s3:ListObjectsV2', '*')], list('runs/'))).toBe('implicit-deny');
  });

  it('HeadObject is authorized as s3:GetObject on the object', () => {
    const head = only('S3Client', 'HeadObjectCommand', { Bucket: 'results', Key: 'runs/r1/_run.json' });
    expect(evaluate([allow('s3:GetObject', 'arn:aws:s3:::results/runs/*')], head)).toBe('allowed');
    expect(evaluate([allow('s3:HeadObject', '*')], head)).toBe('implicit-deny');
  });
});

describe('explain, unusedActions, unusedResources, requiredStatements', () => {
  const get = req('s3:GetObject', 'arn:aws:s3:::results/runs/r1/x');
  const list = req('s3:ListBucket', 'arn:aws:s3:::results', { 's3:prefix': 'runs/' });
  const send = req('sqs:SendMessage', QUEUE_ARN);
  const statements: PolicyStatement[] = [
    allow(['s3:GetObject*', 's3:DeleteObject*', 's3:List*'], ['arn:aws:s3:::results', 'arn:aws:s3:::results/runs/*']),
    allow(['sqs:SendMessage', 'sqs:GetQueueUrl'], QUEUE_ARN),
    allow('sqs:SendMessage', 'arn:aws:sqs:us-east-1:*'),
    deny('s3:DeleteBucket', '*'),
  ];

  it('explain names the statements that apply', () => {
    expect(explain(statements, send)).toEqual({ allowedBy: [1, 2], deniedBy: [] });
    expect(explain(statements, req('s3:DeleteBucket', 'arn:aws:s3:::results'))).toEqual({
      allowedBy: [],
      deniedBy: [3],
    });
  });

  it('unusedActions lists each action pattern no call needed, per statement; deny statements are not grants', () => {
    expect(unusedActions(statements, [get, list, send])).toEqual([
      { statement: 0, action: 's3:DeleteObject*' },
      { statement: 1, action: 'sqs:GetQueueUrl' },
    ]);
    // A call of the right action on a resource the statement does not cover does not use it.
    expect(unusedActions([allow('s3:GetObject', 'arn:aws:s3:::results/hours/*')], [get])).toEqual([
      { statement: 0, action: 's3:GetObject' },
    ]);
    expect(unusedActions([{ Effect: 'Allow', NotAction: 'iam:*', Resource: '*', Sid: 'Broad' }], [])).toEqual([
      { statement: 0, sid: 'Broad', action: 'NotAction "iam:*"' },
    ]);
  });

  it('unusedResources lists each resource pattern no call needed', () => {
    expect(unusedResources(statements, [get, send])).toEqual([{ statement: 0, resource: 'arn:aws:s3:::results' }]);
  });

  it('requiredStatements: a grant duplicated elsewhere is not required; a unique one is', () => {
    const needs = requiredStatements(statements, [get, list, send]);
    expect(needs.map((n) => n.required)).toEqual([true, false, false, false]);
    expect(needs[0]!.deniedWithout).toEqual([get, list]);
    // Without statement 2, statement 1 alone grants the send: now it is the required one.
    expect(requiredStatements(statements.slice(0, 2), [send]).map((n) => n.required)).toEqual([false, true]);
  });

  it('removing the statement a call depends on denies it', () => {
    expect(evaluate(statements, get)).toBe('allowed');
    expect(evaluate(statements.slice(1), get)).toBe('implicit-deny');
  });
});
