/**
 * The run's Chromium (a run server: run-server.ts), for the end-to-end page tests:
 * launched at the first file's request and shared by the others, each in browser contexts of
 * its own, where each file would otherwise launch one. It ends with the server: Chromium
 * exits when the connection to the process that launched it closes.
 *
 * As a vitest global setup (the default export) it starts itself as a script; run as a script (`node --import tsx
 * browser-server.ts <socket>`), it serves `{}` with `{ wsEndpoint }` for chromium.connect.
 */
import { fileURLToPath } from 'node:url';
import type { BrowserServer } from 'playwright-core';
import { launchBrowserServer } from './chromium';
import { askRunServer, serveRunServer, startRunServer } from './run-server';

export const BROWSER_SERVER_ENV = 'CR_TEST_BROWSER_SERVER';
const SCRIPT = fileURLToPath(import.meta.url);

/** Vitest global setup: starts the server (Chromium itself only when a file asks for it). */
export default function setup(): () => void {
  // Stopped by SIGTERM, on which Playwright closes Chromium and deletes its profile folder (a
  // SIGKILL would leave the folder in the temp folder).
  return startRunServer(BROWSER_SERVER_ENV, process.execPath, (socket) => ['--import', 'tsx', SCRIPT, socket], {
    stopSignal: 'SIGTERM',
  });
}

/** The run's Chromium's endpoint; null when the run has no browser server. */
export async function runBrowserEndpoint(): Promise<string | null> {
  const answer = await askRunServer<{ wsEndpoint?: string; error?: string }>(BROWSER_SERVER_ENV, {});
  if (answer === null) return null;
  if (!answer.wsEndpoint) throw new Error(`the run's Chromium did not start: ${answer.error ?? 'no endpoint'}`);
  return answer.wsEndpoint;
}

function serve(socket: string): void {
  let launched: Promise<BrowserServer> | undefined;
  serveRunServer(socket, async () => {
    launched ??= launchBrowserServer();
    return { wsEndpoint: (await launched).wsEndpoint() };
  });
}

if (process.argv[1] === SCRIPT) serve(process.argv[2] as string);
