/**
 * A setup file of every tier (vitest.config.ts) that, when CR_CPU_PROFILE names a folder,
 * writes a V8 CPU profile of each test file's worker thread there, from the file's start to its
 * end (`<pid>-<file>.cpuprofile`, for Chrome's DevTools or any .cpuprofile reader). The
 * sampler takes wall time: a thread blocked in a wait shows as its waiting function, and a
 * process the file starts has a profile of its own only if started with --cpu-prof. With
 * CR_CPU_LOG, what a file costs; with this, where. Without CR_CPU_PROFILE it does nothing.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { basename, join } from 'node:path';
import { afterAll } from 'vitest';

const DIR = process.env.CR_CPU_PROFILE;

if (DIR) {
  const file = (globalThis as { __vitest_worker__?: { filepath?: string } }).__vitest_worker__?.filepath ?? 'unknown';
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  afterAll(async () => {
    const { profile } = await session.post('Profiler.stop');
    session.disconnect();
    mkdirSync(DIR, { recursive: true });
    writeFileSync(join(DIR, `${process.pid}-${basename(file)}.cpuprofile`), JSON.stringify(profile));
  });
}
