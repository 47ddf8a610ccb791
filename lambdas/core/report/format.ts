/**
 * The pages' escaping and number formatting: every string that comes from the data goes
 * through escapeHtml; numbers read the same in every table (en-US grouping, a true minus sign,
 * an en dash for no value).
 */
import { COMPARED_METRICS, type ComparedMetricTag, type Interval, type Verdict } from '../compare/types';
import { METRIC_NAMES, VERDICT_LABELS } from './labels';
import { decimalsOf, fixed, formatNumber, NO_VALUE } from './precision';

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

/**
 * A number with no interval of its own: significant digits by its size (precision.ts); with `decimals`, exactly those
 * (the decimals of the interval it goes with).
 */
export function num(x: number | null | undefined, decimals?: number | null): string {
  return formatNumber(x, decimals);
}

export const count = (n: number) => (Number.isFinite(n) ? fixed(Math.round(n), 0) : NO_VALUE);
/** A difference: a plus sign on a positive value (not on one shown as zero). */
export function signed(x: number | null | undefined, decimals?: number | null): string {
  const s = num(x, decimals);
  return x !== null && x !== undefined && x > 0 && !/^[0.,]+$/.test(s) ? `+${s}` : s;
}
const withUnit = (s: string, unit: string) => (s === NO_VALUE || !unit ? s : unit === '%' ? `${s} %` : `${s} ${unit}`);

/** The longest text from a capture or a target a page shows in one place (an error type, a reason); the rest is cut with an ellipsis. */
export const SHOWN_TEXT_MAX = 200;

/**
 * `text` as a page shows it: at most `max` characters (code points, so no pair is split),
 * cut with an ellipsis, and control characters shown as U+FFFD (a terminal's escape sequence
 * in an error type is not text to read). Escaping is still escapeHtml's.
 */
export function shownText(text: string, max = SHOWN_TEXT_MAX): string {
  // eslint-disable-next-line no-control-regex
  const clean = text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, '\ufffd');
  const chars = Array.from(clean);
  return chars.length <= max ? clean : `${chars.slice(0, max - 1).join('')}\u2026`;
}

/**
 * "estimate unit [low, high]", every number with the decimals the interval's width supports
 * (precision.ts); `stacked` puts the interval on its own line (table cells).
 */
export function interval(
  iv: Interval | undefined,
  unit: string,
  opts: { scale?: number; stacked?: boolean } = {},
): string {
  if (!iv || iv.estimate === null || !Number.isFinite(iv.estimate)) return NO_VALUE;
  const scale = opts.scale ?? 1;
  const decimals = decimalsOf(iv, scale);
  const s = (x: number | null) => signed(x === null ? null : x * scale, decimals);
  const ci =
    iv.ci_low === null || iv.ci_high === null
      ? ''
      : `${opts.stacked ? '<br>' : ' '}<span class="ci">[${s(iv.ci_low)}, ${s(iv.ci_high)}]</span>`;
  return `${esc(withUnit(s(iv.estimate), unit))}${ci}`;
}

export function pValue(p: number | null | undefined): string {
  if (p === null || p === undefined || !Number.isFinite(p)) return NO_VALUE;
  if (p < 0.0001) return '&lt; 0.0001';
  return esc(String(Number(p.toPrecision(2))));
}

export function rate(r: number | null): string {
  return r === null || !Number.isFinite(r) ? NO_VALUE : `${num(r * 100)} %`;
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
