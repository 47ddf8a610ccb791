/**
 * The chart library every page carries (adapters/bundled-chart-assets.ts, generated as text so
 * the Lambda bundles and the CLI inline the same bytes) is uplot's as installed: an upgrade of
 * uplot without regenerating fails here.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { expect, it } from 'vitest';
import { BUNDLED_CHART_ASSETS } from '../../../lambdas/adapters/bundled-chart-assets';

const require = createRequire(import.meta.url);

it('bundled chart assets equal node_modules/uplot (else: node scripts/bundle-chart-assets.mjs)', () => {
  const js = readFileSync(require.resolve('uplot/dist/uPlot.iife.min.js'), 'utf8');
  const css = readFileSync(require.resolve('uplot/dist/uPlot.min.css'), 'utf8');
  expect(BUNDLED_CHART_ASSETS.chartJs === js, 'uPlot JS differs: node scripts/bundle-chart-assets.mjs').toBe(true);
  expect(BUNDLED_CHART_ASSETS.chartCss === css, 'uPlot CSS differs: node scripts/bundle-chart-assets.mjs').toBe(true);
});
