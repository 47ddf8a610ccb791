/**
 * Lateness as a skeptic measures it: at the server. For each rate, a Poisson schedule of
 * captured requests (millisecond inferenceTimes, so the schedule is exact, not spread) is
 * replayed by the CLI (its own process) against an independent arrival-stamping server
 * (bench/arrival-server.mjs, its own process, no code shared with ours); the two are joined
 * on X-Request-ID.
 *
 * What is measured, and the options: beside the flags below.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { flag } from './args';
import { selfSignedCertificate } from './certificate';
import { cliOf } from './cli-path';
import {
  BENCH_ROOT as root,
  fixed as f,
  quantile,
  serverView,
  startArrivalServer,
  writeCaptures,
} from './lateness-common';

/**
 * Joined on X-Request-ID:
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
 *     machine's load average before the run;
 *   - p99 and max of the first second of the schedule (requests due before 1,000 ms), of the
 *     rest, and of the whole run: the first second is where connections are opened and code
 *     is cold;
 *   - the connections the server accepted, and how many it had when the first request arrived
 *     (the preflight's included).
 *
 *   node --import tsx bench/server-lateness.ts [--seconds 10] [--rates 200,1000,2000,5000]
 *     [--workers auto|n] [--wait precise|coarse] [--rehearsal n] [--lead ms] [--streaming]
 *     (passed to the CLI's replay; default auto, precise, the CLI's rehearsal, --lead 2000, not
 *     streamed)
 *     [--repo <checkout>]   (another checkout's built CLI, e.g. the commit before a change)
 *     [--first-detail]   (the first second's lateness by 100 ms, at the server and by our own
 *     wire lag, and each second's, on stderr)
 *     [--median-ms M --p99-ms P --tokens-per-second T]   (the server's answers: lognormal
 *     response times, streamed as tokens to requests with "stream": true, i.e. with
 *     --streaming; P = M: every answer takes M ms; default: every answer at once)
 *     [--tls]   (the server over TLS, a certificate for 127.0.0.1 the CLI trusts through
 *     NODE_EXTRA_CA_CERTS, as it trusts a real endpoint's: each connection a handshake)
 *     [--cli-node-args "<flags>"]   (Node's and V8's flags for the CLI alone, e.g. --trace-opt,
 *     which NODE_OPTIONS does not take)
 *     [--cli-stdout <file>]   (the CLI's stdout, and what V8 traces there, into a file; each
 *     run's own when there are several: <file>.<run>)
 */
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
const lead = passThrough('--lead', '2000');
const streaming = process.argv.includes('--streaming');
const cliNodeArgs = passThrough('--cli-node-args', '').split(/\s+/).filter(Boolean);
const cliStdout = passThrough('--cli-stdout', '');
/** The server's response times and tokens, when given (arrival-server.mjs's options). */
const given = ['--median-ms', '--p99-ms', '--tokens-per-second'].flatMap((name) =>
  process.argv.includes(name) ? [name, passThrough(name, '')] : [],
);
const answers = given.length > 0 ? given.join(' ') : '--median-ms 0 (at once)';
const serverArgs = given.length > 0 ? given : ['--median-ms', '0'];
/** Requests due before this offset are the first second's. */
const FIRST_MS = 1000;
const work = mkdtempSync(join(tmpdir(), 'cr-lateness-'));
const tls = process.argv.includes('--tls');
const certificate = tls ? selfSignedCertificate(work) : null;
if (certificate) {
  serverArgs.push('--tls-cert', certificate.cert, '--tls-key', certificate.key);
}

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
  firstP99: number;
  firstMax: number;
  restP99: number;
  restMax: number;
  connections: number;
  connectionsAtFirst: number | null;
  shiftMs: number;
  ourLagP99: number;
  ourWireLagP99: number | null;
  /** p99 of |(arrival - scheduled - shift) - our reported lag|: how far our own view is from the server's. */
  viewGapP99: number;
  cpuSeconds: number;
  wallSeconds: number;
  load: string;
}

const cliScript = await cliOf(passThrough('--repo', root));
const rows: Row[] = [];
for (const [run, rate] of rates.entries()) {
  // A rate may be given more than once (repeated runs): each run its own folder.
  const dir = join(work, `r${rate}-${run}`);
  const captures = join(dir, 'captures.jsonl');
  mkdirSync(dir, { recursive: true });
  const scheduledCount = writeCaptures(captures, rate, seconds, rate);
  const server = await startArrivalServer(join(dir, 'arrivals.txt'), serverArgs);
  const load = loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
  const timeFile = join(dir, 'time.txt');
  const stdoutFd = cliStdout ? openSync(rates.length > 1 ? `${cliStdout}.${run}` : cliStdout, 'w') : null;
  const cli = spawn(
    '/usr/bin/time',
    [
      '-f',
      '%U %S %e',
      '-o',
      timeFile,
      process.execPath,
      ...cliNodeArgs,
      cliScript,
      'replay',
      captures,
      '--url',
      server.url,
      '--out',
      dir,
      '--run-id',
      'run',
      '--no-progress',
      '--timeout',
      '30000',
      '--workers',
      workers,
      '--wait',
      wait,
      '--lead',
      lead,
      ...(streaming ? ['--streaming'] : []),
      ...(rehearsal !== null ? ['--rehearsal', rehearsal] : []),
    ],
    {
      stdio: ['ignore', stdoutFd ?? 'ignore', 'inherit'],
      env: {
        ...process.env,
        ...(certificate ? { NODE_EXTRA_CA_CERTS: certificate.cert } : {}),
      },
    },
  );
  const [code] = (await once(cli, 'exit')) as [number];
  if (stdoutFd !== null) closeSync(stdoutFd);
  const arrivals = await server.stop();
  if (code !== 0) console.error(`rate ${rate}: the CLI exited ${code}`);
  const [user, system, wall] = readFileSync(timeFile, 'utf8').trim().split(/\s+/).map(Number) as [
    number,
    number,
    number,
  ];

  const records = readFileSync(join(dir, 'run', 'target', 'profile_export.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const wire = /"wire_lag_ms":([-\d.e]+)/.exec(l)?.[1];
      return {
        id: /"x_request_id":"([^"]+)"/.exec(l)?.[1] as string,
        scheduledNs: BigInt(/"scheduled_ns":(\d+)/.exec(l)?.[1] ?? '0'),
        lagMs: Number(/"schedule_lag_ms":([-\d.e]+)/.exec(l)?.[1]),
        wireLagMs: wire !== undefined ? Number(wire) : null,
      };
    });
  const view = serverView(records, arrivals);
  const ourLags = records.map((r) => r.lagMs).sort((a, b) => a - b);
  const wires = records
    .filter((r) => r.wireLagMs !== null)
    .map((r) => r.wireLagMs as number)
    .sort((a, b) => a - b);
  // Schedule zero is the first request's due time; the first second, the rest.
  const zeroNs = records.reduce((min, r) => (r.scheduledNs < min ? r.scheduledNs : min), records[0]?.scheduledNs ?? 0n);
  const inFirst = new Set(records.filter((r) => Number(r.scheduledNs - zeroNs) / 1e6 < FIRST_MS).map((r) => r.id));
  const firstLate = [...view.latenessById]
    .filter(([id]) => inFirst.has(id))
    .map(([, late]) => late)
    .sort((a, b) => a - b);
  const restLate = [...view.latenessById]
    .filter(([id]) => !inFirst.has(id))
    .map(([, late]) => late)
    .sort((a, b) => a - b);
  const counts = server.counts();
  if (process.argv.includes('--first-detail')) {
    // The first second by 100 ms of due time: where the lateness builds up.
    const slices = Array.from({ length: FIRST_MS / 100 }, () => [] as number[]);
    const ourSlices = Array.from({ length: FIRST_MS / 100 }, () => [] as number[]);
    for (const r of records) {
      const at = Math.floor(Number(r.scheduledNs - zeroNs) / 1e8);
      const late = view.latenessById.get(r.id);
      if (at < slices.length && late !== undefined) slices[at]?.push(late);
      if (at < ourSlices.length) ourSlices[at]?.push(r.wireLagMs ?? r.lagMs);
    }
    const bySecond = Array.from({ length: Math.ceil(seconds) }, () => [] as number[]);
    for (const r of records) {
      const late = view.latenessById.get(r.id);
      if (late !== undefined) bySecond[Math.floor(Number(r.scheduledNs - zeroNs) / 1e9)]?.push(late);
    }
    const show = (l: number[]) => (
      l.sort((a, b) => a - b),
      `${l.length} ${f(quantile(l, 0.5), 1)}/${f(quantile(l, 0.99), 1)}/${f(l[l.length - 1] ?? NaN, 1)}`
    );
    console.error(`rate ${rate}, first second by 100 ms (requests p50/p99/max ms): ${slices.map(show).join(' | ')}`);
    console.error(`rate ${rate}, the same by our wire lag: ${ourSlices.map(show).join(' | ')}`);
    console.error(`rate ${rate}, by second (requests p50/p99/max ms): ${bySecond.map(show).join(' | ')}`);
  }
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
    firstP99: quantile(firstLate, 0.99),
    firstMax: firstLate[firstLate.length - 1] ?? NaN,
    restP99: quantile(restLate, 0.99),
    restMax: restLate[restLate.length - 1] ?? NaN,
    connections: counts.connections,
    connectionsAtFirst: counts.connectionsAtFirstRequest,
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

console.log(
  `server-side lateness, ${cliScript}, ${seconds} s per rate, --workers ${workers} --wait ${wait} ` +
    `--rehearsal ${rehearsal ?? 'default'} --lead ${lead}${streaming ? ' --streaming' : ''}, server ` +
    `${answers}${tls ? ' over TLS' : ''}, node ${process.version}, ${cpus().length} CPUs ` +
    `(${cpus()[0]?.model ?? '?'})\n`,
);
console.log(
  '| rate/s | requests | lost | doubled | early | p50 ms | p99 ms | max ms | first s p99 (max) | rest p99 ' +
    '(max) | shift ms | our lag p99 | our wire lag p99 | |ours - server| p99 | connections (at 1st request) | ' +
    'client CPU s (wall s) | load before |',
);
console.log(
  '| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |',
);
for (const r of rows) {
  console.log(
    `| ${r.rate} | ${r.scheduled} | ${r.lost} | ${r.doubled} | ${r.early} | ${f(r.p50)} | ${f(r.p99)} | ` +
      `${f(r.max)} | ${f(r.firstP99)} (${f(r.firstMax)}) | ${f(r.restP99)} (${f(r.restMax)}) | ${f(r.shiftMs)} ` +
      `| ${f(r.ourLagP99)} | ${f(r.ourWireLagP99)} | ${f(r.viewGapP99)} | ${r.connections} ` +
      `(${r.connectionsAtFirst ?? 'n/a'}) | ${f(r.cpuSeconds, 1)} (${f(r.wallSeconds, 1)}) | ${r.load} |`,
  );
}
rmSync(work, { recursive: true, force: true });
