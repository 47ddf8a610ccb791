/**
 * A schedule's trend page script (bundled into TREND_PAGE_SCRIPT by
 * scripts/bundle-page-scripts.ts): draws every trend chart from the data embedded as JSON in
 * #trend-data. x: each run's scheduled time (epoch s), one slot per run; a series is null at a
 * run that has no value (an empty run): a gap, not a line across it. After drawing, each chart
 * records its series' point counts in data-points (what a test reads).
 */
import type uPlot from 'uplot';
import type { Verdict } from '../../compare/types';
import { isNum } from '../shown';
import type { TrendRun } from '../trend';
import { hoverTime, TIME_INCRS, timeAxisTitle, timeTickLabels } from '../trend-axis';
import { fmt } from './numbers';
import { drawCharts, embeddedData, type ChartLibrary } from './page-runtime';

/** What renderTrendHtml embeds. */
interface TrendPageData {
  names: string[];
  metrics: string[];
  runs: TrendRun[];
  colors: string[];
  verdictColors: Record<string, string>;
}

const data = embeddedData<TrendPageData>('trend-data');
const xs = data.runs.map((r) => Date.parse(r.scheduled_time) / 1000);
const timed = xs.filter(Number.isFinite);
const first = timed.length > 0 ? Math.min(...timed) : 0;
const last = timed.length > 0 ? Math.max(...timed) : 0;

function colorOf(name: string): string {
  const i = data.names.indexOf(name);
  return data.colors[(i < 0 ? 0 : i) % data.colors.length] as string;
}

function when(t: unknown): string {
  return isNum(t) ? hoverTime(t) : '--';
}

/** p50 (solid) and p90 (dashed) of each target over the runs, for the series that have a value. */
function trendSeries(tag: string): { cols: (number | null)[][]; series: uPlot.Series[]; points: number[] } {
  const cols: (number | null)[][] = [xs];
  const series: uPlot.Series[] = [{ label: 'scheduled (UTC)', value: (_u, v) => when(v) }];
  const points: number[] = [];
  data.names.forEach((name) => {
    (['p50', 'p90'] as const).forEach((stat) => {
      const ys = data.runs.map((r) => {
        const t = r.targets[name];
        const m = t && t.metrics[tag];
        return m && isNum(m[stat]) ? m[stat] : null;
      });
      if (!ys.some(isNum)) return;
      cols.push(ys);
      points.push(ys.filter(isNum).length);
      series.push({
        label: name + ' ' + stat,
        stroke: colorOf(name),
        width: stat === 'p50' ? 2 : 1,
        dash: stat === 'p50' ? undefined : [6, 4],
        spanGaps: false,
        value: (_u, v) => fmt(v),
        points: { show: true, size: stat === 'p50' ? 9 : 6, fill: colorOf(name) },
      });
    });
  });
  return { cols, series, points };
}

/** Each run's mark above the plot: a grey dashed line for an empty run, else a marker per verdict (worse: a triangle). */
function verdictMarks(lib: ChartLibrary, verdicts: (Verdict | null)[][]): (u: uPlot) => void {
  return (u) => {
    const ctx = u.ctx;
    const r = lib.pxRatio;
    data.runs.forEach((run, i) => {
      const x = u.valToPos(xs[i] as number, 'x', true);
      if (x < u.bbox.left || x > u.bbox.left + u.bbox.width) return;
      if (run.status === 'empty') {
        ctx.save();
        ctx.strokeStyle = '#9ca3af';
        ctx.lineWidth = r;
        ctx.setLineDash([3 * r, 3 * r]);
        ctx.beginPath();
        ctx.moveTo(x, u.bbox.top);
        ctx.lineTo(x, u.bbox.top + u.bbox.height);
        ctx.stroke();
        ctx.restore();
        return;
      }
      (verdicts[i] as (Verdict | null)[]).forEach((v, k) => {
        if (!v) return;
        const y = u.bbox.top - (8 + 10 * k) * r;
        const s = 5 * r;
        ctx.save();
        ctx.fillStyle = data.verdictColors[v] || '#e5e7eb';
        ctx.beginPath();
        if (v === 'worse') {
          ctx.moveTo(x, y - s);
          ctx.lineTo(x + s, y + s);
          ctx.lineTo(x - s, y + s);
          ctx.closePath();
        } else ctx.arc(x, y, s * 0.8, 0, 2 * Math.PI);
        ctx.fill();
        ctx.restore();
      });
    });
  };
}

function drawTrend(el: HTMLElement, lib: ChartLibrary): uPlot {
  const tag = el.dataset.metric as string;
  const { cols, series, points } = trendSeries(tag);
  if (cols.length < 2) throw new Error('no values for ' + tag);
  const verdicts = data.runs.map((r) =>
    r.comparisons.map((c) => {
      let m = null;
      for (let i = 0; i < c.metrics.length; i++) if (c.metrics[i]?.tag === tag) m = c.metrics[i];
      return m ? m.verdict : null;
    }),
  );
  const pad = last > first ? (last - first) * 0.04 : 3600;
  const o: uPlot.Options = {
    width: Math.max(280, el.clientWidth),
    height: 280,
    cursor: { drag: { x: true, y: false } },
    legend: { live: true },
    padding: [22, 12, 0, 0],
    scales: { x: { time: false, range: (_u, min, max) => [min - pad, max + pad] } },
    series,
    axes: [
      {
        label: timeAxisTitle(first, last),
        incrs: TIME_INCRS,
        values: (_u, ticks) => timeTickLabels(ticks, last - first),
        space: 90,
      },
      { label: el.dataset.unit || '', size: 64 },
    ],
    hooks: { draw: [verdictMarks(lib, verdicts)] },
  };
  const u = new lib(o, cols as uPlot.AlignedData, el);
  el.setAttribute('data-points', JSON.stringify(points));
  el.setAttribute('data-slots', String(xs.length));
  return u;
}

drawCharts({ trend: drawTrend });
