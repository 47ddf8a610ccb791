/**
 * What the server-side lateness benchmarks share (bench/server-lateness.ts for the CLI,
 * bench/fire-lateness.ts for the fire function's bundle): the same Poisson captures, the same
 * independent arrival-stamping server (bench/arrival-server.mjs, its own process), and the
 * same reading of its arrivals against our scheduled times.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export const BENCH_ROOT = join(fileURLToPath(import.meta.url), '..', '..');

/** xorshift32: a seeded uniform in (0, 1). */
function uniform(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return (x + 0.5) / 4294967296;
  };
}

/**
 * A capture file at `rate` per second for `seconds`, millisecond times (seeded by `seed`);
 * returns its request count. `poisson` (default): a Poisson process. `even`: one request every
 * 1/rate s, a fire lane at the most the sizing gives it in every second (random times within
 * each second would make some whole seconds of the plan, which start at its first request,
 * busier than the rate, and the ingest would deal them to two lanes: shards.ts lanesFor). Each
 * prompt is `promptChars` long (a few characters by default).
 */
export function writeCaptures(
  path: string,
  rate: number,
  seconds: number,
  seed: number,
  promptChars = 0,
  arrivals: 'poisson' | 'even' = 'poisson',
): number {
  const random = uniform(seed);
  const times: number[] = [];
  if (arrivals === 'poisson') {
    for (let t = (-Math.log(random()) / rate) * 1000; t < seconds * 1000; t += (-Math.log(random()) / rate) * 1000)
      times.push(t);
  } else {
    // One every 1/rate s: any whole second holds at most ceil(rate), as a lane dealt every n-th
    // request of a busy slot sends (shards.ts), so the ingest cuts one lane at the lane rate.
    for (let k = 0; k < rate * seconds; k++) times.push((k * 1000) / rate);
  }
  const start = Date.UTC(2026, 3, 29, 0, 0, 0);
  const lines = times.map((t, i) => {
    // A millisecond time written with its fraction, even .000: the schedule is exact.
    const time = new Date(start + Math.floor(t)).toISOString();
    const content = promptChars > 0 ? `q${i} `.padEnd(promptChars, 'lorem ipsum ') : `q${i}`;
    const body = JSON.stringify({
      model: 'm',
      messages: [{ role: 'user', content }],
      max_tokens: promptChars > 0 ? 1024 : 1,
    });
    return JSON.stringify({
      captureData: {
        endpointInput: { observedContentType: 'application/json', mode: 'INPUT', data: body, encoding: 'JSON' },
        endpointOutput: {
          observedContentType: 'application/json',
          mode: 'OUTPUT',
          data: '{"usage":{"prompt_tokens":1,"completion_tokens":1}}',
          encoding: 'JSON',
        },
      },
      eventMetadata: { eventId: `ev-${rate}-${i}`, inferenceTime: time },
      eventVersion: '0',
    });
  });
  writeFileSync(path, lines.join('\n') + '\n');
  return lines.length;
}

/** Linear interpolation between closest ranks (numpy's default) of a sorted array. */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return NaN;
  const rank = q * (sorted.length - 1);
  const lo = Math.floor(rank);
  const hi = Math.min(lo + 1, sorted.length - 1);
  return (sorted[lo] as number) + ((sorted[hi] as number) - (sorted[lo] as number)) * (rank - lo);
}

export interface ArrivalServer {
  url: string;
  child: ChildProcess;
  /** Stops the server, which writes its arrivals, and reads them: request id -> arrival epoch ns, in order. */
  stop(): Promise<Map<string, bigint[]>>;
  /** After stop: what it answered. */
  counts(): ServerCounts;
}

export interface ServerCounts {
  requests: number;
  streams: number;
  tokens: number;
  /** Streams a client closed before their end. */
  cut: number;
  unidentified: number;
  /** Connections accepted, and how many had been when the first request arrived (its own included; the preflight's too). */
  connections: number;
  connectionsAtFirstRequest: number | null;
}

/**
 * Starts bench/arrival-server.mjs with its options (`args`: response times, tokens, TLS); with
 * none, it answers every request at once. `wrap` runs it inside a command (a CPU group).
 */
export async function startArrivalServer(
  arrivalsFile: string,
  args: readonly string[] = ['--median-ms', '0'],
  wrap: (argv: string[]) => { command: string; args: string[] } = ([c, ...a]) => ({ command: c as string, args: a }),
): Promise<ArrivalServer> {
  const run = wrap([process.execPath, join(BENCH_ROOT, 'bench/arrival-server.mjs'), arrivalsFile, ...args]);
  const child = spawn(run.command, run.args, { stdio: ['ignore', 'pipe', 'inherit'] });
  const [line] = (await once(createInterface({ input: child.stdout! }), 'line')) as [string];
  return {
    url: (JSON.parse(line) as { url: string }).url,
    child,
    async stop() {
      child.kill('SIGTERM');
      await once(child, 'exit');
      const arrivals = new Map<string, bigint[]>();
      for (const row of readFileSync(arrivalsFile, 'utf8').split('\n')) {
        if (!row) continue;
        // `<id> <arrival ns>`, then what the server adds (its connection's counts).
        const [id, ns] = row.split(' ') as [string, string];
        const list = arrivals.get(id) ?? [];
        list.push(BigInt(ns));
        arrivals.set(id, list);
      }
      return arrivals;
    },
    counts: () => JSON.parse(readFileSync(`${arrivalsFile}.counts.json`, 'utf8')) as ServerCounts,
  };
}

/** Two clock anchors of at most 20 us each, and some slack: an arrival earlier than this before its due time was sent early. */
export const EARLY_MS = 0.05;

/** One of our records as the benchmarks join it: its id, due time and our own view of its lag. */
export interface SentRecord {
  id: string;
  scheduledNs: bigint;
  /** Our schedule lag (ms): due -> send started. */
  lagMs: number;
  /** Our wire lag (ms): due -> bytes handed to the socket, when recorded. */
  wireLagMs: number | null;
}

export interface ServerView {
  arrived: number;
  doubled: number;
  early: number;
  /** The smallest lateness of the run (loopback and parsing time that every request pays), subtracted from every lateness. */
  shiftMs: number;
  /** Server arrival - scheduled - shift, by request id. */
  latenessById: Map<string, number>;
  /** The same, sorted. */
  sorted: number[];
  /** p99 of |(arrival - scheduled - shift) - our reported lag|: how far our own view is from the server's. */
  viewGapP99: number;
}

/** Our records joined with the server's arrivals on X-Request-ID. */
export function serverView(
  records: readonly SentRecord[],
  arrivals: ReadonlyMap<string, readonly bigint[]>,
): ServerView {
  const raw = new Map<string, number>();
  const ours = new Map<string, number>();
  let doubled = 0;
  for (const r of records) {
    const seen = arrivals.get(r.id);
    if (!seen) continue;
    if (seen.length > 1) doubled += seen.length - 1;
    raw.set(r.id, Number((seen[0] as bigint) - r.scheduledNs) / 1e6);
    ours.set(r.id, r.wireLagMs ?? r.lagMs);
  }
  const shiftMs = raw.size > 0 ? Math.min(...raw.values()) : NaN;
  const latenessById = new Map([...raw].map(([id, late]) => [id, late - shiftMs]));
  const gaps = [...latenessById].map(([id, late]) => Math.abs(late - (ours.get(id) as number))).sort((a, b) => a - b);
  return {
    arrived: raw.size,
    doubled,
    early: [...raw.values()].filter((l) => l < -EARLY_MS).length,
    shiftMs,
    latenessById,
    sorted: [...latenessById.values()].sort((a, b) => a - b),
    viewGapP99: quantile(gaps, 0.99),
  };
}

/** A figure for a markdown table: n/a when it is not a finite number. */
export const fixed = (v: number | null, d = 2) => (v === null || !Number.isFinite(v) ? 'n/a' : v.toFixed(d));
