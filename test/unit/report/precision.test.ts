/**
 * The pages' numbers: an estimate and its interval with the decimals the interval's width
 * supports (two significant digits of the width), the A and B p50 of the verdict table with
 * those of their difference, and a number with no interval with three significant digits.
 */
import { describe, expect, it } from 'vitest';
import { BUNDLED_CHART_ASSETS } from '../../../lambdas/adapters/bundled-chart-assets';
import { interval, num, signed } from '../../../lambdas/core/report/format';
import { decimalsForWidth, decimalsOf, fixed, formatNumber } from '../../../lambdas/core/report/precision';
import { renderReportHtml } from '../../../lambdas/core/report/report-page';
import { reportFixture } from '../../support/report-fixture';

describe('decimals from an interval', () => {
  it('gives the width two significant digits, never fewer than whole numbers', () => {
    expect(decimalsForWidth(0.003635)).toBe(4);
    expect(decimalsForWidth(0.073)).toBe(3);
    expect(decimalsForWidth(4.5)).toBe(1);
    expect(decimalsForWidth(9.99)).toBe(1);
    expect(decimalsForWidth(10)).toBe(0);
    expect(decimalsForWidth(49)).toBe(0);
    expect(decimalsForWidth(45_000)).toBe(0);
    expect(decimalsForWidth(1e-30)).toBe(12);
  });

  it('has none for no width: a missing bound, one point, not a number', () => {
    expect(decimalsForWidth(0)).toBeNull();
    expect(decimalsForWidth(null)).toBeNull();
    expect(decimalsForWidth(Number.NaN)).toBeNull();
    expect(decimalsOf({ ci_low: null, ci_high: 3 })).toBeNull();
    expect(decimalsOf({ ci_low: 2, ci_high: 2 })).toBeNull();
    expect(decimalsOf({ ci_low: 0.001, ci_high: 0.002 }, 100)).toBe(2);
  });
});

describe('intervals as the pages write them', () => {
  it('[−0.0004, +0.0032], not [−0.000395, +0.00324]', () => {
    expect(interval({ estimate: 0.00142, ci_low: -0.000395, ci_high: 0.00324 }, '')).toBe(
      '+0.0014 <span class="ci">[\u22120.0004, +0.0032]</span>',
    );
  });

  it('latencies in ms: whole where the interval is tens of ms wide, tenths where it is a few', () => {
    expect(interval({ estimate: 381.27, ci_low: 356.6, ci_high: 406.04 }, 'ms')).toBe(
      '+381 ms <span class="ci">[+357, +406]</span>',
    );
    expect(interval({ estimate: -26.3, ci_low: -27.68, ci_high: -24.93 }, 'ms')).toBe(
      '\u221226.3 ms <span class="ci">[\u221227.7, \u221224.9]</span>',
    );
    expect(interval({ estimate: 12_345.6, ci_low: 11_234.5, ci_high: 13_456.7 }, 'ms')).toBe(
      '+12,346 ms <span class="ci">[+11,235, +13,457]</span>',
    );
  });

  it('a bound that rounds to zero has no sign; a scaled interval (percentage points) rounds on its scaled width', () => {
    expect(interval({ estimate: 0.5, ci_low: 0.00001, ci_high: 1.2 }, '')).toBe(
      '+0.5 <span class="ci">[0.0, +1.2]</span>',
    );
    expect(interval({ estimate: 0.0224, ci_low: 0.0164, ci_high: 0.0284 }, 'pp', { scale: 100 })).toBe(
      '+2.2 pp <span class="ci">[+1.6, +2.8]</span>',
    );
  });

  it('without an interval: three significant digits, as before', () => {
    expect(interval({ estimate: 0.0123456, ci_low: null, ci_high: null }, 'ms')).toBe('+0.0123 ms');
    expect(num(20.994)).toBe('20.99');
    expect(num(0.5)).toBe('0.5');
    expect(num(1234.5)).toBe('1,235');
    expect(num(-3)).toBe('\u22123');
    expect(signed(0.00004, 2)).toBe('0.00');
    expect(fixed(-0.00004, 3)).toBe('0.000');
    expect(formatNumber(null)).toBe('\u2013');
  });
});

describe('the verdict table', () => {
  it('shows each row with the decimals its intervals support, A and B p50 with those of their difference', () => {
    const data = reportFixture({ names: ['a', 'b'], requests: 600, compare: true });
    const m = data.comparison!.comparisons[0]!.metrics.find((x) => x.tag === 'inter_token_latency')!;
    m.baseline.p50 = 20.99412;
    m.candidate.p50 = 20.98377;
    m.difference.p50 = { estimate: -0.0103, ci_low: -0.0466, ci_high: 0.0262 };
    m.relative_pct.p50 = { estimate: -0.0486, ci_low: -0.222, ci_high: 0.125 };
    const html = renderReportHtml(data, BUNDLED_CHART_ASSETS);
    const row = /<tr data-metric="inter_token_latency" class="metric-row">([\s\S]*?)<\/tr>/.exec(html)?.[1] ?? '';
    const cells = [...row.matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((c) =>
      (c[1] as string)
        .replace(/<[^>]+>/g, ' ')
        .replace(/\s+/g, ' ')
        .trim(),
    );
    expect(cells.slice(2, 6)).toEqual([
      '20.994',
      '20.984',
      '\u22120.010 [\u22120.047, +0.026]',
      '\u22120.05 % [\u22120.22, +0.13]',
    ]);
  });
});
