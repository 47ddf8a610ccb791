/**
 * The pages' escaping and number formatting: every string that comes from the data goes
 * through escapeHtml; numbers read the same in every table (en-US grouping, a true minus sign,
 * an en dash for no value).
 */
import { COMPARED_METRICS, type ComparedMetricTag, type Interval, type Verdict } from '../compare/types';
import { METRIC_NAMES, VERDICT_LABELS } from './labels';

/** Text and attribute values: every string that comes from the data goes through here. */
export function escapeHtml(value: unknown): string {
  return String(value)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/** JSON that cannot end its `<script>` element nor open a comment inside it. */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

const esc = escapeHtml;
const MINUS = '\u2212';

export function num(x: number | null | undefined): string {
  if (x === null || x === undefined || !Number.isFinite(x)) return '\u2013';
  const a = Math.abs(x);
  let s: string;
  if (Number.isInteger(x)) s = x.toLocaleString('en-US');
  else if (a >= 1000) s = Math.round(x).toLocaleString('en-US');
  else if (a >= 100) s = x.toFixed(1);
  else if (a >= 1) s = x.toFixed(2);
  else s = String(Number(x.toPrecision(3)));
  return s.replace(/^-/, MINUS);
}

export const count = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '\u2013');
export const signed = (x: number | null | undefined) => (x !== null && x !== undefined && x > 0 ? `+${num(x)}` : num(x));
const withUnit = (s: string, unit: string) => (s === '\u2013' || !unit ? s : unit === '%' ? `${s} %` : `${s} ${unit}`);

/** "estimate unit [low, high]"; `stacked` puts the interval on its own line (table cells). */
export function interval(iv: Interval | undefined, unit: string, opts: { scale?: number; stacked?: boolean } = {}): string {
  if (!iv || iv.estimate === null || !Number.isFinite(iv.estimate)) return '\u2013';
  const scale = opts.scale ?? 1;
  const s = (x: number | null) => signed(x === null ? null : x * scale);
  const ci =
    iv.ci_low === null || iv.ci_high === null
      ? ''
      : `${opts.stacked ? '<br>' : ' '}<span class="ci">[${s(iv.ci_low)}, ${s(iv.ci_high)}]</span>`;
  return `${esc(withUnit(s(iv.estimate), unit))}${ci}`;
}

export function pValue(p: number | null | undefined): string {
  if (p === null || p === undefined || !Number.isFinite(p)) return '\u2013';
  if (p < 0.0001) return '&lt; 0.0001';
  return esc(String(Number(p.toPrecision(2))));
}

export function rate(r: number | null): string {
  return r === null || !Number.isFinite(r) ? '\u2013' : `${num(r * 100)} %`;
}

export function badge(verdict: Verdict, reason?: string): string {
  const known = Object.hasOwn(VERDICT_LABELS, verdict);
  const cls = known ? `v-${verdict}` : 'v-unknown';
  const label = known ? VERDICT_LABELS[verdict] : String(verdict);
  const title = reason ? ` title="${esc(reason)}"` : '';
  return `<span class="badge ${esc(cls)}" data-verdict="${esc(verdict)}"${title}>${esc(label)}</span>`;
}

export function metricInfo(tag: ComparedMetricTag): { name: string; unit: string } {
  const m = COMPARED_METRICS.find((x) => x.tag === tag);
  return { name: METRIC_NAMES[tag] ?? tag, unit: m?.unit ?? '' };
}

export function swatch(color: string): string {
  return `<span class="swatch" style="background:${color}"></span>`;
}
