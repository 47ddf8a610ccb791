/**
 * What every page script (report.html's, a schedule's trend page's) runs after defining its
 * charts: it draws every `.chart[data-chart]` with the function of its kind, writes a chart it
 * cannot draw's reason into the chart (the page stays readable), redraws on resize (debounced
 * to a frame) and sets data-charts-drawn when done (what the browser tests wait for). Without
 * the chart library (a page rendered with no assets) each chart says so, and the console stays
 * quiet: that is not a fault of the page. A live legend shows values only while a point is
 * under the cursor (quietLegend). Text is set only through textContent (uPlot does
 * too), so names from the data never become markup.
 */
import type uPlot from 'uplot';

/** The chart library: the global its own script element defines before the page script runs. */
export type ChartLibrary = typeof uPlot;

/** Draws one chart into `el`; throws with a reason a person can read when it cannot. */
export type DrawChart = (el: HTMLElement, lib: ChartLibrary) => uPlot;

function chartLibrary(): ChartLibrary | undefined {
  return (window as unknown as { uPlot?: ChartLibrary }).uPlot;
}

/** The page's embedded data: the JSON in `<script type="application/json" id="${id}">`. */
export function embeddedData<T>(id: string): T {
  return JSON.parse((document.getElementById(id) as HTMLElement).textContent as string) as T;
}

/**
 * A live legend shows each series' value under the cursor, and uPlot writes `--` for every
 * series while there is none: `ms: -- A: -- B: --` under every chart of a page nobody has
 * hovered yet. The chart element carries `legend-idle` while no point is under the cursor
 * (set here, kept by a setLegend hook), and the page's styles then show the series' names
 * only (page.ts).
 */
function quietLegend(el: HTMLElement, u: uPlot): void {
  const sync = () => el.classList.toggle('legend-idle', u.legend.idx === null || u.legend.idx === undefined);
  sync();
  (u.hooks.setLegend ??= []).push(sync);
}

export function drawCharts(draw: Record<string, DrawChart>): void {
  const charts: { el: HTMLElement; u: uPlot }[] = [];
  const lib = chartLibrary();
  document.querySelectorAll<HTMLElement>('.chart[data-chart]').forEach((el) => {
    try {
      const kind = el.dataset.chart as string;
      const drawOne = draw[kind];
      if (!drawOne) throw new Error('unknown chart ' + kind);
      if (lib === undefined) throw new Error('the chart library is not in this page');
      const u = drawOne(el, lib);
      quietLegend(el, u);
      charts.push({ el, u });
    } catch (err) {
      const p = document.createElement('p');
      p.className = 'chart-error';
      p.textContent = 'Chart not drawn: ' + (err && (err as Error).message);
      el.appendChild(p);
      if (lib !== undefined) console.error(err);
    }
  });

  let pending = 0;
  window.addEventListener('resize', () => {
    cancelAnimationFrame(pending);
    pending = requestAnimationFrame(() => {
      charts.forEach((c) => c.u.setSize({ width: Math.max(280, c.el.clientWidth), height: c.u.height }));
    });
  });
  document.documentElement.setAttribute('data-charts-drawn', String(charts.length));
}
