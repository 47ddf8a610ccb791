/**
 * report.html's distribution charts: each target's ECDF, and the ECDF of the paired differences
 * B - A, drawn as steps where values tie (ecdfSteps); legend values with the table's decimals.
 */
import type uPlot from 'uplot';
import type { ComparedMetricTag, Interval } from '../../compare/types';
import { MEAN_BAND_COLOR, P50_BAND_COLOR } from '../palette';
import { decimalsOf } from '../precision';
import { ecdfSources, hasValues, isNum, metricOf } from '../shown';
import type { ChartLibrary } from './page-runtime';
import { alpha, baseOpts, METRICS, metricTag, numValueWith, pctAxis, pctValue, type ReportPage } from './report-charts';

/** F(x) from 101 quantiles (0..100 %), linear between them; the highest rank among ties (F is right-continuous). */
function ecdfAt(q: readonly number[], x: number): number {
  const n = q.length;
  if (x < (q[0] as number)) return 0;
  if (x >= (q[n - 1] as number)) return 1;
  let lo = 0;
  let hi = n - 1;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if ((q[mid] as number) <= x) lo = mid;
    else hi = mid;
  }
  const span = (q[lo + 1] as number) - (q[lo] as number);
  const r = lo + (span > 0 ? (x - (q[lo] as number)) / span : 0);
  return r / (n - 1);
}

/** F just below x (its left limit): the lowest rank among ties. */
function ecdfBefore(q: readonly number[], x: number): number {
  const n = q.length;
  if (x <= (q[0] as number)) return 0;
  if (x > (q[n - 1] as number)) return 1;
  // q[lo] < x <= q[hi]
  let lo = 0;
  let hi = n - 1;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if ((q[mid] as number) < x) lo = mid;
    else hi = mid;
  }
  const span = (q[hi] as number) - (q[lo] as number);
  return (lo + (x - (q[lo] as number)) / span) / (n - 1);
}

function uniqueSorted(values: readonly unknown[]): number[] {
  const s = values.filter(isNum).sort((a, b) => a - b);
  return s.filter((v, i) => i === 0 || v !== s[i - 1]);
}

/**
 * The ECDFs of `qs` (each a distribution's quantiles) on one x column. Where a distribution
 * has tied values its ECDF jumps: x is listed twice, with F just below and at it, so the jump
 * is drawn as a vertical step, not as a slope from the previous x; a distribution of one value
 * is a single step (F 0 then 1), not an empty chart. Each line starts at 0 and ends at 1, a
 * little outside the values.
 */
export function ecdfSteps(qs: readonly (readonly number[])[]): { xs: number[]; ys: number[][] } {
  const unique = uniqueSorted(qs.flat());
  const first = unique[0] as number;
  const last = unique[unique.length - 1] as number;
  const pad = (last - first) * 0.04 || Math.abs(first) * 0.1 || 1;
  const xs = [first - pad];
  const ys = qs.map(() => [0]);
  for (const x of unique) {
    const before = qs.map((q) => ecdfBefore(q, x));
    const at = qs.map((q) => ecdfAt(q, x));
    if (before.some((b, k) => b !== at[k])) {
      xs.push(x);
      ys.forEach((y, k) => y.push(before[k] as number));
    }
    xs.push(x);
    ys.forEach((y, k) => y.push(at[k] as number));
  }
  xs.push(last + pad);
  ys.forEach((y) => y.push(1));
  return { xs, ys };
}

/** The decimals the verdict table shows `tag`'s p50s with (those of the first comparison's Δ p50), null without a comparison. */
function tableDecimals(page: ReportPage, tag: ComparedMetricTag): number | null {
  for (const c of page.comps) {
    const m = metricOf(c, tag);
    if (m) return decimalsOf(m.difference.p50);
  }
  return null;
}

export function drawEcdf(page: ReportPage, el: HTMLElement, lib: ChartLibrary): uPlot {
  const tag = metricTag(el);
  const info = METRICS[tag];
  const src = ecdfSources(page.data, tag).map((s) => ({ name: s.name, q: s.q.filter(isNum) }));
  if (!src.length) throw new Error('no distribution for ' + tag);
  const { xs, ys } = ecdfSteps(src.map((s) => s.q));
  const series: uPlot.Series[] = [{ label: info!.unit, value: numValueWith(tableDecimals(page, tag)) }];
  src.forEach((s) => {
    series.push({ label: s.name, stroke: page.colorOf(s.name), width: 2, value: pctValue, points: { show: false } });
  });
  const o: uPlot.Options = {
    ...baseOpts(el, 260),
    scales: { x: { time: false }, y: { auto: false, range: [0, 1] } },
    series,
    axes: [{ label: info!.name + ' (' + info!.unit + ')' }, pctAxis('requests \u2264 x')],
  };
  return new lib(o, [xs, ...ys] as uPlot.AlignedData, el);
}

function vline(lib: ChartLibrary, u: uPlot, x: number, color: string, width: number, dash: number[]): void {
  const px = u.valToPos(x, 'x', true);
  const ctx = u.ctx;
  ctx.save();
  ctx.strokeStyle = color;
  ctx.lineWidth = width * lib.pxRatio;
  ctx.setLineDash(dash.map((d) => d * lib.pxRatio));
  ctx.beginPath();
  ctx.moveTo(px, u.bbox.top);
  ctx.lineTo(px, u.bbox.top + u.bbox.height);
  ctx.stroke();
  ctx.restore();
}

/** The median's and the mean's interval, shaded, and their estimates, as lines. */
function intervalHooks(lib: ChartLibrary, marks: { iv: Interval; color: string }[]): uPlot.Hooks.Arrays {
  return {
    drawAxes: [
      (u) => {
        const ctx = u.ctx;
        marks.forEach((k) => {
          if (!isNum(k.iv.ci_low) || !isNum(k.iv.ci_high)) return;
          const x0 = u.valToPos(k.iv.ci_low, 'x', true);
          const x1 = u.valToPos(k.iv.ci_high, 'x', true);
          ctx.save();
          ctx.fillStyle = alpha(k.color, 0.16);
          ctx.fillRect(Math.min(x0, x1), u.bbox.top, Math.max(Math.abs(x1 - x0), lib.pxRatio), u.bbox.height);
          ctx.restore();
        });
      },
    ],
    draw: [
      (u) => {
        vline(lib, u, 0, '#6b7280', 1, [4, 4]);
        marks.forEach((k) => vline(lib, u, k.iv.estimate as number, k.color, 1.5, []));
      },
    ],
  };
}

export function drawDiff(page: ReportPage, el: HTMLElement, lib: ChartLibrary): uPlot {
  const tag = metricTag(el);
  const info = METRICS[tag];
  const c = page.comps[Number(el.dataset.comparison)];
  const m = c && metricOf(c, tag);
  if (!m || !hasValues(m.distribution.difference)) throw new Error('no differences for ' + tag);
  const q = (m.distribution.difference as (number | null)[]).filter(isNum);
  const { xs, ys } = ecdfSteps([q]);
  const marks = [
    { iv: m.difference.p50, color: P50_BAND_COLOR },
    { iv: m.difference.mean, color: MEAN_BAND_COLOR },
  ].filter((k) => k.iv && isNum(k.iv.estimate));
  const extra = [0];
  marks.forEach((k) =>
    [k.iv.estimate, k.iv.ci_low, k.iv.ci_high].forEach((v) => {
      if (isNum(v)) extra.push(v);
    }),
  );
  const o: uPlot.Options = {
    ...baseOpts(el, 260),
    scales: {
      x: {
        time: false,
        range: (_u, min, max) => {
          const lo = Math.min(...extra, min);
          const hi = Math.max(...extra, max);
          const pad = (hi - lo) * 0.04 || Math.abs(hi) * 0.1 || 1;
          return [lo - pad, hi + pad];
        },
      },
      y: { auto: false, range: [0, 1] },
    },
    series: [
      { label: 'B \u2212 A (' + info!.unit + ')', value: numValueWith(decimalsOf(m.difference.p50)) },
      {
        label: c.candidate + ' \u2212 ' + c.baseline,
        stroke: page.colorOf(c.candidate),
        width: 2,
        value: pctValue,
        points: { show: false },
      },
    ],
    axes: [{ label: 'B \u2212 A, ' + info!.name.toLowerCase() + ' (' + info!.unit + ')' }, pctAxis('pairs \u2264 x')],
    hooks: intervalHooks(lib, marks),
  };
  return new lib(o, [xs, ys[0] as number[]], el);
}
