/**
 * report.html's capacity charts: one objective against the factor (goodput, error rate, or an
 * SLO metric's p99 and p50), a line per target through its steps, the objective as a dashed
 * horizontal line and each target's sustained factor as a dotted vertical one in its colour.
 * Factors grow geometrically, so the x axis is log2.
 */
import type uPlot from 'uplot';
import type { CapacityDocument, CapacityStep } from '../../capacity/types';
import { METRIC_BY_TAG } from '../../metrics/registry';
import { isNum } from '../shown';
import type { ChartLibrary } from './page-runtime';
import { baseOpts, numValue, pctAxis, pctValue, type ReportPage } from './report-charts';

const OBJECTIVE_COLOR = '#6b7280';

/** A factor on the axis and in the legend: `2x`, `1.5x`, `0.125x`. */
const factorLabel = (v: unknown) => (isNum(v) ? String(Number(v.toPrecision(4))) + 'x' : '--');

/** What a chart plots of a step, and the objective line's value. */
interface Plotted {
  values: { label: string; of: (s: CapacityStep) => number | null; width: number }[];
  objective: number;
  share: boolean;
  unit: string;
}

function plotted(doc: CapacityDocument, metric: string): Plotted {
  if (metric === 'goodput')
    return {
      values: [{ label: 'goodput', of: (s) => s.goodput, width: 2 }],
      objective: doc.objectives.min_goodput,
      share: true,
      unit: 'share of requests',
    };
  if (metric === 'error_rate')
    return {
      values: [{ label: 'error rate', of: (s) => s.error_rate, width: 2 }],
      objective: doc.objectives.max_error_rate,
      share: true,
      unit: 'share of requests',
    };
  const threshold = doc.objectives.goodput[metric];
  if (!isNum(threshold)) throw new Error('no objective on ' + metric);
  return {
    values: [
      { label: 'p99', of: (s) => s.slo_metrics[metric]?.p99 ?? null, width: 2 },
      { label: 'p50', of: (s) => s.slo_metrics[metric]?.p50 ?? null, width: 1 },
    ],
    objective: threshold,
    share: false,
    unit: METRIC_BY_TAG.get(metric)?.unit ?? '',
  };
}

function line(
  lib: ChartLibrary,
  u: uPlot,
  from: [number, number],
  to: [number, number],
  color: string,
  dash: number[],
): void {
  const ctx = u.ctx;
  ctx.save();
  ctx.strokeStyle = color;
  ctx.lineWidth = 2 * lib.pxRatio;
  ctx.setLineDash(dash.map((d) => d * lib.pxRatio));
  ctx.beginPath();
  ctx.moveTo(from[0], from[1]);
  ctx.lineTo(to[0], to[1]);
  ctx.stroke();
  ctx.restore();
}

/** The objective (horizontal, dashed) and each target's sustained factor (vertical, dotted). */
function marks(lib: ChartLibrary, page: ReportPage, doc: CapacityDocument, objective: number): uPlot.Hooks.Arrays {
  return {
    draw: [
      (u) => {
        const { left, top, width, height } = u.bbox;
        // Whole pixels: a 2 px line on a pixel boundary is drawn solid, not smeared over three rows.
        const y = Math.round(u.valToPos(objective, 'y', true));
        if (y >= top && y <= top + height) line(lib, u, [left, y], [left + width, y], OBJECTIVE_COLOR, [6, 4]);
        for (const t of doc.targets) {
          if (t.sustained_factor === null) continue;
          const x = Math.round(u.valToPos(t.sustained_factor, 'x', true));
          if (x >= left && x <= left + width) line(lib, u, [x, top], [x, top + height], page.colorOf(t.name), [2, 3]);
        }
      },
    ],
  };
}

export function drawCapacity(page: ReportPage, el: HTMLElement, lib: ChartLibrary): uPlot {
  const doc = page.data.capacity;
  if (!doc) throw new Error('no capacity search in this report');
  const metric = el.dataset.metric as string;
  const p = plotted(doc, metric);
  const xs = [...new Set(doc.targets.flatMap((t) => t.steps.map((s) => s.factor)))].sort((a, b) => a - b);
  if (xs.length === 0) throw new Error('no step was run');
  const series: uPlot.Series[] = [{ label: 'factor', value: (_u, v) => factorLabel(v) }];
  const cols: (number | null)[][] = [xs];
  for (const t of doc.targets) {
    const byFactor = new Map(t.steps.map((s) => [s.factor, s]));
    for (const v of p.values) {
      cols.push(
        xs.map((x) => {
          const step = byFactor.get(x);
          return step ? v.of(step) : null;
        }),
      );
      const color = page.colorOf(t.name);
      series.push({
        label: p.values.length > 1 ? `${t.name} ${v.label}` : t.name,
        stroke: color,
        width: v.width,
        spanGaps: true,
        value: p.share ? pctValue : numValue,
        points: { show: true, size: v.width > 1 ? 6 : 4, fill: color },
      });
    }
  }
  const include = [p.objective];
  const o: uPlot.Options = {
    ...baseOpts(el, 260),
    scales: {
      x: { time: false, distr: 3, log: 2 },
      y: {
        range: (_u, min, max) => {
          const lo = Math.min(0, ...include, isNum(min) ? min : 0);
          const hi = Math.max(...include, isNum(max) ? max : 1);
          return [lo, hi + (hi - lo) * 0.06 || 1];
        },
      },
    },
    series,
    axes: [
      { label: 'factor of the captured traffic', values: (_u, ticks) => ticks.map(factorLabel) },
      p.share ? pctAxis(p.unit) : { label: p.unit, size: 64 },
    ],
    hooks: marks(lib, page, doc, p.objective),
  };
  return new lib(o, cols as uPlot.AlignedData, el);
}
