import { spawn, type ChildProcess } from 'node:child_process';
import { build } from 'esbuild';
import { once } from 'node:events';
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { oncePerRun } from './run-shared';
import { sourceImportMetaUrls } from '../../scripts/source-urls';

export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

export interface MockProcess {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/**
 * Where the run's bundles of server entries go: inside the repository, so that their packages
 * resolve from its node_modules. Its real path: where node_modules is a symbolic link (a clone
 * sharing another's), a bundle started by its link's path would not see itself as the main
 * script (the entry compares process.argv[1] with its import.meta.url, which Node resolves).
 */
const BUNDLES_BASE = join(realpathSync(join(REPO_ROOT, 'node_modules')), '.cache');

/** The OpenAI-compatible mock server's module. */
const MOCK_SERVER = join(REPO_ROOT, 'lambdas/mocks/mock-server.ts');
/**
 * The fire worker thread's module (from the sources, lambdas/local/fire-workers.ts starts it through tsx,
 * fire-worker-entry.mjs; the built CLI from dist/fire-worker.mjs).
 */
const FIRE_WORKER = 'lambdas/local/fire-worker.ts';
/** The servers the tests start most, and the fire worker: bundled once per run. */
const BUNDLED_ENTRIES = [
  'lambdas/mocks/mock-server.ts',
  'lambdas/mocks/mock-sagemaker.ts',
  'test/support/fault-server.ts',
  'test/support/key-server.ts',
  FIRE_WORKER,
];

/**
 * The TypeScript entry of a server (or the fire worker) the tests start, bundled once per run
 * (run-shared.ts) into one ES module, its packages left to node_modules: the same code,
 * started without loading tsx in every process, which costs each start more CPU than the
 * server's own start-up. Every module but the entry keeps its source's `import.meta.url`
 * (source-urls.ts), so that only the entry starts when the bundle is the main script.
 */
async function bundledEntry(entry: string): Promise<string> {
  const bundles = await oncePerRun(
    'cr-test-servers-',
    async (dir) => {
      // One build per entry: a server that imports another entry (the fault server imports the
      // mock server's module) must bundle it as a module with its source's URL, not as a main.
      const bundle = async (e: string) => {
        const entry = join(REPO_ROOT, e);
        const outfile = join(dir, e.replace(/\.ts$/, '.mjs'));
        await build({
          entryPoints: [entry],
          outfile,
          bundle: true,
          platform: 'node',
          format: 'esm',
          target: 'node20',
          packages: 'external',
          sourcemap: true,
          logLevel: 'error',
          plugins: [sourceImportMetaUrls(REPO_ROOT, [entry])],
        });
        return [entry, outfile] as const;
      };
      return Object.fromEntries(await Promise.all(BUNDLED_ENTRIES.map(bundle)));
    },
    { base: BUNDLES_BASE, timeoutMs: 60_000 },
  );
  return bundles[entry] ?? entry;
}

/**
 * The fire worker's module bundled (bundledEntry), as an entry for startFireWorkers: a thread
 * that loads it does not register tsx and compile the worker's modules, as the
 * sources' entry does in every thread. The tests of the pool itself use it; the CLI's runs use
 * the built CLI's (dist/fire-worker.mjs).
 */
export async function bundledFireWorker(): Promise<URL> {
  return pathToFileURL(await bundledEntry(join(REPO_ROOT, FIRE_WORKER)));
}

/** Node's arguments for `entry` (a script and its arguments): its bundle when the run bundles it, else the script through tsx. */
async function launchArgs(entry: string[]): Promise<string[]> {
  const [script, ...rest] = entry;
  const bundled = script === undefined ? undefined : await bundledEntry(script);
  return bundled !== undefined && bundled !== script
    ? ['--enable-source-maps', bundled, ...rest]
    : ['--import', 'tsx', ...entry];
}

/**
 * Starts a server entry (a bundled mock: `<entry> --port 0 <args...>`) as its own process and
 * waits for its `{"url": ...}` line. A TypeScript entry the run bundles runs from its bundle;
 * another runs through tsx.
 */
export async function startUrlProcess(entry: string[], args: string[], label: string): Promise<MockProcess> {
  const child = spawn(process.execPath, ['--no-warnings', ...(await launchArgs(entry)), '--port', '0', ...args], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${label} did not report its URL within 20 s`)), 20_000);
    lines.once('line', (line) => {
      clearTimeout(timer);
      try {
        resolve((JSON.parse(line) as { url: string }).url);
      } catch (error) {
        reject(new Error(`unexpected first line from ${label}: ${line} (${String(error)})`));
      }
    });
    child.once('exit', (code) => reject(new Error(`${label} exited early with code ${code}`)));
  });
  return {
    url,
    child,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** The arrivals a mock process started with `--log <log>` has written so far. */
export const loggedArrivals = (log: string): number =>
  existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean).length : 0;

/** Node's arguments that run the mock server's module as the tests run it: from the run's bundle (bundledEntry). */
export const mockServerLaunch = (): Promise<string[]> => launchArgs([MOCK_SERVER]);

/** The bundled OpenAI-compatible mock server as its own process. */
export function startMockProcess(args: string[]): Promise<MockProcess> {
  return startUrlProcess([MOCK_SERVER], args, 'mock server');
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * How startCli starts the CLI: the working folder, what it adds to the environment, and the user it runs as (root's
 * tests: `nobody`, whom chmod denies).
 */
export interface CliOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  uid?: number;
  gid?: number;
}

/** Runs the CLI as a user would, its own process without a terminal (startCli). */
export async function runCli(args: string[], options: CliOptions = {}): Promise<CliResult> {
  return startCli(args, options).done;
}

export interface CliProcess {
  child: ChildProcess;
  /** What it printed so far. */
  readonly stdout: string;
  readonly stderr: string;
  /** Resolves when it exits. */
  done: Promise<CliResult>;
  /** Resolves at the first stderr text matching `pattern` (rejects if the process exits first). */
  waitForStderr(pattern: RegExp, timeoutMs?: number): Promise<void>;
}

/** The environment variable naming the run's build of the CLI (cli-bundle.ts, a global setup of vitest.config.ts). */
export const CLI_BUNDLE_ENV = 'CR_TEST_CLI_BUNDLE';

/**
 * The script startCli runs: the built CLI (package.json's bin, dist/capture-replay.mjs), which the run's global setup
 * builds (cli-bundle.ts).
 */
export function cliScript(): string {
  return process.env[CLI_BUNDLE_ENV] || join(REPO_ROOT, 'dist/capture-replay.mjs');
}

/**
 * Starts the CLI as `runCli` does and returns at once with the child, to signal it or watch
 * it. `nodeArgs` go before the script (e.g. `--import` of a probe).
 */
export function startCli(args: string[], options: CliOptions & { nodeArgs?: string[] } = {}): CliProcess {
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), cliScript(), ...args], {
    cwd: options.cwd ?? REPO_ROOT,
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(options.uid === undefined ? {} : { uid: options.uid }),
    ...(options.gid === undefined ? {} : { gid: options.gid }),
  });
  let stdout = '';
  let stderr = '';
  const watchers: { pattern: RegExp; resolve: () => void }[] = [];
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
    for (const w of [...watchers]) if (w.pattern.test(stderr)) w.resolve();
  });
  const done = once(child, 'exit').then(([code]) => ({ code: code as number | null, stdout, stderr }));
  return {
    child,
    get stdout() {
      return stdout;
    },
    get stderr() {
      return stderr;
    },
    done,
    waitForStderr(pattern, timeoutMs = 30_000) {
      if (pattern.test(stderr)) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`no ${pattern} on stderr within ${timeoutMs} ms; stderr so far:\n${stderr}`)),
          timeoutMs,
        );
        const watcher = {
          pattern,
          resolve: () => {
            clearTimeout(timer);
            watchers.splice(watchers.indexOf(watcher), 1);
            resolve();
          },
        };
        watchers.push(watcher);
        void done.then(() => {
          clearTimeout(timer);
          if (watchers.includes(watcher))
            reject(new Error(`the CLI exited before ${pattern} appeared on stderr; stderr:\n${stderr}`));
        });
      });
    },
  };
}
