/**
 * `cdk synth` as a user runs it: offline, with no AWS credentials, on the defaults in
 * cdk.json (the run's one synthesis, which test/integration/bundles.test.ts also reads:
 * sharedSynthesis); then cfn-lint on the template (required under CI=true, skipped with a
 * line without it).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/processes';
import { CDK_CLI, SYNTH_TEST_TIMEOUT_MS, SYNTH_TIMEOUT_MS, sharedSynthesis } from '../support/synth';

const out = mkdtempSync(join(tmpdir(), 'cdk-out-'));
const env: NodeJS.ProcessEnv = { ...process.env, AWS_EC2_METADATA_DISABLED: 'true', CDK_DISABLE_VERSION_CHECK: '1' };
for (const k of [
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
  'AWS_SESSION_TOKEN',
  'AWS_PROFILE',
  'CDK_DEFAULT_ACCOUNT',
  'CDK_DEFAULT_REGION',
])
  delete env[k];
const cfnLint = spawnSync('sh', ['-c', 'command -v cfn-lint'], { encoding: 'utf8' }).stdout.trim();

describe('cdk synth', () => {
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  it(
    'works offline with no credentials, and the template passes cfn-lint',
    async () => {
      // Throws with cdk's output when it exits non-zero (or bundles in Docker).
      const { outdir } = await sharedSynthesis();
      const template = join(outdir, 'CaptureReplay.template.json');
      expect(existsSync(template)).toBe(true);
      if (!cfnLint) {
        if (process.env.CI === 'true') throw new Error('cfn-lint not found (pip install cfn-lint): required in CI');
        console.warn('[skipped] cfn-lint not found: pip install cfn-lint');
        return;
      }
      const lint = spawnSync(cfnLint, [template], { cwd: REPO_ROOT, encoding: 'utf8' });
      expect(lint.stdout + lint.stderr).toBe('');
      expect(lint.status).toBe(0);
    },
    SYNTH_TEST_TIMEOUT_MS,
  );

  it(
    'stops on a wrong configuration with every problem and no stack trace',
    () => {
      const file = join(out, 'bad-config.json');
      writeFileSync(
        file,
        JSON.stringify({
          captureBucket: 'my-captures',
          leadSecond: 30,
          targets: [{ name: 'A', url: 'ftp://models.example.com', apiKeySecrt: 'k' }],
        }),
      );
      const synth = spawnSync(
        CDK_CLI,
        ['synth', '--quiet', '--no-notices', '-c', `configFile=${file}`, '-o', join(out, 'bad')],
        { cwd: REPO_ROOT, env, encoding: 'utf8', timeout: SYNTH_TIMEOUT_MS },
      );
      expect(synth.status).not.toBe(0);
      expect(synth.stderr).toContain(`invalid deployment configuration in configFile ${file}:`);
      expect(synth.stderr).toContain('- targets.0.url: url must start with http:// or https:// (got "ftp:")');
      expect(synth.stderr).toContain('- targets.0.apiKeySecrt: unknown setting; did you mean `apiKeySecret`?');
      expect(synth.stderr).toContain('- leadSecond: unknown setting; did you mean `leadSeconds`?');
      expect(synth.stderr).not.toMatch(/^\s+at /m);
    },
    SYNTH_TEST_TIMEOUT_MS,
  );

  it(
    "names the stack after the configuration's stackName, so one account holds one stack per endpoint",
    () => {
      const file = join(out, 'named-config.json');
      writeFileSync(
        file,
        JSON.stringify({
          stackName: 'Replay-llama-70b',
          captureBucket: 'my-captures',
          targets: [{ name: 'A', url: 'https://a.example.com' }],
        }),
      );
      // `cdk ls` runs the app as synth does, without bundling the functions.
      const ls = spawnSync(CDK_CLI, ['ls', '--no-notices', '-c', `configFile=${file}`], {
        cwd: REPO_ROOT,
        env,
        encoding: 'utf8',
        timeout: SYNTH_TIMEOUT_MS,
      });
      expect(ls.status, ls.stderr.slice(-2000)).toBe(0);
      expect(ls.stdout.trim().split('\n')).toEqual(['Replay-llama-70b']);
    },
    SYNTH_TEST_TIMEOUT_MS,
  );

  it('carries a rule that stops a deploy with placeholder settings, naming them', async () => {
    const { outdir } = await sharedSynthesis();
    const template = JSON.parse(readFileSync(join(outdir, 'CaptureReplay.template.json'), 'utf8')) as {
      Rules?: Record<string, { Assertions: { AssertDescription: string }[] }>;
    };
    expect(template.Rules?.ConfiguredBeforeDeploy?.Assertions[0]?.AssertDescription).toContain(
      'set captureBucket and targets[].url',
    );
  });
});
