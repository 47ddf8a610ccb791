/**
 * The browser the page tests use: Debian's Chromium through playwright-core, which never
 * downloads one, headless, with nothing of its own on the network (so a request seen is the
 * page's). Launched by a test file (browser.ts) or once for the run (browser-server.ts).
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser, type BrowserServer } from 'playwright-core';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const HAVE_CHROMIUM = existsSync(CHROMIUM);
export const CHROMIUM_MISSING =
  `no Chromium at ${CHROMIUM} ` + "(install Debian's chromium package: apt-get install chromium; or set CHROMIUM_PATH)";

const OPTIONS = {
  executablePath: CHROMIUM,
  args: [
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
  ],
};

export const launchBrowser = (): Promise<Browser> => chromium.launch(OPTIONS);
export const launchBrowserServer = (): Promise<BrowserServer> => chromium.launchServer(OPTIONS);
export const connectBrowser = (wsEndpoint: string): Promise<Browser> => chromium.connect(wsEndpoint);
