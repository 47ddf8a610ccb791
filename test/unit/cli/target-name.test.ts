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
];

describe('target names', () => {
  it.each(NAMES)('%j: the rule, the deployment config, replay and link agree (%s)', (name, ok) => {
    expect(isTargetName(name)).toBe(ok);
    expect(httpTargetConfigSchema.safeParse({ name, kind: 'http', url: 'http://localhost:8000' }).success).toBe(ok);
    expect(typeof targetsOf({ target: [`${name}=http://localhost:8000`], targetName: 'target' }) !== 'string').toBe(ok);
    expect(typeof linkRequest({ run: 'file-1', target: name }) !== 'string').toBe(ok);
  });
});
