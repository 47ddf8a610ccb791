/**
 * A helper server that a vitest run starts once (its global setup), and its test files ask over a Unix socket: one JSON line each way per
 * connection. The moto zygote (moto-zygote.ts), the stack-template server
 * (iam/stack-template-server.ts) and the browser server (browser-server.ts) are such servers.
 * The server makes its socket appear only once it listens (bound under another name, then
 * renamed), and exits when its parent (the vitest process) is gone.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isAlive } from './run-shared';

interface RunServerRef {
  socket: string;
  pid: number;
}

/**
 * Starts `command` with `args(socket)` without waiting for it, and names it to the test files
 * in `envName` (their processes inherit this one's environment). Returns the teardown. When
 * `envName` already names a server (another project's global setup started it), that one
 * serves, and nothing is started. The teardown stops the server
 * with SIGKILL, or `stopSignal` for a server that cleans up on it.
 */
export function startRunServer(
  envName: string,
  command: string,
  args: (socket: string) => string[],
  options: { stopSignal?: NodeJS.Signals } = {},
): () => void {
  if (process.env[envName]) return () => undefined;
  const dir = mkdtempSync(join(tmpdir(), 'cr-run-server-'));
  const socket = join(dir, 'server.sock');
  const child = spawn(command, args(socket), { stdio: ['ignore', 'ignore', 'inherit'] });
  child.once('error', () => undefined); // not startable: the files do without it
  if (child.pid !== undefined) process.env[envName] = JSON.stringify({ socket, pid: child.pid } satisfies RunServerRef);
  return () => {
    child.kill(options.stopSignal ?? 'SIGKILL');
    // Not waited for: a server cleaning up on its signal finishes on its own.
    child.unref();
    rmSync(dir, { recursive: true, force: true });
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The run's server named in `envName` once it listens; null when there is none or it ended without listening. */
async function readyServer(envName: string, timeoutMs: number): Promise<RunServerRef | null> {
  const raw = process.env[envName];
  if (!raw) return null;
  const server = JSON.parse(raw) as RunServerRef;
  const deadline = Date.now() + timeoutMs;
  while (!existsSync(server.socket)) {
    if (!isAlive(server.pid) || Date.now() > deadline) return null;
    await sleep(100);
  }
  return server;
}

/** Sends `request` to the run's server named in `envName` and returns its answer; null when the run has none. */
export async function askRunServer<T>(envName: string, request: unknown, readyTimeoutMs = 60_000): Promise<T | null> {
  const server = await readyServer(envName, readyTimeoutMs);
  if (!server) return null;
  const answer = await new Promise<string>((resolve, reject) => {
    const conn = connect(server.socket);
    let text = '';
    conn.setEncoding('utf8');
    conn.on('data', (chunk: string) => (text += chunk));
    conn.once('error', reject);
    conn.once('close', () => resolve(text));
    conn.end(JSON.stringify(request) + '\n');
  });
  if (!answer.trim()) throw new Error(`the run's server (${envName}) closed without an answer`);
  return JSON.parse(answer) as T;
}

/**
 * The server's side, run as its script: answers each request on `socket` with `answer(request)`
 * (a thrown error answers `{ error }`), makes the socket appear once it listens, and exits when
 * its parent is gone.
 */
export function serveRunServer(socket: string, answer: (request: unknown) => unknown): void {
  // Half-open: the asker ends its side after its request; the answer goes back on ours.
  const server = createServer({ allowHalfOpen: true }, (conn) => {
    let text = '';
    conn.setEncoding('utf8');
    conn.on('data', (chunk: string) => (text += chunk));
    conn.on('end', () => {
      const reply = (value: unknown) => conn.end(JSON.stringify(value) + '\n');
      Promise.resolve()
        .then(() => answer(JSON.parse(text)))
        .then(reply, (error: unknown) => reply({ error: error instanceof Error ? error.message : String(error) }));
    });
    conn.on('error', () => undefined); // a caller gone: the next one is served
  });
  server.listen(`${socket}.binding`, () => renameSync(`${socket}.binding`, socket));
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) process.exit(0);
  }, 1000);
}
