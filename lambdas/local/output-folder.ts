/**
 * The folder a command writes its results to, checked before any work is done:
 * - never holding earlier results the new ones would replace or mix with (the same
 *   --run-id and --out twice overwrote one target's folder and left the other's, and the
 *   old comparison, beside a new report; a capacity search replaced a replay's report and
 *   mixed its steps with an earlier search's): refused unless --overwrite, which removes the
 *   earlier run's folder first, whole, so nothing old stays beside anything new;
 * - writable: created at once, and a failure said with its real cause. Node's recursive
 *   mkdir reports ENOENT for any failure below the first missing folder (a read-only file
 *   system, a permission, a file in the way), so the cause is found again one level at a time;
 *   a folder that exists is checked for writing (access W_OK says EROFS on a read-only one).
 */
import { constants } from 'node:fs';
import { access, lstat, mkdir, readdir, rm } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { ARTIFACT_FILES } from '../core/export/artifacts';
import { RUN_FILES } from '../core/export/run-artifacts';

const CAUSES: Record<string, string> = {
  EROFS: 'read-only file system',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  ENOTDIR: 'a file is in the way, not a folder',
  EEXIST: 'a file is in the way, not a folder',
  ENOSPC: 'no space left on the device',
  EDQUOT: 'disk quota exceeded',
  ENAMETOOLONG: 'the name is too long',
};

const codeOf = (error: unknown): string | undefined => (error as NodeJS.ErrnoException | null)?.code;

/** Why `dir` cannot be created, found one level at a time from its first missing ancestor. */
async function creationProblem(dir: string): Promise<string> {
  const missing: string[] = [];
  let at = resolve(dir);
  while ((await lstat(at).catch(() => null)) === null && dirname(at) !== at) {
    missing.unshift(at);
    at = dirname(at);
  }
  if (missing.length === 0) return `${at} is not a folder (${CAUSES.ENOTDIR})`;
  for (const folder of missing) {
    try {
      await mkdir(folder);
    } catch (error) {
      const code = codeOf(error) ?? 'error';
      return `cannot create ${folder}: ${CAUSES[code] ?? (error as Error).message} (${code})`;
    }
  }
  return `cannot create ${dir}`;
}

/** Creates `dir` (and its parents) and checks it takes files; null, or what is wrong in one line, its cause named. */
export async function createOutputFolder(dir: string): Promise<string | null> {
  try {
    await mkdir(dir, { recursive: true });
  } catch {
    return creationProblem(dir);
  }
  try {
    await access(dir, constants.W_OK);
    return null;
  } catch (error) {
    const code = codeOf(error) ?? 'error';
    return `cannot write in ${dir}: ${CAUSES[code] ?? (error as Error).message} (${code})`;
  }
}

/** The entries of `dir` (none when it does not exist). */
async function entries(dir: string): Promise<string[]> {
  return readdir(dir).catch((error: unknown) => {
    if (codeOf(error) === 'ENOENT') return [];
    throw error;
  });
}

/** What a run folder of ours holds: its run files, and target folders of result files. */
const RUN_FOLDER_FILES: readonly string[] = [...Object.values(RUN_FILES), ARTIFACT_FILES.ingestReport];
const TARGET_FILES: readonly string[] = Object.values(ARTIFACT_FILES);

/** Whether `dir` holds only what a run of ours writes: run files, and folders of result files. */
async function isRunFolder(dir: string, names: readonly string[]): Promise<boolean> {
  for (const name of names) {
    if (RUN_FOLDER_FILES.includes(name)) continue;
    const inside = await entries(join(dir, name)).catch(() => null);
    if (inside === null || !inside.every((file) => TARGET_FILES.includes(file))) return false;
  }
  return true;
}

/** What a capacity search writes at its root (capacity/command.ts, step.ts): capacity.json, report.html, and steps/ of run folders. */
const CAPACITY_DOCUMENT = 'capacity.json';
const CAPACITY_STEPS = 'steps';

/** Whether `dir` holds only what a capacity search writes: its document and report, and a steps/ folder of run folders. */
async function isCapacityFolder(dir: string, names: readonly string[]): Promise<boolean> {
  if (!names.includes(CAPACITY_DOCUMENT) && !names.includes(CAPACITY_STEPS)) return false;
  for (const name of names) {
    if (name === CAPACITY_DOCUMENT || name === RUN_FILES.report) continue;
    if (name !== CAPACITY_STEPS) return false;
    const steps = await entries(join(dir, name)).catch(() => null);
    if (steps === null) return false;
    for (const step of steps) {
      const inside = await entries(join(dir, name, step)).catch(() => null);
      if (inside === null || !(await isRunFolder(join(dir, name, step), inside))) return false;
    }
  }
  return true;
}

/**
 * A replay's (or a capacity search's) run folder, `<out>/<run-id>/`, made ready: null when it
 * did not exist or was empty, or (with `overwrite`) held an earlier run's results, now
 * removed; otherwise why the run must not start, as a usage error. A folder holding anything
 * but a run's (or a search's) results is never removed.
 */
export async function claimRunFolder(runDir: string, runId: string, overwrite: boolean): Promise<string | null> {
  const info = await lstat(runDir).catch(() => null);
  if (info && !info.isDirectory())
    return `${runDir} is a file, where the run's results folder would go: give another --run-id or --out`;
  const found = await entries(runDir);
  if (found.length === 0) return null;
  const listed = found.slice(0, 4).join(', ') + (found.length > 4 ? `, ... (${found.length})` : '');
  if (!overwrite)
    return (
      `${runDir} already holds the results of run ${runId} (${listed}): give another --run-id or --out, or ` +
      `--overwrite to replace that run`
    );
  if (!(await isRunFolder(runDir, found)) && !(await isCapacityFolder(runDir, found)))
    return `${runDir} holds files that are not a run's results (${listed}): not replacing it, even with --overwrite`;
  await rm(runDir, { recursive: true, force: true });
  return null;
}

/**
 * `compare --out <dir>`: null when writing the comparison there replaces nothing of an earlier
 * one (or `overwrite` says to); otherwise why not, as a usage error. A run folder's
 * comparison and report are that run's: replacing them is asked for, never silent.
 */
export async function comparisonOutProblem(dir: string, overwrite: boolean): Promise<string | null> {
  if (overwrite) return null;
  const found = (await entries(dir)).filter((name) => (Object.values(RUN_FILES) as string[]).includes(name));
  if (found.length === 0) return null;
  return (
    `--out ${dir} already holds ` +
    `${found.join(' and ')}${(await entries(dir)).includes(ARTIFACT_FILES.ingestReport) ? ", a run's" : ''}: ` +
    `give another --out, or --overwrite to replace ${found.length > 1 ? 'them' : 'it'}`
  );
}
