/**
 * report.html's charts over replay time: each target's metric and its schedule lag by
 * scheduled time. Many points: faint dots plus a bold line of their medians in equal time
 * windows, so the trend reads through the noise; few points: a line through them.
 */
import type uPlot from 'uplot';
import { hasValues, isNum } from '../shown';
import type { ChartLibrary } from './page-runtime';
import { alpha, baseOpts, METRICS, metricTag, type ReportPage } from './report-charts';

interface TimeSource {
  name: string;
  t: readonly (number | null)[];
  v: readonly (number | null)[];
}

const SMOOTH_ABOVE = 150;
const WINDOWS = 120;

/**
 * Series sharing one x axis without merging points: every point keeps its own x (times may
 * repeat), the other series are null there.
 */
function sparseJoin(
  sources: readonly { t: readonly (number | null)[]; v: readonly (number | null)[] }[],
): (number | null)[][] {
  const pts: [number, number, number][] = [];
  sources.forEach((s, k) => {
    for (let i = 0; i < s.t.length; i++) {
      const t = s.t[i];
      const v = s.v[i];
      if (isNum(t) && isNum(v)) pts.push([t, k, v]);
    }
  });
  pts.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const cols: (number | null)[][] = [pts.map((p) => p[0])];
  sources.forEach((_, k) => {
    cols.push(pts.map((p) => (p[1] === k ? p[2] : null)));
  });
  return cols;
}

function medianOf(a: number[]): number {
  a.sort((x, y) => x - y);
  const h = (a.length - 1) / 2;
  const lo = Math.floor(h);
  return (a[lo] as number) + ((a[Math.ceil(h)] as number) - (a[lo] as number)) * (h - lo);
}

function windowMedians(s: TimeSource, tMin: number, tMax: number): { t: number[]; v: number[] } {
  const w = (tMax - tMin) / WINDOWS;
  const bins: number[][] = [];
  const t: number[] = [];
  const v: number[] = [];
  for (let i = 0; i < s.t.length; i++) {
    const ti = s.t[i];
    const vi = s.v[i];
    if (!isNum(ti) || !isNum(vi)) continue;
    const k = w > 0 ? Math.min(WINDOWS - 1, Math.floor((ti - tMin) / w)) : 0;
    (bins[k] = bins[k] || []).push(vi);
  }
  for (let j = 0; j < WINDOWS; j++) {
    const bin = bins[j];
    if (bin) {
      t.push(w > 0 ? tMin + (j + 0.5) * w : tMin);
      v.push(medianOf(bin));
    }
  }
  return { t, v };
}

/** A chart's series: dots (drawn first, under the lines) and lines, and which line each dot series belongs to. */
function timeSeries(page: ReportPage, sources: readonly TimeSource[]) {
  let tMin = Infinity;
  let tMax = -Infinity;
  sources.forEach((s) =>
    s.t.forEach((t) => {
      if (isNum(t)) {
        tMin = Math.min(tMin, t);
        tMax = Math.max(tMax, t);
      }
    }),
  );
  type Drawn = { data: { t: readonly (number | null)[]; v: readonly (number | null)[] }; opts: uPlot.Series };
  const dots: Drawn[] = [];
  const lines: Drawn[] = [];
  const pairs: [number, number][] = [];
  sources.forEach((s) => {
    const color = page.colorOf(s.name);
    if (s.v.filter(isNum).length > SMOOTH_ABOVE) {
      pairs.push([dots.length, lines.length]);
      dots.push({
        data: s,
        opts: {
          label: s.name + ' (points)',
          stroke: color,
          paths: () => null,
          points: { show: true, space: 0, size: 3, width: 0, fill: alpha(color, 0.25) },
        },
      });
      lines.push({
        data: windowMedians(s, tMin, tMax),
        opts: { label: s.name, stroke: color, width: 2, spanGaps: true, points: { show: false } },
      });
    } else {
      lines.push({
        data: s,
        opts: {
          label: s.name,
          stroke: color,
          width: 1.5,
          spanGaps: true,
          points: { show: true, size: 4, fill: color },
        },
      });
    }
  });
  return { dots, lines, pairs };
}

function drawTimeSeries(
  page: ReportPage,
  el: HTMLElement,
  lib: ChartLibrary,
  sources: readonly TimeSource[],
  unit: string,
): uPlot {
  if (!sources.length) throw new Error('no series');
  const { dots, lines, pairs } = timeSeries(page, sources);
  // Hiding a line in the legend hides its dots too.
  const all = dots.concat(lines);
  const partner: Record<number, number> = {};
  pairs.forEach((p) => {
    partner[1 + dots.length + p[1]] = 1 + p[0];
  });
  let syncing = false;
  const o: uPlot.Options = {
    ...baseOpts(el, 260),
    legend: { live: false },
    scales: { x: { time: false } },
    series: [{ label: 's' } as uPlot.Series].concat(all.map((x) => x.opts)),
    axes: [{ label: 'seconds since schedule start' }, { label: unit, size: 64 }],
    hooks: {
      setSeries: [
        (u, i, opts) => {
          if (syncing || i == null || partner[i] == null || !opts || opts.show == null) return;
          syncing = true;
          u.setSeries(partner[i], { show: opts.show });
          syncing = false;
        },
      ],
    },
  };
  const u = new lib(o, sparseJoin(all.map((x) => x.data)) as uPlot.AlignedData, el);
  // The legend lists the x series only when live.
  const rows = u.root.querySelectorAll<HTMLElement>('.u-legend .u-series');
  const off = rows.length === u.series.length ? 0 : -1;
  for (let k = 1; k <= dots.length; k++) {
    const row = rows[k + off];
    if (row) row.style.display = 'none';
  }
  return u;
}

export function drawTime(page: ReportPage, el: HTMLElement, lib: ChartLibrary): uPlot {
  const tag = metricTag(el);
  const info = METRICS[tag];
  const sources = page.data.targets
    .filter((t) => hasValues(t.series.metrics[tag]))
    .map((t) => ({ name: t.summary.name, t: t.series.t, v: t.series.metrics[tag] as (number | null)[] }));
  return drawTimeSeries(page, el, lib, sources, info!.unit);
}

export function drawLag(page: ReportPage, el: HTMLElement, lib: ChartLibrary): uPlot {
  const sources = page.data.targets
    .filter((t) => hasValues(t.series.scheduleLagMs))
    .map((t) => ({ name: t.summary.name, t: t.series.t, v: t.series.scheduleLagMs }));
  return drawTimeSeries(page, el, lib, sources, 'ms');
}
