/**
 * Every setting of the simulator has a range it can run (sim/setting-ranges.ts RANGES), validated in
 * one place: each numeric setting has one, a value just outside it is refused in one line
 * naming the setting, its range and why, and the simulator runs each bound to the end with a
 * report that holds no NaN or Infinity (issue 32, finding 9: values in range that crashed, hung
 * or answered NaN).
 */
import { describe, expect, it } from 'vitest';
import { simulate } from '../../../sim/engine';
import { report } from '../../../sim/report';
import { applyOverrides } from '../../../sim/overrides';
import { ConfigurationError, exitCodeOf, isFinal } from '../../../lambdas/core/errors';
import { describeRange, RANGES, SettingsError, validateSettings, type SettingRange } from '../../../sim/setting-ranges';
import { settingsFor } from '../../../sim/settings';
import { deployable } from '../../../sim/stack-check';

const { settings: BASE, problems: BASE_PROBLEMS } = settingsFor({
  ratePerTarget: 10,
  targets: 1,
  seconds: 10,
  latencyP50S: 0.1,
  latencyP99S: 0.5,
});

function leaves(node: unknown, path = ''): [string, unknown][] {
  if (node !== null && typeof node === 'object')
    return Object.entries(node).flatMap(([k, v]) => leaves(v, path ? `${path}.${k}` : k));
  return [[path, node]];
}

const QUANTILES = ['minMs', 'p50Ms', 'p90Ms', 'p99Ms', 'p999Ms', 'maxMs'];

/**
 * `path=value`, with the settings that must agree with it moved along (a p99 not below its median, quantiles in
 * order), and a capture short enough to stay small.
 */
function overridesAt(path: string, value: number): string[] {
  const set = [`${path}=${value}`];
  if (path === 'workload.latencyP50S') set.push(`workload.latencyP99S=${Math.max(value, BASE.workload.latencyP99S)}`);
  if (path === 'workload.latencyP99S') set.push(`workload.latencyP50S=${Math.min(value, BASE.workload.latencyP50S)}`);
  if (path === 'aws.s3.requestMs') set.push(`aws.s3.requestP99Ms=${Math.max(value, BASE.aws.s3.requestP99Ms)}`);
  if (path === 'aws.s3.requestP99Ms') set.push(`aws.s3.requestMs=${Math.min(value, BASE.aws.s3.requestMs)}`);
  if (path.startsWith('handler.ownLateness.'))
    for (const q of QUANTILES) if (`handler.ownLateness.${q}` !== path) set.push(`handler.ownLateness.${q}=${value}`);
  // A day at 10/s is 864,000 requests: the longest capture at a rate that keeps it to a few hundred.
  if (path === 'workload.seconds' && value > 1000) set.push('workload.ratePerTarget=0.01');
  return set;
}

function bounds(r: SettingRange): number[] {
  const low = r.above ? (r.whole ? r.min + 1 : r.min + 1e-3) : r.min;
  return [low, r.max];
}

function outside(r: SettingRange): number[] {
  const below = r.above ? r.min : r.whole ? r.min - 1 : r.min - 1e-3;
  return [below, r.whole ? r.max + 1 : r.max * 1.001 + 1e-3, ...(r.whole ? [(r.min + r.max) / 2 + 0.5] : [])].filter(
    (v) => !(r.whole && Number.isInteger(v) && v >= r.min && v <= r.max),
  );
}

describe('a refused setting', () => {
  it("is the hierarchy's configuration error: final, a usage error (exit 2)", () => {
    const error = new SettingsError('rate: must be > 0');
    expect(error).toBeInstanceOf(ConfigurationError);
    expect(isFinal(error)).toBe(true);
    expect(exitCodeOf(error)).toBe(2);
  });
});

describe('the ranges of the settings', () => {
  it('every numeric setting has a range, and the defaults are in theirs', () => {
    const numeric = leaves(BASE)
      .filter(([, v]) => typeof v === 'number' || v === null)
      .map(([p]) => p);
    expect(numeric.filter((p) => !RANGES[p])).toEqual([]);
    expect(Object.keys(RANGES).filter((p) => !numeric.includes(p))).toEqual([]);
    expect(() => validateSettings(BASE)).not.toThrow();
  });

  it.each(Object.entries(RANGES))(
    '%s: a value outside its range is refused in one line naming it, its range and why',
    (path, r) => {
      for (const v of outside(r)) {
        const s = applyOverrides(BASE, overridesAt(path, v));
        let message = '';
        try {
          validateSettings(s);
        } catch (e) {
          message = (e as Error).message;
        }
        expect(message, `${path}=${v}`).toContain(`${path}`);
        expect(message, `${path}=${v}`).toContain(`must be ${describeRange(r)}: ${r.why} (got ${v})`);
        expect(
          message.split('\n').filter((l) => l.startsWith(path)),
          `${path}=${v}`,
        ).toHaveLength(1);
      }
    },
  );

  it.each(Object.entries(RANGES))(
    '%s: the simulator runs each bound of its range to the end, with a report free of NaN',
    (path, r) => {
      for (const v of bounds(r)) {
        const s = applyOverrides(BASE, overridesAt(path, v));
        validateSettings(s);
        const d = deployable(s, BASE_PROBLEMS);
        const json = JSON.stringify(report(simulate(d.settings), d.problems, 0));
        expect(json, `${path}=${v}`).not.toMatch(/NaN|Infinity/);
      }
    },
  );
});
