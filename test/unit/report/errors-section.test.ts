/**
 * What a target's error text costs report.html: an error type is whatever the target
 * answered, so a hostile one can be 50,000 characters (a 400 whose JSON `code` quotes the
 * request). Each is shown cut to SHOWN_TEXT_MAX characters with an ellipsis, types that are
 * the same once cut are one row with their counts added, and control characters are not kept.
 */
import { describe, expect, it } from 'vitest';
import { BUNDLED_CHART_ASSETS } from '../../../lambdas/adapters/bundled-chart-assets';
import { escapeHtml, SHOWN_TEXT_MAX, shownText } from '../../../lambdas/core/report/format';
import { renderReportHtml } from '../../../lambdas/core/report/report-page';
import { reportFixture } from '../../support/report-fixture';

const PROMPT = 'Summarise the attached contract for the board. ';
const huge = (tail: string) => `${PROMPT}${'x'.repeat(50_000)}${tail}`;

describe('shownText', () => {
  it('keeps short text, cuts long text to the maximum with an ellipsis, never inside a surrogate pair', () => {
    expect(shownText('ModelError')).toBe('ModelError');
    const cut = shownText(huge(''));
    expect(Array.from(cut)).toHaveLength(SHOWN_TEXT_MAX);
    expect(cut.endsWith('x\u2026')).toBe(true);
    const emoji = shownText('\u{1F600}'.repeat(300));
    expect(Array.from(emoji)).toHaveLength(SHOWN_TEXT_MAX);
    expect(emoji).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/);
  });

  it('shows control characters (a terminal escape in an error code) as U+FFFD', () => {
    expect(shownText('\u001b]0;PWNED\u0007\u001b[31mModelError\u0000\u009b')).toBe(
      '\ufffd]0;PWNED\ufffd\ufffd[31mModelError\ufffd\ufffd',
    );
    expect(shownText('tab\tand\nnewline')).toBe('tab\tand\nnewline');
  });
});

describe('report.html with 50,000-character error types', () => {
  it('costs the page a few hundred bytes per type, counted once per shown row', () => {
    const plain = reportFixture({ names: ['a', 'b'], requests: 300, compare: true });
    const hostile = reportFixture({ names: ['a', 'b'], requests: 300, compare: true });
    const a = hostile.targets[0]!.summary;
    // Two types that differ only past the cut: one row, 3 + 2 requests.
    a.failedByType[huge('-first')] = 3;
    a.failedByType[huge('-second')] = 2;
    a.droppedByReason[huge('-reason')] = 1;
    hostile.comparison!.comparisons[0]!.pairs.excluded[huge('-excluded')] = 4;

    const before = renderReportHtml(plain, BUNDLED_CHART_ASSETS).length;
    const html = renderReportHtml(hostile, BUNDLED_CHART_ASSETS);
    expect(html.length - before).toBeLessThan(4_000);
    expect(html).not.toContain('x'.repeat(SHOWN_TEXT_MAX));

    const shown = escapeHtml(shownText(huge('')));
    const rows = [
      ...html.matchAll(/<tr data-error-type="([^"]*)"><td class="l error-type text">([^<]*)<\/td>([\s\S]*?)<\/tr>/g),
    ];
    const long = rows.filter((r) => r[1] === shown);
    expect(long).toHaveLength(1);
    expect(long[0]![2]).toBe(shown);
    // Target a's count is the first bar's number.
    expect(/<span class="barnum">([\d,]+)<\/span>/.exec(long[0]![3] as string)?.[1]).toBe('5');
    // The embedded data carries the cut types too, with their counts added.
    const json = /<script type="application\/json" id="report-data">([\s\S]*?)<\/script>/.exec(html)?.[1] ?? '';
    const embedded = JSON.parse(json) as typeof hostile;
    expect(embedded.targets[0]!.summary.failedByType[shownText(huge(''))]).toBe(5);
  });
});
