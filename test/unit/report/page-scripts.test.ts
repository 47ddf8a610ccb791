/**
 * The pages' browser scripts are TypeScript (lambdas/core/report/browser/), bundled into
 * page-scripts.generated.ts, which the pages inline: a change to the sources (or to esbuild)
 * without regenerating fails here.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { REPORT_PAGE_SCRIPT, TREND_PAGE_SCRIPT } from '../../../lambdas/core/report/page-scripts.generated';
import { bundlePageScripts, PAGE_SCRIPTS_FILE } from '../../../scripts/bundle-page-scripts';

describe('page-scripts.generated.ts', () => {
  it('is the bundle of lambdas/core/report/browser/ as it is now (else: npm run bundle:page-scripts)', async () => {
    const fresh = await bundlePageScripts();
    expect(
      readFileSync(PAGE_SCRIPTS_FILE, 'utf8') === fresh,
      'page-scripts.generated.ts is stale: npm run bundle:page-scripts',
    ).toBe(true);
  });

  it.each([
    ['report', REPORT_PAGE_SCRIPT],
    ['trend', TREND_PAGE_SCRIPT],
  ])('the %s page script is one strict IIFE that imports nothing and reads its data by id', (page, script) => {
    expect(script.startsWith('"use strict";\n(() => {')).toBe(true);
    expect(script.trimEnd().endsWith('})();')).toBe(true);
    expect(script).not.toMatch(/\bimport\s*\(|\brequire\s*\(|^\s*(import|export)\s/m);
    expect(script).toContain(`document.getElementById(id)`);
    expect(script).toContain(page === 'report' ? '"report-data"' : '"trend-data"');
    // Parses as a script (the page would not run it otherwise); the DOM is not here, so only parsed.
    expect(() => new Function(script)).not.toThrow();
  });
});
