/**
 * The run's stack-template server (a run server: ../run-server.ts): aws-cdk-lib and the stack
 * loaded once, a template synthesized for each request ({ config, id } in, { template } or
 * { error } out), for the integration files that synthesize the stack for their IAM users,
 * which would otherwise each load aws-cdk-lib.
 *
 * As a vitest global setup (the default export; `npm test` calls it once for both its vitest
 * processes) it starts itself as a script; run as a script (`node --import tsx
 * stack-template-server.ts <socket>`), it serves.
 */
import { renameSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { startRunServer } from '../run-server';

export const STACK_TEMPLATE_SERVER_ENV = 'CR_TEST_STACK_TEMPLATE_SERVER';
const SCRIPT = fileURLToPath(import.meta.url);

/** Vitest global setup: starts the server (aws-cdk-lib loads while the first files start). */
export default function setup(): () => void {
  return startRunServer(STACK_TEMPLATE_SERVER_ENV, process.execPath, (socket) => ['--import', 'tsx', SCRIPT, socket]);
}

async function serve(socket: string): Promise<void> {
  const { stackTemplate } = await import('./stack-template');
  // Half-open: the asker ends its side after its request; the answer goes back on ours.
  const server = createServer({ allowHalfOpen: true }, (conn) => {
    let text = '';
    conn.setEncoding('utf8');
    conn.on('data', (chunk: string) => (text += chunk));
    conn.on('end', () => {
      let answer: unknown;
      try {
        const { config, id } = JSON.parse(text) as { config: Record<string, unknown>; id: string };
        answer = { template: stackTemplate(config, id) };
      } catch (error) {
        answer = { error: error instanceof Error ? error.message : String(error) };
      }
      conn.end(JSON.stringify(answer) + '\n');
    });
    conn.on('error', () => undefined); // a caller gone: the next one is served
  });
  server.listen(`${socket}.binding`, () => renameSync(`${socket}.binding`, socket));
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) process.exit(0);
  }, 1000);
}

if (process.argv[1] === SCRIPT) await serve(process.argv[2] as string);
