/**
 * moto_server (Python moto 5) as the emulated AWS for integration tests: started on a free
 * port, stopped after, with S3's conditional writes made atomic as S3's are (moto-server.py).
 * Without moto the suite is skipped with one line saying how to get it, except under
 * CI=true, where its absence fails the run.
 */
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:net';
import { describe, it } from 'vitest';
import { forkMotoServer, STRICT_MOTO_SCRIPT } from './moto-zygote';
import { isAlive, removeEndedRuns, runSharedPath, writeWhole } from './run-shared';
import { killGroupOnStop } from './kill-on-stop';

export const MOTO_INSTALL_HINT =
  'moto_server not found: install it with `pip install "moto[server]"` (Python moto 5) to run the emulated-AWS tests';

const MOTO_COMMAND = 'moto_server';
let availability: boolean | undefined;
const PROBED = 'cr-moto-available-';
const STRICT_PROBED = 'cr-moto-python-';
let strictCommand: string[] | null | undefined;

/**
 * The command that starts moto_server with S3's conditional writes atomic: a Python that
 * imports moto, running moto-server.py; null when no Python on the PATH imports moto (moto_server
 * then runs as it is, and says so once). Probed once per `vitest run`.
 */
export function strictMotoCommand(): string[] | null {
  if (strictCommand !== undefined) return strictCommand;
  const probed = runSharedPath(STRICT_PROBED);
  if (existsSync(probed)) {
    const python = readFileSync(probed, 'utf8');
    return (strictCommand = python ? [python, STRICT_MOTO_SCRIPT] : null);
  }
  removeEndedRuns(STRICT_PROBED);
  const python =
    ['python3', 'python'].find(
      (py) =>
        spawnSync(py, ['-c', 'import moto.server, moto.s3.responses'], { stdio: 'ignore', timeout: 20_000 }).status ===
        0,
    ) ?? '';
  writeWhole(probed, python);
  if (!python)
    console.warn(
      "[moto] no Python on the PATH imports moto: moto_server runs as it is, and its S3 conditional writes are not atomic (S3's are)",
    );
  return (strictCommand = python ? [python, STRICT_MOTO_SCRIPT] : null);
}

/**
 * Whether moto_server actually runs. `command -v` is not enough: a pyenv shim exists for
 * every Python version while moto may be installed in none of the active ones. Probed once
 * per `vitest run` (Python and moto load for it), the answer shared by its files (run-shared.ts).
 */
export function motoAvailable(): boolean {
  if (availability !== undefined) return availability;
  const probed = runSharedPath(PROBED);
  if (existsSync(probed)) return (availability = readFileSync(probed, 'utf8') === 'yes');
  removeEndedRuns(PROBED);
  availability = spawnSync(MOTO_COMMAND, ['--help'], { stdio: 'ignore', timeout: 20_000 }).status === 0;
  writeWhole(probed, availability ? 'yes' : 'no');
  return availability;
}

export type MotoGate = 'run' | 'skip' | 'fail';

/** The rule in one place: run with moto; without it, skip locally but fail under CI. */
export function motoGate(available: boolean, env: Record<string, string | undefined> = process.env): MotoGate {
  if (available) return 'run';
  return env.CI === 'true' ? 'fail' : 'skip';
}

/** describe() for suites that need moto: skipped locally without it, failing under CI=true. */
export function describeWithMoto(name: string, body: () => void): void {
  switch (motoGate(motoAvailable())) {
    case 'run':
      describe(name, body);
      return;
    case 'fail':
      describe(name, () => {
        it('has moto_server (required when CI=true)', () => {
          throw new Error(MOTO_INSTALL_HINT);
        });
      });
      return;
    case 'skip':
      console.warn(`[skipped] ${name}: ${MOTO_INSTALL_HINT}`);
      describe.skip(name, body);
  }
}

async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as { port: number }).port;
  server.close();
  await once(server, 'close');
  return port;
}

export interface Moto {
  endpoint: string;
  port: number;
  /** moto_server's process (it leads its own process group). */
  pid: number | undefined;
  /** Kills moto_server and anything it started; safe to call twice. */
  stop(): Promise<void>;
  /** Drops every emulated resource (buckets, queues, ...) via moto's reset API. */
  reset(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A moto_server process: spawned by this process, or forked by the run's zygote (moto-zygote.ts). */
interface ServerProcess {
  /** Leads its own process group. */
  pid: number | undefined;
  /** Why it ended, or null while it runs. */
  ended(): string | null;
  /** The end of its stderr. */
  stderr(): string;
  /** Resolves once it has ended. */
  whenEnded(): Promise<void>;
  /** Removes what it left (its stderr file). */
  cleanUp(): void;
}

function spawnServer(args: string[], env: Record<string, string>): ServerProcess {
  // detached: its own process group, so stop() can take the whole tree down.
  const [command, ...script] = strictMotoCommand() ?? [MOTO_COMMAND];
  const child = spawn(command!, [...script, ...args], {
    stdio: ['ignore', 'ignore', 'pipe'],
    detached: true,
    env: { ...process.env, ...env },
  });
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-4000);
  });
  child.once('error', () => undefined); // surfaced through ended() / spawn failure below
  return {
    pid: child.pid,
    ended: () =>
      child.exitCode !== null || child.signalCode !== null
        ? `code ${child.exitCode}, signal ${child.signalCode}`
        : null,
    stderr: () => stderr,
    whenEnded: () =>
      child.exitCode !== null || child.signalCode !== null
        ? Promise.resolve()
        : new Promise<void>((resolve) => child.once('exit', () => resolve())),
    cleanUp: () => undefined,
  };
}

async function forkedServer(args: string[], env: Record<string, string>): Promise<ServerProcess | null> {
  if (!strictMotoCommand()) return null;
  const dir = mkdtempSync(join(tmpdir(), 'cr-moto-'));
  const stderrFile = join(dir, 'stderr');
  const pid = await forkMotoServer(args, env, stderrFile);
  if (pid === null) {
    rmSync(dir, { recursive: true, force: true });
    return null;
  }
  return {
    pid,
    ended: () => (isAlive(pid) ? null : 'ended'),
    stderr: () => (existsSync(stderrFile) ? readFileSync(stderrFile, 'utf8').slice(-4000) : ''),
    whenEnded: async () => {
      while (isAlive(pid)) await sleep(50);
    },
    cleanUp: () => rmSync(dir, { recursive: true, force: true }),
  };
}

function killGroup(server: ServerProcess, signal: NodeJS.Signals): void {
  if (server.pid === undefined || server.ended() !== null) return;
  try {
    // Negative pid: the whole process group, so a wrapper (pyenv shim) cannot orphan Python.
    process.kill(-server.pid, signal);
  } catch {
    // already gone
  }
}

async function startOnce(port: number, readyTimeoutMs: number, env: Record<string, string>): Promise<Moto> {
  const args = ['-H', '127.0.0.1', '-p', String(port)];
  const server = (await forkedServer(args, env)) ?? spawnServer(args, env);
  // If the test process ends or is stopped without afterAll, do not leave moto holding a port.
  const forget = killGroupOnStop(server.pid);

  const stop = async () => {
    forget();
    if (server.ended() === null) {
      killGroup(server, 'SIGTERM');
      // werkzeug can take a moment on SIGTERM; do not let a stuck server hang the suite.
      const timer = setTimeout(() => killGroup(server, 'SIGKILL'), 5000);
      await server.whenEnded();
      clearTimeout(timer);
    }
    server.cleanUp();
  };

  const endpoint = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + readyTimeoutMs;
  for (;;) {
    const ended = server.ended();
    if (ended !== null) {
      await stop();
      throw new Error(`moto_server exited (${ended}) before answering: ${server.stderr().trim()}`);
    }
    try {
      const res = await fetch(`${endpoint}/moto-api/`, { signal: AbortSignal.timeout(2000) });
      await res.arrayBuffer();
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(
        `moto_server did not answer on ${endpoint} within ${readyTimeoutMs} ms: ${server.stderr().trim()}`,
      );
    }
    await sleep(150);
  }

  return {
    endpoint,
    port,
    pid: server.pid,
    stop,
    async reset() {
      const res = await fetch(`${endpoint}/moto-api/reset`, { method: 'POST' });
      await res.arrayBuffer();
      if (!res.ok) throw new Error(`moto reset failed: HTTP ${res.status}`);
    },
  };
}

/**
 * Starts moto_server on a free loopback port and waits until it answers. The port is free
 * when picked but could be taken before moto binds it, so a start that dies early is retried
 * on a fresh port. `env` adds to the server's environment (e.g. moto's
 * INITIAL_NO_AUTH_ACTION_COUNT, which turns on its IAM enforcement).
 */
export async function startMoto(
  options: { readyTimeoutMs?: number; env?: Record<string, string> } = {},
): Promise<Moto> {
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      return await startOnce(await freePort(), options.readyTimeoutMs ?? 30_000, options.env ?? {});
    } catch (error) {
      lastError = error;
    }
  }
  throw lastError instanceof Error ? lastError : new Error(String(lastError));
}

/**
 * AWS SDK v3 client settings that talk to moto: fixed region, static fake credentials (so no
 * profile or instance metadata is ever consulted), path-style S3 addressing (moto cannot
 * serve bucket.127.0.0.1 virtual hosts). Valid for every client; non-S3 clients ignore
 * forcePathStyle.
 */
export function awsClientConfig(endpoint: string) {
  return {
    region: 'us-east-1',
    endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' },
  };
}
