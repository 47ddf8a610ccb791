/**
 * The chart library the Lambda bundles carry as text (adapters/bundled-chart-assets.ts,
 * generated) is the one the local CLI reads from node_modules: an upgrade of uplot without
 * regenerating fails here.
 */
import { expect, it } from 'vitest';
import { BUNDLED_CHART_ASSETS } from '../../../lambdas/adapters/bundled-chart-assets';
import { loadChartAssets } from '../../../lambdas/adapters/local/report-assets';

it('bundled chart assets equal node_modules/uplot (else: node scripts/bundle-chart-assets.mjs)', () => {
  const local = loadChartAssets();
  expect(BUNDLED_CHART_ASSETS.chartJs === local.chartJs, 'uPlot JS differs: node scripts/bundle-chart-assets.mjs').toBe(true);
  expect(BUNDLED_CHART_ASSETS.chartCss === local.chartCss, 'uPlot CSS differs: node scripts/bundle-chart-assets.mjs').toBe(true);
});
