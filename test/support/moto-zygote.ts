/**
 * One Python with moto and its services imported, forking a moto_server for each test that
 * starts one (moto-server.py --zygote): a fresh moto_server spends seconds of CPU importing
 * moto and then each service on its first call, and the tiers start one per test file. A
 * forked server is the same server, its imports already done.
 *
 * The vitest global setup of the tiers that start moto starts the zygote without waiting for
 * it and names its socket to the test files (MOTO_ZYGOTE_ENV); startMoto (moto.ts) asks it for
 * a server, and spawns moto_server itself when there is no zygote (a file run on its own, no
 * Python that imports moto). The zygote exits with the vitest process; each server it forks
 * exits with the test file's process that asked for it, and leads a session of its own as a
 * spawned one does (priority.ts, kill-on-stop.ts). A forked server is not a child of the test
 * file's process, so CR_CPU_LOG does not count its CPU.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isAlive } from './run-shared';

/** moto_server with S3's conditional writes atomic, and its zygote mode. */
export const STRICT_MOTO_SCRIPT = fileURLToPath(new URL('moto-server.py', import.meta.url));

export const MOTO_ZYGOTE_ENV = 'CR_TEST_MOTO_ZYGOTE';

interface ZygoteRef {
  socket: string;
  pid: number;
}

/** Vitest global setup: starts the zygote (its imports run while the first files start) and names it to the test files. */
export default function setup(): () => void {
  const dir = mkdtempSync(join(tmpdir(), 'cr-moto-zygote-'));
  const socket = join(dir, 'zygote.sock');
  const python = process.env.CR_TEST_PYTHON || 'python3';
  const child = spawn(python, [STRICT_MOTO_SCRIPT, '--zygote', socket], { stdio: ['ignore', 'ignore', 'inherit'] });
  child.once('error', () => undefined); // no Python: the files spawn moto_server themselves
  if (child.pid !== undefined) process.env[MOTO_ZYGOTE_ENV] = JSON.stringify({ socket, pid: child.pid } satisfies ZygoteRef);
  return () => {
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The run's zygote once it listens; null when there is none or it ended without listening (no moto). */
async function readyZygote(timeoutMs: number): Promise<ZygoteRef | null> {
  const raw = process.env[MOTO_ZYGOTE_ENV];
  if (!raw) return null;
  const zygote = JSON.parse(raw) as ZygoteRef;
  const deadline = Date.now() + timeoutMs;
  while (!existsSync(zygote.socket)) {
    if (!isAlive(zygote.pid) || Date.now() > deadline) return null;
    await sleep(100);
  }
  return zygote;
}

/**
 * A moto_server forked by the run's zygote with moto_server's `args`, `env` added to its
 * environment and its stderr appended to `stderrFile`: its pid (it leads its own session and
 * exits when this process does), or null when the run has no zygote.
 */
export async function forkMotoServer(args: string[], env: Record<string, string>, stderrFile: string): Promise<number | null> {
  const zygote = await readyZygote(60_000);
  if (!zygote) return null;
  const answer = await new Promise<string>((resolve, reject) => {
    const conn = connect(zygote.socket);
    let text = '';
    conn.setEncoding('utf8');
    conn.on('data', (chunk: string) => (text += chunk));
    conn.once('error', reject);
    conn.once('close', () => resolve(text));
    conn.end(JSON.stringify({ args, env, stderr: stderrFile, watch: process.pid }) + '\n');
  });
  const pid = (JSON.parse(answer || 'null') as { pid?: number } | null)?.pid;
  if (typeof pid !== 'number') throw new Error(`the moto zygote did not fork a server (answered ${JSON.stringify(answer)})`);
  return pid;
}
