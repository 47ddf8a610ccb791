/**
 * The `npm run sim` command (sim/cli.ts) and its settings overrides: the JSON's promised
 * fields, the table, and bad input as a one-line error with exit code 2.
 */
import { describe, expect, it } from 'vitest';
import { run } from '../../../sim/cli';
import { applyOverrides, settingsFor, validateSettings } from '../../../sim/settings';

function cli(args: string[]): { code: number; out: string; err: string } {
  let out = '';
  let err = '';
  const code = run(args, (s) => (out += s), (s) => (err += s));
  return { code, out, err };
}

const BASE = ['--rate', '50', '--targets', '1', '--seconds', '10', '--latency-p50', '0.2', '--latency-p99', '1'];

describe('sim command', () => {
  it('prints the report as JSON on stdout and a table on stderr', () => {
    const { code, out, err } = cli([...BASE, '--seed', '3']);
    expect(code).toBe(0);
    const r = JSON.parse(out);
    for (const path of ['lateness_ms.p50', 'lateness_ms.p99', 'lateness_ms.max', 'expired', 'lost', 'throttled', 'peak_concurrency', 'cost_per_million_usd']) {
      const value = path.split('.').reduce((o, k) => (o as Record<string, unknown>)[k], r as unknown);
      expect(typeof value, path).toBe('number');
    }
    expect(r.fired).toBe(500);
    expect(r.simulation.seed).toBe(3);
    expect(err).toMatch(/^traffic +50\/s x 1 targets x 10 s = 500 requests/);
    expect(err).toMatch(/cost per million \$ +\d/);
  });

  it('--table prints only the table, on stdout', () => {
    const { code, out, err } = cli([...BASE, '--table']);
    expect(code).toBe(0);
    expect(out).toMatch(/^traffic/);
    expect(err).toBe('');
  });

  it.each([
    [['--rate', '50'], /required option '--targets <n>' not specified/],
    [[...BASE, '--account-concurrency', '0'], /--account-concurrency must be a whole number >= 1/],
    [[...BASE, '--set', 'aws.esm.nope=3'], /aws\.esm\.nope is not a setting/],
    [[...BASE, '--set', 'stack.fire.batchSize=many'], /stack\.fire\.batchSize takes a number/],
    [[...BASE, '--set', 'stack.latePolicy=sometimes'], /stack\.latePolicy must be one of fire, drop/],
    [[...BASE, '--set', 'stack.fire.batchSize=11'], /stack\.fire\.batchSize must be a whole number 1-10/],
    [[...BASE, '--latency-p50', '2', '--latency-p99', '1'], /p99 >= p50/],
    // The event source's ramp: at 0 a source would never grow, below 0 means nothing.
    [[...BASE, '--set', 'aws.esm.growthPerMinute=0'], /^sim: aws\.esm\.growthPerMinute must be a number > 0, invocations the event source adds a minute \(got 0\)\n$/],
    [[...BASE, '--set', 'aws.esm.growthPerMinute=-150'], /^sim: aws\.esm\.growthPerMinute must be a number > 0.*\(got -150\)\n$/],
    [[...BASE, '--set', 'aws.provisioned.growthPerMinute=0'], /aws\.provisioned\.growthPerMinute must be a number > 0/],
  ])('%j is refused in one line with exit code 2', (args, message) => {
    const { code, out, err } = cli(args);
    expect(code).toBe(2);
    expect(out).toBe('');
    expect(err).toMatch(message);
    expect(err.trim().split('\n')).toHaveLength(1);
  });
});

describe('settings overrides', () => {
  const { settings } = settingsFor({ ratePerTarget: 200, targets: 2, seconds: 60, latencyP50S: 1, latencyP99S: 2 });

  it('changes the leaves named, and only them', () => {
    const changed = applyOverrides(settings, ['aws.esm.growthPerMinute=1000', 'stack.fire.maxConcurrency=null', 'stack.eventSourceMode=provisioned']);
    expect(changed.aws.esm.growthPerMinute).toBe(1000);
    expect(changed.stack.fire.maxConcurrency).toBeNull();
    expect(changed.stack.eventSourceMode).toBe('provisioned');
    expect(settings.aws.esm.growthPerMinute).toBe(300);
    expect({ ...changed, aws: settings.aws, stack: settings.stack }).toEqual(settings);
  });

  it('reports every problem at once', () => {
    expect(() => applyOverrides(settings, ['a.b=1', 'seed=x', 'stack.leadS=null'])).toThrow(/a\.b is not a setting[\s\S]*seed takes a number[\s\S]*stack\.leadS takes a number/);
    expect(() => validateSettings({ ...settings, seed: -1, workload: { ...settings.workload, arrivals: 'burst' as 'even' } })).toThrow(/arrivals must be one of even, poisson[\s\S]*seed must be a finite number >= 0/);
  });
});
