/**
 * A real browser for the page tests (report.html, a schedule's trend page): Debian's Chromium
 * through playwright-core, which never downloads a browser. A page is written to disk and
 * opened from file://, as a person would open it; every request but the page's own file is
 * blocked and recorded, and every console error or warning and uncaught page error is kept,
 * so a test can say the page is self-contained and quiet.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, expect } from 'vitest';
import { REPO_ROOT } from './processes';

/** Where the browser tests save their screenshots. */
export const ARTIFACTS = join(REPO_ROOT, 'test-artifacts');

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const HAVE_CHROMIUM = existsSync(CHROMIUM);
export const CHROMIUM_MISSING = `no Chromium at ${CHROMIUM} (install Debian's chromium package: apt-get install chromium; or set CHROMIUM_PATH)`;

/**
 * Whether `label`'s browser tests skip: locally a missing browser skips, saying so; under CI
 * it does not skip, and launchChromium fails instead.
 */
export function skipWithoutChromium(label: string): boolean {
  const skip = !HAVE_CHROMIUM && !process.env.CI;
  if (skip) console.warn(`${label}: SKIPPED, ${CHROMIUM_MISSING}`);
  return skip;
}

/** Chromium headless, with nothing of its own on the network (so a request seen is the page's). */
export async function launchChromium(label: string): Promise<Browser> {
  if (!HAVE_CHROMIUM) throw new Error(`${label}: ${CHROMIUM_MISSING}; CI must install it (.ci/run)`);
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/**
 * For a describe block: Chromium launched before its tests (a temp folder for their pages,
 * ARTIFACTS made) and closed after them (the folder deleted). The getters are valid inside
 * the tests.
 */
export function useChromium(label: string): { readonly browser: Browser; readonly dir: string } {
  let browser: Browser | undefined;
  let dir: string | undefined;
  beforeAll(async () => {
    browser = await launchChromium(label);
    dir = mkdtempSync(join(tmpdir(), `${label}-`));
    mkdirSync(ARTIFACTS, { recursive: true });
  });
  afterAll(async () => {
    await browser?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  const ready = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`${label}: no ${what} outside the tests (useChromium's beforeAll has not run)`);
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
export async function openHtmlFile(browser: Browser, file: string, html: string, options: OpenOptions = {}): Promise<OpenedPage> {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, html);
  const url = pathToFileURL(file).href;
  const context = await browser.newContext({ viewport: options.viewport ?? { width: 1440, height: 900 }, deviceScaleFactor: 1 });
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

/** Nothing logged as an error or warning, no request but the page's own file. */
export function expectQuietAndOffline(o: OpenedPage): void {
  expect(o.problems).toEqual([]);
  expect(o.blocked).toEqual([]);
  expect(o.requests).toEqual([o.url]);
}
