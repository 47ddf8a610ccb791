/**
 * report.html's script (bundled into REPORT_PAGE_SCRIPT by scripts/bundle-page-scripts.ts):
 * draws every chart of the page from the data embedded as JSON in #report-data.
 */
import { colorOf, comparisonsOf } from '../shown';
import type { ReportData } from '../types';
import { drawCharts, embeddedData } from './page-runtime';
import { drawCapacity } from './report-capacity';
import type { ReportPage } from './report-charts';
import { drawDiff, drawEcdf } from './report-ecdf';
import { drawLag, drawTime } from './report-time';

const data = embeddedData<ReportData>('report-data');
const page: ReportPage = { data, comps: comparisonsOf(data.comparison), colorOf: (name) => colorOf(data, name) };

drawCharts({
  ecdf: (el, lib) => drawEcdf(page, el, lib),
  diff: (el, lib) => drawDiff(page, el, lib),
  time: (el, lib) => drawTime(page, el, lib),
  lag: (el, lib) => drawLag(page, el, lib),
  capacity: (el, lib) => drawCapacity(page, el, lib),
});
