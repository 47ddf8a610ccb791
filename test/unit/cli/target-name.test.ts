/**
 * One target-name rule (lambdas/core/target-name.ts) wherever a target is named: the
 * deployment config (runtime/config.ts), `replay --target NAME=URL` and `link --target`
 * accept and refuse the same names.
 */
import { describe, expect, it } from 'vitest';
import { isTargetName } from '../../../lambdas/core/target-name';
import { linkRequest } from '../../../lambdas/local/link';
import { targetsOf } from '../../../lambdas/local/replay/targets';
import { httpTargetConfigSchema } from '../../../lambdas/runtime/config';

const NAMES: [string, boolean][] = [
  ['A', true],
  ['baseline', true],
  ['vllm-0.6.3_fp8.b', true],
  ['9', true],
  ['a'.repeat(63), true],
  ['a'.repeat(64), false],
  ['', false],
  ['.hidden', false],
  ['-A', false],
  ['_A', false],
  ['a/b', false],
  ['a b', false],
  ['é', false],
  // The run folder's own files sit beside the target folders (issue 22, round 2, finding 1).
  ['report.html', false],
  ['comparison.json', false],
  ['ingest_report.json', false],
  ['Report.HTML', false],
  ['history.jsonl', false],
  ['export.csv', false],
  ['v1.json-b', true],
  ['json', true],
];

describe('target names', () => {
  it.each(NAMES)('%j: the rule, the deployment config, replay and link agree (%s)', (name, ok) => {
    expect(isTargetName(name)).toBe(ok);
    expect(httpTargetConfigSchema.safeParse({ name, kind: 'http', url: 'http://localhost:8000' }).success).toBe(ok);
    expect(typeof targetsOf({ target: [`${name}=http://localhost:8000`], targetName: 'target' }) !== 'string').toBe(ok);
    expect(typeof linkRequest({ run: 'file-1', target: name }) !== 'string').toBe(ok);
  });
});

describe('what replay says about a target name', () => {
  const message = (options: Parameters<typeof targetsOf>[0]) => targetsOf(options) as string;

  it.each(['report.html', 'comparison.json', 'ingest_report.json'])(
    'refuses %s, a file of the run folder, before anything is sent',
    (name) => {
      expect(
        message({ target: [`${name}=http://localhost:8000`, 'B=http://localhost:8001'], targetName: 'target' }),
      ).toBe(
        `target name "${name}" ends in ${name.slice(name.lastIndexOf('.'))}, like the run folder's own files ` +
          `(report.html, comparison.json...) beside the target folders (as NAME=URL, e.g. --target ` +
          `A=http://localhost:8000)`,
      );
      expect(message({ url: 'http://localhost:8000', targetName: name })).toMatch(
        new RegExp(`^--target-name "${name.replace('.', '\\.')}" ends in \\.`),
      );
    },
  );

  it('says the name is missing from --target URL, with the NAME=URL it needs', () => {
    expect(message({ target: ['http://host'], targetName: 'target' })).toBe(
      "--target http://host: the target's name is missing: --target NAME=URL, e.g. --target A=http://host",
    );
    // A URL whose query holds the first '=' has no name either.
    expect(message({ target: ['sagemaker:ep?region=eu-west-1'], targetName: 'target' })).toMatch(
      /^--target sagemaker:ep\?region=eu-west-1: the target's name is missing/,
    );
  });

  it.each(['127.0.0.1:18001', 'localhost:8000', '[::1]:8000'])('suggests http:// for %s', (url) => {
    expect(message({ url, targetName: 'target' })).toBe(
      `--url must be an http:// or https:// URL or sagemaker:<endpoint-name> (got ${url}; did you mean http://${url}?)`,
    );
  });

  it('suggests nothing for what no scheme would make a URL', () => {
    expect(message({ url: 'not a url', targetName: 'target' })).toBe(
      '--url must be an http:// or https:// URL or sagemaker:<endpoint-name> (got not a url)',
    );
    expect(message({ url: 'ftp://host', targetName: 'target' })).toBe(
      '--url must be an http:// or https:// URL or sagemaker:<endpoint-name> (got ftp://host)',
    );
  });
});
