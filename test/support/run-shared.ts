/**
 * Work done once per run and shared by its test files. A run is one `vitest run`, whose test
 * files run in processes it forks: its pid (their parent's) names what the run shares. What
 * runs that have ended left behind is removed by the next.
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Whether process `pid` exists. */
export const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** The pid that names this run: the vitest process's (this test file's parent). */
const runPid = (): number => process.ppid;

/** The path of `name` (a prefix such as `cr-shared-synth-`) for this run, in `base`. */
export function runSharedPath(name: string, base = tmpdir()): string {
  return join(base, `${name}${runPid()}`);
}

/**
 * Removes the `name<pid>` files and folders in `base` whose process has ended: by default
 * those of runs (their pid names the run) other than this one.
 */
export function removeEndedRuns(name: string, base = tmpdir(), owner = runPid()): void {
  if (!existsSync(base)) return;
  for (const entry of readdirSync(base)) {
    const pid = Number(entry.startsWith(name) ? entry.slice(name.length) : NaN);
    if (Number.isInteger(pid) && pid !== owner && !isAlive(pid))
      rmSync(join(base, entry), { recursive: true, force: true });
  }
}

/** Writes `text` whole under its final name, so that a reader never sees half of it. */
export function writeWhole(file: string, text: string): void {
  writeFileSync(`${file}.${process.pid}`, text);
  renameSync(`${file}.${process.pid}`, file);
}

/**
 * `produce(dir)` once per run: the first caller makes the run's folder `name` in `base` (made
 * atomically, it is the lock) and produces into it; the others wait for its result, success or
 * failure alike. The folder stays until the run has ended.
 */
export async function oncePerRun<T>(
  name: string,
  produce: (dir: string) => Promise<T>,
  options: { base?: string; timeoutMs: number },
): Promise<T> {
  removeEndedRuns(name, options.base);
  // The base may not exist yet (node_modules/.cache on a fresh clone): made first, not the lock.
  if (options.base !== undefined) mkdirSync(options.base, { recursive: true });
  const dir = runSharedPath(name, options.base);
  const resultFile = join(dir, 'result.json');
  let first = true;
  try {
    mkdirSync(dir, { recursive: false });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    first = false;
  }
  if (first) {
    try {
      const value = await produce(dir);
      writeWhole(resultFile, JSON.stringify({ value }));
      return value;
    } catch (error) {
      writeWhole(resultFile, JSON.stringify({ error: String(error) }));
      throw error;
    }
  }
  const deadline = Date.now() + options.timeoutMs;
  while (!existsSync(resultFile)) {
    if (Date.now() > deadline)
      throw new Error(`${dir}: no result from the test file producing it within ${options.timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const result = JSON.parse(readFileSync(resultFile, 'utf8')) as { value: T } | { error: string };
  if ('error' in result) throw new Error(`${dir}: failed in the test file producing it: ${result.error}`);
  return result.value;
}
