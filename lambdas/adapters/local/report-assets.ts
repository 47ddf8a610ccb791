/**
 * The chart library report.html inlines (uPlot's minified IIFE build and stylesheet), read
 * from node_modules. The page itself is rendered by core/report/html.ts, which takes this text
 * as input so a bundled Lambda can carry it instead.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { ChartAssets } from '../../core/report/html';

const require = createRequire(import.meta.url);

let cached: ChartAssets | undefined;

export function loadChartAssets(): ChartAssets {
  cached ??= {
    chartJs: readFileSync(require.resolve('uplot/dist/uPlot.iife.min.js'), 'utf8'),
    chartCss: readFileSync(require.resolve('uplot/dist/uPlot.min.css'), 'utf8'),
  };
  return cached;
}
