// A closer look inside a fire invocation, preloaded with
// `npm run bench:fire-lateness -- --node-options "--import $PWD/bench/event-loop-probe.mjs" ...`:
// every stretch in which the event loop did not run for more than 12 ms (a timer ticks every
// 4 ms), with the process's CPU time in it (all threads) and its context switches; every
// garbage collection (start, duration, V8's kind and flags); the heap and external memory each
// second. Written as it exits to <tmpdir>/cr-event-loop-<pid>.json; it only observes (the ticks
// cost about 1 % of a vCPU).
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PerformanceObserver, performance } from 'node:perf_hooks';

const GAP_MS = 12;
const stalls = [];
const gcs = [];
const memory = [];
let last = performance.now();
let lastCpu = process.cpuUsage();
let lastUsage = process.resourceUsage();
setInterval(() => {
  const now = performance.now();
  if (now - last > GAP_MS) {
    const cpu = process.cpuUsage(lastCpu);
    const usage = process.resourceUsage();
    stalls.push({
      atMs: performance.timeOrigin + last,
      ms: now - last,
      cpuMs: (cpu.user + cpu.system) / 1000,
      involuntarySwitches: usage.involuntaryContextSwitches - lastUsage.involuntaryContextSwitches,
      voluntarySwitches: usage.voluntaryContextSwitches - lastUsage.voluntaryContextSwitches,
    });
  }
  last = now;
  lastCpu = process.cpuUsage();
  lastUsage = process.resourceUsage();
}, 4).unref();
setInterval(() => {
  const m = process.memoryUsage();
  memory.push({ atMs: Date.now(), heapUsedMb: m.heapUsed / 1e6, externalMb: m.external / 1e6 });
}, 1000).unref();
new PerformanceObserver((list) => {
  for (const e of list.getEntries())
    gcs.push({
      atMs: performance.timeOrigin + e.startTime,
      ms: e.duration,
      kind: e.detail.kind,
      flags: e.detail.flags,
    });
}).observe({ entryTypes: ['gc'] });
process.on('exit', () => {
  writeFileSync(join(tmpdir(), `cr-event-loop-${process.pid}.json`), JSON.stringify({ stalls, gcs, memory }));
});
