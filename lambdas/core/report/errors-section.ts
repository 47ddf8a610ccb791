/**
 * report.html's errors by type, and the cap on what a target's error text costs the page: an
 * error type is whatever the target answered (a SageMaker error code, an HTTP error body's
 * `type`), so a hostile or broken target can make it any size. Each type is shown cut to
 * SHOWN_TEXT_MAX characters (format.ts's shownText), and types that are the same once cut are
 * one row with their counts added: a 50,000-character type costs the page a few hundred bytes,
 * not one copy per place it appears.
 */
import { count, escapeHtml as esc, shownText, swatch } from './format';
import { colorOf } from './shown';
import type { ReportData, ReportTarget, ReportTargetSummary } from './types';

/** Counts by a shown key: each key cut by shownText, the counts of keys cut alike added. */
function shownCounts(byKey: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [key, n] of Object.entries(byKey)) {
    const shown = shownText(key);
    out[shown] = (out[shown] ?? 0) + n;
  }
  return out;
}

/**
 * The data as the page shows and embeds it: each target's error types and drop reasons, and
 * the comparisons' exclusion reasons, cut to what the page shows (the counts kept).
 * Everything else as given.
 */
export function withShownErrors(data: ReportData): ReportData {
  const summary = (s: ReportTargetSummary): ReportTargetSummary => ({
    ...s,
    failedByType: shownCounts(s.failedByType),
    droppedByReason: shownCounts(s.droppedByReason),
  });
  const pairs = <T extends { pairs: { excluded: Record<string, number> } }>(c: T): T => ({
    ...c,
    pairs: { ...c.pairs, excluded: shownCounts(c.pairs.excluded) },
  });
  const doc = data.comparison;
  return {
    ...data,
    targets: data.targets.map((t) => ({ ...t, summary: summary(t.summary) })),
    comparison: doc === null ? null : { ...pairs(doc), comparisons: doc.comparisons.map(pairs) },
  };
}

/** The errors section: one row per error type, a bar per target. `data` is withShownErrors's. */
export function renderErrors(data: ReportData): string {
  const types = new Map<string, number>();
  for (const t of data.targets) {
    for (const [type, n] of Object.entries(t.summary.failedByType))
      if (n > 0) types.set(type, (types.get(type) ?? 0) + n);
  }
  if (types.size === 0) {
    return `<section id="errors">
<h2>Errors by type</h2>
<p class="muted">No request failed.</p>
</section>`;
  }
  const order = [...types.entries()].sort((a, b) => b[1] - a[1]).map(([type]) => type);
  let max = 0;
  for (const t of data.targets) for (const type of order) max = Math.max(max, t.summary.failedByType[type] ?? 0);
  const cell = (t: ReportTarget, type: string) => {
    const n = t.summary.failedByType[type] ?? 0;
    const width = max > 0 ? Math.max(n > 0 ? 1 : 0, Math.round((100 * n) / max)) : 0;
    return (
      `<td class="barcell"><span class="track"><span class="bar" ` +
      `style="width:${width}%;background:${colorOf(data, t.summary.name)}"></span></span>` +
      `<span class="barnum">${count(n)}</span></td>`
    );
  };
  const rows = order
    .map(
      (type) =>
        `<tr data-error-type="${esc(type)}"><td class="l error-type text">${esc(type)}` +
        `</td>${data.targets.map((t) => cell(t, type)).join('')}</tr>`,
    )
    .join('\n');
  return (
    `<section id="errors">
<h2>Errors by type</h2>
<div class="table-wrap"><table class="errors">
<thead><tr><th class="l">Error type` +
    `</th>` +
    data.targets
      .map(
        (t) =>
          `<th class="l">${swatch(colorOf(data, t.summary.name))}<span class="text">${esc(t.summary.name)}</span></th>`,
      )
      .join('') +
    `</tr></thead>
<tbody>
${rows}
</tbody></table></div>
</section>`
  );
}
