/**
 * The run's stack-template server (a run server: ../run-server.ts): aws-cdk-lib and the stack
 * loaded once, a template synthesized for each request ({ config, id } in, { template } or
 * { error } out), for the integration files that synthesize the stack for their IAM users,
 * which would otherwise each load aws-cdk-lib.
 *
 * As a vitest global setup (the default export) it starts itself as a script; run as a script (`node --import tsx
 * stack-template-server.ts <socket>`), it serves.
 */
import { fileURLToPath } from 'node:url';
import { serveRunServer, startRunServer } from '../run-server';

export const STACK_TEMPLATE_SERVER_ENV = 'CR_TEST_STACK_TEMPLATE_SERVER';
const SCRIPT = fileURLToPath(import.meta.url);

/** Vitest global setup: starts the server (aws-cdk-lib loads while the first files start). */
export default function setup(): () => void {
  return startRunServer(STACK_TEMPLATE_SERVER_ENV, process.execPath, (socket) => ['--import', 'tsx', SCRIPT, socket]);
}

async function serve(socket: string): Promise<void> {
  const { stackTemplate } = await import('./stack-template');
  serveRunServer(socket, (request) => {
    const { config, id } = request as { config: Record<string, unknown>; id: string };
    return { template: stackTemplate(config, id) };
  });
}

if (process.argv[1] === SCRIPT) await serve(process.argv[2] as string);
