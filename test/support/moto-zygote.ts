/**
 * One Python with moto and its services imported, forking a moto_server for each test that
 * starts one (moto-server.py --zygote): a fresh moto_server spends seconds of CPU importing
 * moto and then each service on its first call, and the tests start one per test file. A
 * forked server is the same server, its imports already done.
 *
 * The vitest global setup starts the zygote (a run server: run-server.ts) without waiting for
 * it; startMoto (moto.ts) asks it for a server, and spawns moto_server itself when there is no
 * zygote (no Python that imports moto). Each server the zygote forks exits with the test
 * file's process that asked for it, and leads a session of its own as a spawned one does
 * (kill-on-stop.ts).
 */
import { fileURLToPath } from 'node:url';
import { askRunServer, startRunServer } from './run-server';

export const MOTO_ZYGOTE_ENV = 'CR_TEST_MOTO_ZYGOTE';

/** moto_server with S3's conditional writes atomic, and its zygote mode. */
export const STRICT_MOTO_SCRIPT = fileURLToPath(new URL('moto-server.py', import.meta.url));

/** Vitest global setup: starts the zygote (its imports run while the first files start). */
export default function setup(): () => void {
  return startRunServer(MOTO_ZYGOTE_ENV, process.env.CR_TEST_PYTHON || 'python3', (socket) => [
    STRICT_MOTO_SCRIPT,
    '--zygote',
    socket,
  ]);
}

/**
 * A moto_server forked by the run's zygote with moto_server's `args`, `env` added to its
 * environment and its stderr appended to `stderrFile`: its pid (it leads its own session and
 * exits when this process does), or null when the run has no zygote.
 */
export async function forkMotoServer(
  args: string[],
  env: Record<string, string>,
  stderrFile: string,
): Promise<number | null> {
  const answer = await askRunServer<{ pid?: number } | null>(MOTO_ZYGOTE_ENV, {
    args,
    env,
    stderr: stderrFile,
    watch: process.pid,
  });
  if (answer === null) return null;
  if (typeof answer?.pid !== 'number')
    throw new Error(`the moto zygote did not fork a server (answered ${JSON.stringify(answer)})`);
  return answer.pid;
}
