/**
 * Lateness as a skeptic measures it: at the server. For each rate, a Poisson schedule of
 * captured requests (millisecond inferenceTimes, so the schedule is exact, not spread) is
 * replayed by the CLI (its own process) against an independent arrival-stamping server
 * (bench/arrival-server.mjs, its own process, no code shared with ours). Joined on
 * X-Request-ID:
 *   - lateness = server arrival - our scheduled time, minus one constant shift (the smallest
 *     lateness of the run: loopback and parsing time that every request pays);
 *   - early: requests that reached the server before their scheduled time. Both processes
 *     anchor hrtime to the instant the wall clock turns a millisecond, each to within 20 us,
 *     so their clocks agree to ~0.04 ms (before, each anchor read up to 1 ms behind and the
 *     shift came out -0.9..0 ms): an arrival more than EARLY_MS before its due time was sent
 *     early (it happened: a fire worker whose clock anchored across a pause ran 4.3 ms ahead);
 *   - lost (scheduled, never arrived) and doubled (arrived twice);
 *   - our own reported lag (schedule_lag_ms, and wire_lag_ms when the records carry it)
 *     against the server's view;
 *   - client CPU (user + system seconds of the CLI process, from /usr/bin/time) and the
 *     machine's load average before the run.
 *
 *   node --import tsx bench/server-lateness.ts [--seconds 10] [--rates 200,1000,2000,5000]
 *     [--workers auto|n] [--wait precise|coarse] [--rehearsal n]   (passed to the CLI's replay;
 *     default auto, precise, and the CLI's rehearsal)
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { flag } from './args';
import { cliOf } from './cli-path';
import { BENCH_ROOT as root, fixed as f, quantile, serverView, startArrivalServer, writeCaptures } from './lateness-common';

const seconds = flag('--seconds', 10);
const ratesAt = process.argv.indexOf('--rates');
const rates = ratesAt === -1 ? [200, 1000, 2000, 5000] : (process.argv[ratesAt + 1] ?? '').split(',').map(Number);
/** A CLI option passed through as given (`--workers`, `--wait`), with the CLI's default. */
const passThrough = (name: string, fallback: string): string => {
  const at = process.argv.indexOf(name);
  return at === -1 ? fallback : (process.argv[at + 1] ?? fallback);
};
const workers = passThrough('--workers', 'auto');
const wait = passThrough('--wait', 'precise');
const rehearsal = process.argv.includes('--rehearsal') ? passThrough('--rehearsal', '') : null;
const work = mkdtempSync(join(tmpdir(), 'cr-lateness-'));

interface Row {
  rate: number;
  scheduled: number;
  arrived: number;
  lost: number;
  doubled: number;
  early: number;
  p50: number;
  p99: number;
  max: number;
  shiftMs: number;
  ourLagP99: number;
  ourWireLagP99: number | null;
  /** p99 of |(arrival - scheduled - shift) - our reported lag|: how far our own view is from the server's. */
  viewGapP99: number;
  cpuSeconds: number;
  wallSeconds: number;
  load: string;
}

const cliScript = await cliOf(root);
const rows: Row[] = [];
for (const rate of rates) {
  const dir = join(work, `r${rate}`);
  const captures = join(dir, 'captures.jsonl');
  mkdirSync(dir, { recursive: true });
  const scheduledCount = writeCaptures(captures, rate, seconds, rate);
  const server = await startArrivalServer(join(dir, 'arrivals.txt'));
  const load = loadavg().map((l) => l.toFixed(2)).join(' ');
  const timeFile = join(dir, 'time.txt');
  const cli = spawn('/usr/bin/time', ['-f', '%U %S %e', '-o', timeFile, process.execPath, cliScript, 'replay', captures, '--url', server.url, '--out', dir, '--run-id', 'run', '--no-progress', '--lead', '2000', '--timeout', '30000', '--workers', workers, '--wait', wait, ...(rehearsal !== null ? ['--rehearsal', rehearsal] : [])], { stdio: ['ignore', 'ignore', 'inherit'] });
  const [code] = (await once(cli, 'exit')) as [number];
  const arrivals = await server.stop();
  if (code !== 0) console.error(`rate ${rate}: the CLI exited ${code}`);
  const [user, system, wall] = readFileSync(timeFile, 'utf8').trim().split(/\s+/).map(Number) as [number, number, number];

  const records = readFileSync(join(dir, 'run', 'target', 'profile_export.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const wire = /"wire_lag_ms":([-\d.e]+)/.exec(l)?.[1];
      return { id: /"x_request_id":"([^"]+)"/.exec(l)?.[1] as string, scheduledNs: BigInt(/"scheduled_ns":(\d+)/.exec(l)?.[1] ?? '0'), lagMs: Number(/"schedule_lag_ms":([-\d.e]+)/.exec(l)?.[1]), wireLagMs: wire !== undefined ? Number(wire) : null };
    });
  const view = serverView(records, arrivals);
  const ourLags = records.map((r) => r.lagMs).sort((a, b) => a - b);
  const wires = records.filter((r) => r.wireLagMs !== null).map((r) => r.wireLagMs as number).sort((a, b) => a - b);
  const known = new Set(records.map((r) => r.id));
  const arrivedIds = [...arrivals.keys()].filter((id) => known.has(id)).length;
  rows.push({
    rate,
    scheduled: scheduledCount,
    early: view.early,
    arrived: arrivedIds,
    lost: scheduledCount - arrivedIds,
    doubled: view.doubled,
    p50: quantile(view.sorted, 0.5),
    p99: quantile(view.sorted, 0.99),
    max: view.sorted[view.sorted.length - 1] ?? NaN,
    shiftMs: view.shiftMs,
    ourLagP99: quantile(ourLags, 0.99),
    ourWireLagP99: wires.length > 0 ? quantile(wires, 0.99) : null,
    viewGapP99: view.viewGapP99,
    cpuSeconds: user + system,
    wallSeconds: wall,
    load,
  });
  console.error(`rate ${rate}: done (${scheduledCount} requests)`);
}

console.log(`server-side lateness, ${seconds} s per rate, --workers ${workers} --wait ${wait} --rehearsal ${rehearsal ?? 'default'}, node ${process.version}, ${cpus().length} CPUs (${cpus()[0]?.model ?? '?'})\n`);
console.log('| rate/s | requests | lost | doubled | early | p50 ms | p99 ms | max ms | shift ms | our lag p99 | our wire lag p99 | |ours - server| p99 | client CPU s (wall s) | load before |');
console.log('| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |');
for (const r of rows) {
  console.log(
    `| ${r.rate} | ${r.scheduled} | ${r.lost} | ${r.doubled} | ${r.early} | ${f(r.p50)} | ${f(r.p99)} | ${f(r.max)} | ${f(r.shiftMs)} | ${f(r.ourLagP99)} | ${f(r.ourWireLagP99)} | ${f(r.viewGapP99)} | ${f(r.cpuSeconds, 1)} (${f(r.wallSeconds, 1)}) | ${r.load} |`,
  );
}
rmSync(work, { recursive: true, force: true });
