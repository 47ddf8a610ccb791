/**
 * A real browser for the page tests (report.html, a schedule's trend page): Debian's Chromium
 * through playwright-core, which never downloads a browser. A page is written to disk and
 * opened from file://, as a person would open it; every request but the page's own file is
 * blocked and recorded, and every console error or warning and uncaught page error is kept,
 * so a test can say the page is self-contained and quiet.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, expect } from 'vitest';
import { runBrowserEndpoint } from './browser-server';
import { CHROMIUM_MISSING, connectBrowser, HAVE_CHROMIUM, launchBrowser } from './chromium';
import { REPO_ROOT } from './processes';

/** Where the browser tests save their screenshots. */
export const ARTIFACTS = join(REPO_ROOT, 'test-artifacts');
/**
 * Screenshots are taken when CR_SCREENSHOTS is set (e.g. `CR_SCREENSHOTS=1 npm test`): they are
 * for a person to look at, no assertion reads them, and a full-page capture makes Chromium lay
 * out and rasterize the whole page again (docs/testing.md).
 */
export const SCREENSHOTS = Boolean(process.env.CR_SCREENSHOTS);

/**
 * Whether `label`'s browser tests skip: locally a missing browser skips, saying so; under CI
 * it does not skip, and launchChromium fails instead.
 */
export function skipWithoutChromium(label: string): boolean {
  const skip = !HAVE_CHROMIUM && !process.env.CI;
  if (skip) console.warn(`${label}: SKIPPED, ${CHROMIUM_MISSING}`);
  return skip;
}

/** Fails naming what to install when the machine has no Chromium. */
function requireChromium(label: string): void {
  if (!HAVE_CHROMIUM) throw new Error(`${label}: ${CHROMIUM_MISSING}; CI must install it (.ci/run)`);
}

/** Chromium of this process's own (chromium.ts). */
export async function launchChromium(label: string): Promise<Browser> {
  requireChromium(label);
  return launchBrowser();
}

/** The run's Chromium when the run has one (browser-server.ts), else one of this process's own. */
async function runOrOwnChromium(label: string): Promise<Browser> {
  requireChromium(label);
  const endpoint = await runBrowserEndpoint();
  return endpoint === null ? launchChromium(label) : connectBrowser(endpoint);
}

/**
 * For a describe block: Chromium before its tests (the run's, or launched for them) and a temp
 * folder for their pages; after them, the browser closed (from the run's: disconnected, the
 * block's contexts closed) and the folder deleted. The getters are valid inside
 * the tests.
 */
export function useChromium(label: string): { readonly browser: Browser; readonly dir: string } {
  let browser: Browser | undefined;
  let dir: string | undefined;
  beforeAll(async () => {
    browser = await runOrOwnChromium(label);
    dir = mkdtempSync(join(tmpdir(), `${label}-`));
  });
  afterAll(async () => {
    await browser?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  const ready = <T>(value: T | undefined, what: string): T => {
    if (value === undefined)
      throw new Error(`${label}: no ${what} outside the tests (useChromium's beforeAll has not run)`);
    return value;
  };
  return {
    get browser() {
      return ready(browser, 'browser');
    },
    get dir() {
      return ready(dir, 'folder');
    },
  };
}

export interface OpenedPage {
  page: Page;
  context: BrowserContext;
  /** The page's file:// URL. */
  url: string;
  /** Every request the page made, its own file first. */
  requests: string[];
  /** Requests refused (anything but the page's own file). */
  blocked: string[];
  /** Console errors and warnings, uncaught page errors. */
  problems: string[];
}

export interface OpenOptions {
  viewport?: { width: number; height: number };
  /** An attribute of <html> the page's script sets when it is done; waited for after load. */
  readyAttribute?: string | null;
}

/**
 * Writes `html` to `file` (its folder made) and opens it in a new context of `browser`, with
 * every request but the file's own blocked and recorded. Waits for load, then for the
 * page's `readyAttribute` (default data-charts-drawn, which both pages' scripts set).
 */
export async function openHtmlFile(
  browser: Browser,
  file: string,
  html: string,
  options: OpenOptions = {},
): Promise<OpenedPage> {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, html);
  const url = pathToFileURL(file).href;
  const context = await browser.newContext({
    viewport: options.viewport ?? { width: 1440, height: 900 },
    deviceScaleFactor: 1,
  });
  // Before any script of the page: what an injected script would set, and every CSP refusal.
  await context.addInitScript(
    `window.__cspViolations = []; document.addEventListener('securitypolicyviolation', (e) => ` +
      `window.__cspViolations.push(e.violatedDirective + ' ' + (e.blockedURI || e.sample || '')));`,
  );
  const page = await context.newPage();
  const opened: OpenedPage = { page, context, url, requests: [], blocked: [], problems: [] };
  page.on('request', (r) => opened.requests.push(r.url()));
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') opened.problems.push(`console.${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => opened.problems.push(`pageerror: ${e.message}`));
  await context.route('**/*', async (route) => {
    const u = route.request().url();
    if (u === url) return route.continue();
    opened.blocked.push(u);
    return route.abort();
  });
  await page.goto(url, { waitUntil: 'load' });
  const ready = options.readyAttribute === undefined ? 'data-charts-drawn' : options.readyAttribute;
  if (ready !== null) await page.waitForSelector(`html[${ready}]`, { state: 'attached' });
  return opened;
}

/**
 * Markup meant to run or to fetch, for every field a capture, a target or a history line
 * controls: a script element, inline handlers (an image whose load fails, an SVG's onload),
 * an attribute break-out, elements that would end the page's own style and script elements,
 * a comment opener, a stylesheet and an image from the network, a javascript: URL. Each
 * would set window.__pwned or request something if it ever became markup.
 */
export const INJECTED_MARKUP =
  `"'><script>window.__pwned=1</script><img src=x onerror="window.__pwned=2"><svg onload="window.__pwned=3"></svg>` +
  `</style></script><script>window.__pwned=4</script><!--<link rel=stylesheet href="http://injected.invalid/x.css">` +
  `<img src="https://injected.invalid/p.png">javascript:window.__pwned=5`;

/** What injected markup would leave: the sentinel an injected script sets, the policy's refusals. */
export async function injectionTraces(o: OpenedPage): Promise<{ pwned: unknown; violations: string[] }> {
  return o.page.evaluate(`({ pwned: window.__pwned, violations: window.__cspViolations })`) as Promise<{
    pwned: unknown;
    violations: string[];
  }>;
}

/** No injected script ran nor was refused by the policy: the markup stayed text. */
export async function expectNoInjection(o: OpenedPage): Promise<void> {
  expect(await injectionTraces(o)).toEqual({ pwned: undefined, violations: [] });
}

/**
 * Every element whose content is wider than its box (scrollWidth > clientWidth), the page
 * itself included: a table wider than its container, a chart wider than its figure, a cut
 * word. Each is named by its tag, id, classes and short data attributes, and its parent's.
 * `designedToScroll`: selectors of elements meant to scroll sideways (none on our pages).
 */
export async function overflowing(page: Page, designedToScroll: readonly string[] = []): Promise<string[]> {
  return page.evaluate(
    `(() => {
    const skip = ${JSON.stringify(designedToScroll)};
    const name = (el) => {
      let s = el.tagName.toLowerCase();
      if (el.id) s += '#' + el.id;
      for (const c of el.classList) s += '.' + c;
      for (const a of el.attributes) if (a.name.startsWith('data-') && a.value.length <= 40) s += '[' + a.name + '="' + a.value + '"]';
      return s;
    };
    const out = [];
    for (const el of document.querySelectorAll('*')) {
      if (skip.some((sel) => el.matches(sel))) continue;
      if (el.clientWidth > 0 && el.scrollWidth > el.clientWidth + 1) {
        out.push(name(el) + (el.parentElement ? ' in ' + name(el.parentElement) : '') + ` +
      `': scrollWidth ' + el.scrollWidth + ' > clientWidth ' + el.clientWidth);
      }
    }
    return out;
  })()`,
  ) as Promise<string[]>;
}

/** What each chart's legend shows as a person sees it: its visible series names and values (hidden cells left out), by chart. */
export async function legendTexts(page: Page): Promise<{ chart: string; names: string[]; values: string[] }[]> {
  return page.evaluate(
    `[...document.querySelectorAll('.chart[data-chart]')].map((el) => {
    const shown = (sel) => [...el.querySelectorAll('.u-legend ' + sel)]` +
      `.filter((c) => c.getClientRects().length > 0).map((c) => c.textContent);
    return { chart: el.dataset.chart + ' ' + (el.dataset.metric || '') + ' ' + (el.dataset.comparison || ''),` +
      ` names: shown('th'), values: shown('.u-value') };
  })`,
  ) as Promise<{ chart: string; names: string[]; values: string[] }[]>;
}

/**
 * Saves `name` (a .png) under ARTIFACTS when screenshots are asked for (SCREENSHOTS): the whole
 * page, or only the element `selector` finds.
 */
export async function saveScreenshot(page: Page, name: string, selector?: string): Promise<void> {
  if (!SCREENSHOTS) return;
  mkdirSync(ARTIFACTS, { recursive: true });
  const path = join(ARTIFACTS, name);
  await (selector === undefined
    ? page.screenshot({ path, fullPage: true })
    : page.locator(selector).screenshot({ path }));
}

/** Nothing logged as an error or warning, no request but the page's own file. */
export function expectQuietAndOffline(o: OpenedPage): void {
  expect(o.problems).toEqual([]);
  expect(o.blocked).toEqual([]);
  expect(o.requests).toEqual([o.url]);
}
