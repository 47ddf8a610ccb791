/**
 * Issue 32, items 2 and 8: what the deployment configuration refuses before anything is
 * synthesized, one line each. Credentials that the template, synth's output and the
 * functions' environment would show in clear (a password or a token in a target URL, an API
 * key pasted as apiKeySecret); numbers out of their ranges, refused before the sizing runs on
 * them (it looped for ever on leadSeconds 1e308 or slotSeconds 1e-300, and threw a RangeError
 * on requestTimeoutSeconds 1e9); a configuration that is not an object of settings. In
 * process for the messages, and through `cdk synth` as a user meets them.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DeploymentConfigError, loadDeploymentConfig, parseDeploymentConfig } from '../../lib/config';
import { REPO_ROOT } from '../support/processes';
import { CDK_CLI, offlineSynthEnv } from '../support/synth';

const work = mkdtempSync(join(tmpdir(), 'cr-config-refusals-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const base = { captureBucket: 'my-captures', targets: [{ name: 'A', url: 'https://a.example.com' }] };

/** The problem lines of a refused configuration (without the first line), or a failure naming what happened instead. */
function refusal(raw: unknown): string[] {
  try {
    parseDeploymentConfig(raw);
  } catch (error) {
    if (!(error instanceof DeploymentConfigError)) throw error;
    return error.message.split('\n').slice(1);
  }
  throw new Error(`expected ${JSON.stringify(raw)} to be refused`);
}

describe('credentials in the deployment configuration (issue 32 item 2)', () => {
  const USE_A_SECRET = 'put the key in a Secrets Manager secret and name it in apiKeySecret (sent as a bearer token)';

  it('refuses a target URL holding a password or a query token, naming the parameter, never the value', () => {
    const lines = refusal({
      ...base,
      targets: [
        { name: 'A', url: 'https://replay:hunter2@a.example.com:8443/v1' },
        { name: 'B', url: 'https://b.example.com/base?token=tok-123&region=eu&X-Amz-Signature=sig-456' },
      ],
    });
    expect(lines).toEqual([
      `- captureReplay.targets.0.url: holds a user name or password (user:password@), which the template ` +
        `would show in clear: remove it; ${USE_A_SECRET}`,
      `- captureReplay.targets.1.url: holds a credential in its query (token=..., X-Amz-Signature=...), ` +
        `which the template would show in clear: remove it; ${USE_A_SECRET}`,
    ]);
    for (const url of [
      'https://a.example.com/?api_key=k',
      'https://a.example.com/?apikey=k',
      'https://a.example.com/?access_token=k',
      'https://a.example.com/?sig=k',
      'https://a.example.com/?password=k',
      'https://a.example.com/?client_secret=k',
    ]) {
      expect(refusal({ ...base, targets: [{ name: 'A', url }] }), url).toHaveLength(1);
    }
    // A query without a credential is a URL like any other.
    expect(() =>
      parseDeploymentConfig({
        ...base,
        targets: [{ name: 'A', url: 'https://a.example.com/base?region=eu&deployment=blue' }],
      }),
    ).not.toThrow();
  });

  it('refuses an API key pasted as apiKeySecret, and what no secret name or ARN can be; takes names and ARNs', () => {
    const secret = (apiKeySecret: string) => ({
      ...base,
      targets: [{ name: 'A', url: 'https://a.example.com', apiKeySecret }],
    });
    const keyLike = (why: string) =>
      `- captureReplay.targets.0.apiKeySecret: looks like an API key (${why}), not a Secrets Manager ` +
      `secret's name or ARN; its value is not shown: put the key in a secret (aws secretsmanager ` +
      `create-secret --name replay/my-key --secret-string ...) and give the secret's name here`;
    expect(refusal(secret('sk-live-4f9a8b7c6d5e4f3a'))).toEqual([keyLike('it starts with sk-')]);
    expect(refusal(secret('hf_AbCdEfGhIjKlMnOpQrStUvWxYz012345'))).toEqual([keyLike('it starts with hf_')]);
    expect(refusal(secret('9f86d081884c7d659a2feaa0c55ad015a3bf4f1b'))).toEqual([
      keyLike('a random run of 32 letters and digits or more'),
    ]);
    expect(refusal(secret('Bearer abc def'))).toEqual([
      "- captureReplay.targets.0.apiKeySecret: is not a Secrets Manager secret's name (1-512 ASCII letters, " +
        'digits and / _ + = . @ -) or ARN; its value is not shown: put the API key in a secret and give the ' +
        "secret's name or ARN here",
    ]);
    expect(refusal(secret('arn:aws:secretsmanager:us-east-1:123:secret:x'))).toEqual([
      '- captureReplay.targets.0.apiKeySecret: is not a Secrets Manager secret ARN ' +
        "(arn:aws:secretsmanager:<region>:<account>:secret:<name>); its value is not shown: give the secret's ARN or name",
    ]);
    for (const good of [
      'replay/candidate-key',
      'prod/openai_key+v2=a.b@c',
      'arn:aws:secretsmanager:eu-west-1:123456789012:secret:replay/key-AbCdEf',
      'rds!cluster-1a96bebc-86c1',
    ]) {
      expect(() => parseDeploymentConfig(secret(good)), good).not.toThrow();
    }
    // Never echoed, whatever else is wrong.
    const all = refusal({
      ...base,
      leadSeconds: 1,
      targets: [
        { name: 'A', url: 'https://u:hunter2@a.example.com/?token=tok-123', apiKeySecret: 'sk-live-4f9a8b7c6d5e4f3a' },
      ],
    }).join('\n');
    expect(all).not.toMatch(/hunter2|tok-123|4f9a8b7c6d5e4f3a/);
  });
});

// The values on which the sizing never ended (leadSeconds 1e308, slotSeconds 1e-300, amplify
// 1e308, a negative peakLatencyMedianSeconds) are tried through `cdk synth` below, in a process
// of its own: here, a regression would hang the test worker.
describe('numbers out of their ranges (issue 32 item 8)', () => {
  it.each([
    ['leadSeconds', 301, 'must be a whole number from 5 to 300 (got 301)'],
    ['leadSeconds', 20.5, 'must be a whole number from 5 to 300 (got 20.5)'],
    ['slotSeconds', 0.05, 'must be a number from 0.1 to 300 (got 0.05)'],
    ['requestTimeoutSeconds', 1e9, 'must be a whole number from 1 to 600 (got 1000000000)'],
    ['lagSeconds', -1e308, 'must be a whole number from 60 to 86400 (got -1e+308)'],
    ['graceSeconds', '120', 'must be a whole number from 10 to 3600 (got "120")'],
    ['peakRequestsPerSecond', 0, 'must be a number above 0 and at most 10000 (got 0)'],
    ['peakLatencySeconds', 1e308, 'must be a number above 0 and at most 600 (got 1e+308)'],
    ['peakLatencyMedianSeconds', 601, 'must be a number above 0 and at most 600 (got 601)'],
    ['amplify', 1001, 'must be a number in (0, 1000] (got 1001)'],
    [
      'lateToleranceMs',
      1e308,
      'must be a whole number from 0 to 3600000 (got 1e+308): an hour; graceSeconds drops later requests anyway',
    ],
    ['maxInFlightPerShard', 1e308, 'must be a whole number from 1 to 1000000 (got 1e+308)'],
    ['accountConcurrency', 1e308, 'must be a whole number from 1 to 1000000 (got 1e+308)'],
    ['maxFireConcurrency', 1e9, 'must be a whole number from 2 to 1000 (got 1000000000)'],
    ['secretsMaxAgeSeconds', 3601, 'must be a whole number from 0 to 3600 (got 3601)'],
    ['workingFilesExpireDays', 1e308, 'must be a whole number from 2 to 3650 (got 1e+308)'],
    ['resultsExpireDays', 1e308, 'must be a whole number from 1 to 36500 (got 1e+308)'],
    [
      'logRetentionDays',
      1e308,
      'must be a whole number from 1 to 3653 (got 1e+308): ten years, the longest CloudWatch Logs keeps',
    ],
  ])('%s: %s is refused in one line naming the range', (key, value, message) => {
    const started = performance.now();
    expect(refusal({ ...base, [key]: value })).toEqual([`- captureReplay.${key}: ${message}`]);
    // The sizing does not run on it: no grid of 1e9 / 0.05 points, no loop over 1e308 s.
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it('the rules across settings wait for the settings themselves: no second line from a value already refused', () => {
    expect(
      refusal({ ...base, mode: 'mirror', lagSeconds: 60, leadSeconds: 301, peakLatencyMedianSeconds: 1e9 }),
    ).toEqual([
      '- captureReplay.leadSeconds: must be a whole number from 5 to 300 (got 301)',
      '- captureReplay.peakLatencyMedianSeconds: must be a number above 0 and at most 600 (got 1000000000)',
    ]);
    // Each setting valid on its own: the cross-setting rules still speak.
    expect(refusal({ ...base, leadSeconds: 240, slotSeconds: 60, requestTimeoutSeconds: 600 })).toEqual([
      '- captureReplay.requestTimeoutSeconds: leadSeconds + slotSeconds + requestTimeoutSeconds = 900 s: at ' +
        'most 840 s fit in one fire invocation',
    ]);
  });

  it('a configFile holding null, a list or a number is refused, not taken for the defaults', () => {
    for (const [text, held] of [
      ['null', 'null'],
      ['[]', 'a list'],
      ['42', 'a number'],
    ] as const) {
      const file = join(work, `held-${held.replace(' ', '-')}.json`);
      writeFileSync(file, text);
      expect(() => loadDeploymentConfig((key) => (key === 'configFile' ? file : undefined))).toThrow(
        new DeploymentConfigError(
          `invalid deployment configuration in configFile ${file}: it holds ${held}, not an object of ` +
            `settings: write them as {"captureBucket": "...", "targets": [...]} (docs/deploy.md#configuration)`,
        ),
      );
    }
    // No configuration at all is the defaults, as before.
    expect(loadDeploymentConfig(() => undefined).leadSeconds).toBe(20);
  });
});

describe('cdk synth on such a configuration', () => {
  /** A `cdk synth` a user runs on `config`: its exit code (null: killed at the time limit) and stderr. */
  function synth(name: string, config: string): { status: number | null; stderr: string; stdout: string } {
    const file = join(work, `${name}.json`);
    writeFileSync(file, config);
    // A minute: a refusal takes about 2 CPU-seconds; before, leadSeconds 1e308 ran for more than 200 s.
    const run = spawnSync(
      CDK_CLI,
      ['synth', '--quiet', '--no-notices', '-c', `configFile=${file}`, '-o', join(work, `${name}-out`)],
      { cwd: REPO_ROOT, env: offlineSynthEnv(), encoding: 'utf8', timeout: 60_000 },
    );
    return { status: run.status, stderr: run.stderr, stdout: run.stdout };
  }
  const problems = (stderr: string) =>
    stderr.split('\n').filter((l) => l.startsWith('- ') || l.startsWith('invalid deployment configuration'));

  it('refuses extreme numbers at once, one line each, with no stack trace', () => {
    const hang = synth(
      'extreme',
      JSON.stringify({ leadSeconds: 1e308, slotSeconds: 1e-300, requestTimeoutSeconds: 1e9, amplify: 1e308 }),
    );
    expect(hang.status, hang.stderr.slice(-1000)).toBe(1);
    expect(problems(hang.stderr)).toEqual([
      `invalid deployment configuration in configFile ${join(work, 'extreme.json')}:`,
      '- leadSeconds: must be a whole number from 5 to 300 (got 1e+308)',
      '- slotSeconds: must be a number from 0.1 to 300 (got 1e-300)',
      '- amplify: must be a number in (0, 1000] (got 1e+308)',
      '- requestTimeoutSeconds: must be a whole number from 1 to 600 (got 1000000000)',
    ]);
    // Without requestTimeoutSeconds 1e9, whose RangeError came first: the loops that did not end.
    const loops = synth(
      'loops',
      JSON.stringify({ leadSeconds: 1e308, slotSeconds: 1e-300, peakLatencyMedianSeconds: -1 }),
    );
    expect(loops.status, loops.stderr.slice(-1000)).toBe(1);
    expect(problems(loops.stderr).slice(1)).toEqual([
      '- leadSeconds: must be a whole number from 5 to 300 (got 1e+308)',
      '- slotSeconds: must be a number from 0.1 to 300 (got 1e-300)',
      '- peakLatencyMedianSeconds: must be a number above 0 and at most 600 (got -1)',
    ]);
    expect(hang.stderr).not.toMatch(/RangeError|^\s+at /m);
    const empty = synth('null', 'null');
    expect(empty.status).toBe(1);
    expect(problems(empty.stderr)).toEqual([
      `invalid deployment configuration in configFile ${join(work, 'null.json')}: it holds null, not an ` +
        `object of settings: write them as {"captureBucket": "...", "targets": [...]} ` +
        `(docs/deploy.md#configuration)`,
    ]);
  }, 240_000);

  it('refuses credentials without printing them, and writes no template', () => {
    const run = synth(
      'credentials',
      JSON.stringify({
        ...base,
        targets: [
          {
            name: 'A',
            url: 'https://replay:hunter2@a.example.com/?token=tok-123',
            apiKeySecret: 'sk-live-4f9a8b7c6d5e4f3a',
          },
        ],
      }),
    );
    expect(run.status).toBe(1);
    expect(problems(run.stderr).map((l) => l.split(':')[0])).toEqual([
      'invalid deployment configuration in configFile ' + join(work, 'credentials.json'),
      '- targets.0.url',
      '- targets.0.apiKeySecret',
    ]);
    expect(run.stdout + run.stderr).not.toMatch(/hunter2|tok-123|4f9a8b7c6d5e4f3a/);
  }, 120_000);
});
