/**
 * The plan function on a one-hour window, as Lambda would run it: the real handler
 * (makePlanHandler) given one plan message, its captures in generated Data Capture files on
 * the local disk behind the same CaptureObjects port S3 serves in AWS (streamed pass 1,
 * ranged reads in pass 2), the results store in memory and the replay and collect queues
 * counting what is sent (SQS's limits checked, bodies not kept: a queue holding 180,000
 * requests twice would measure the queue, not the function). Nothing fires.
 *
 * The options and what is measured: beside the flags below.
 */
import type { Context, SQSBatchResponse } from 'aws-lambda';
import { createReadStream, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemoryObjectStore } from '../lambdas/adapters/local/memory-store';
import { fileRangeReader } from '../lambdas/adapters/local/capture-files';
import type { CaptureObjects } from '../lambdas/core/scheduled-runs/window-plan';
import { windowRunId } from '../lambdas/core/scheduled-runs/contract';
import { runRecordKey } from '../lambdas/core/pipeline/keys';
import { makePlanHandler, type PlanDeps } from '../lambdas/handlers/plan';
import { ENV, parseRuntimeConfig } from '../lambdas/runtime/config';
import type { MessageQueue } from '../lambdas/ports';
import { writeCaptureFile } from '../test/support/capture-gen';
import { VirtualClock } from '../test/support/virtual-clock';
import { flag } from './args';

/**
 *   npm run bench:window -- [--rate 50] [--files 12] [--minutes 5] [--body-bytes 1300] [--targets 2] [--sequential] [--keep]
 *
 * Default: 12 five-minute files at 50 requests/s (180,000 requests, ~420 MB) in one hour
 * partition, window `lastHours: 1`, targets A and B in parallel. Measured: wall time and CPU
 * time of the invocation, peak RSS (VmHWM of this process, and sampled every 50 ms during the
 * invocation) and heap, messages and bytes sent, against the plan function's limits (15 min,
 * up to 3,008 MB). The files are written to the temp folder and deleted afterwards unless
 * --keep (kept files of the same options are reused).
 */
const rate = flag('--rate', 50);
const fileCount = flag('--files', 12);
const minutes = flag('--minutes', 5);
const bodyBytes = flag('--body-bytes', 1300);
const targetCount = flag('--targets', 2);
const sequential = process.argv.includes('--sequential');
const keep = process.argv.includes('--keep');
const MB = 1024 * 1024;
const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;

const WINDOW_START = Date.UTC(2026, 3, 29, 0, 0, 0);
const FIRED = new Date(WINDOW_START + 3_600_000).toISOString();
const PREFIX = 'datacapture/';
const VARIANT = `${PREFIX}bench-endpoint/AllTraffic/`;
const root = join(tmpdir(), `capture-window-plan-r${rate}-f${fileCount}-m${minutes}-b${bodyBytes}`);

/** Ranged reads of pass 2 (ranged GETs in S3). */
let rangeReads = 0;

/** A local folder as the capture bucket: keys are paths under `root`. */
function folderCaptures(dir: string): CaptureObjects {
  const etagOf = (path: string) => {
    const s = statSync(path);
    return createHash('md5').update(`${s.size}:${s.mtimeMs}`).digest('hex');
  };
  return {
    describe: (key) => `s3://bench-captures/${key}`,
    async listFolders(prefix) {
      const path = join(dir, prefix);
      if (!existsSync(path)) return [];
      return readdirSync(path, { withFileTypes: true })
        .filter((e) => e.isDirectory())
        .map((e) => `${prefix}${e.name}/`)
        .sort();
    },
    async listObjects(prefix) {
      const path = join(dir, prefix);
      if (!existsSync(path)) return [];
      return readdirSync(path, { withFileTypes: true })
        .filter((e) => e.isFile())
        .map((e) => ({
          key: `${prefix}${e.name}`,
          etag: etagOf(join(path, e.name)),
          size: statSync(join(path, e.name)).size,
        }))
        .sort((a, b) => (a.key < b.key ? -1 : 1));
    },
    async open(key, etag) {
      const path = join(dir, key);
      if (!existsSync(path) || etagOf(path) !== etag) return null;
      // 1 MiB chunks, about what an S3 GET's body stream hands over.
      const read = fileRangeReader(path);
      return {
        chunks: createReadStream(path, { highWaterMark: MB }),
        readRange: (start, end) => {
          rangeReads++;
          return read(start, end);
        },
      };
    },
  };
}

/** SQS's limits, checked; what is sent counted, not kept. */
class CountingQueue implements MessageQueue {
  messages = 0;
  bytes = 0;
  batches = 0;
  async sendBatch(entries: { id: string; body: string; delaySeconds: number }[]): Promise<{ failedIds: string[] }> {
    if (entries.length > 10) throw new Error(`SendMessageBatch takes at most 10 entries (got ${entries.length})`);
    const total = entries.reduce((n, e) => n + Buffer.byteLength(e.body), 0);
    if (total > 1_048_576) throw new Error(`BatchRequestTooLong: ${total} bytes`);
    if (entries.some((e) => e.delaySeconds < 0 || e.delaySeconds > 900)) throw new Error('DelaySeconds must be 0-900');
    this.batches++;
    this.messages += entries.length;
    this.bytes += total;
    return { failedIds: [] };
  }
}

function vmHwmMb(): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** The hour's capture files (written once, kept between runs unless asked not to). */
async function writeCaptures(): Promise<{ records: number; bytes: number }> {
  const hourDir = join(root, VARIANT, '2026/04/29/00');
  let records = 0;
  let bytes = 0;
  mkdirSync(hourDir, { recursive: true });
  for (let i = 0; i < fileCount; i++) {
    const start = WINDOW_START + i * minutes * 60_000;
    const name = `${String(i * minutes).padStart(2, '0')}-00-000-bench.jsonl`;
    const path = join(hourDir, name);
    if (!existsSync(path))
      await writeCaptureFile(path, {
        ratePerSecond: rate,
        durationSeconds: minutes * 60,
        startTime: start,
        seed: 1000 + i,
        bodyBytes,
      });
    records += Math.floor(rate * minutes * 60);
    bytes += statSync(path).size;
  }
  console.log(`captures: ${fileCount} files, ${records} records, ${round(bytes / MB)} MB in ${hourDir}`);
  return { records, bytes };
}

/** The plan handler's dependencies: in-memory store and counting queues, the captures read from the folder. */
function benchDeps(): {
  deps: PlanDeps;
  store: MemoryObjectStore;
  replay: CountingQueue;
  collect: CountingQueue;
  logs: string[];
} {
  const clock = new VirtualClock(BigInt(Date.parse(FIRED)) * 1_000_000n + 60_000_000_000n);
  const store = new MemoryObjectStore();
  const replay = new CountingQueue();
  const collect = new CountingQueue();
  const targets = Array.from({ length: targetCount }, (_, i) => ({
    name: String.fromCharCode(65 + i),
    url: `http://${String.fromCharCode(97 + i)}.example`,
  }));
  const config = parseRuntimeConfig({
    [ENV.resultsBucket]: 'results',
    [ENV.replayQueueUrl]: 'https://sqs.us-east-1.amazonaws.com/123456789012/replay',
    [ENV.collectQueueUrl]: 'https://sqs.us-east-1.amazonaws.com/123456789012/collect',
    [ENV.targets]: JSON.stringify(targets),
    [ENV.schedules]: JSON.stringify([
      {
        name: 'bench',
        expression: 'cron(0 1 * * ? *)',
        window: { lastHours: 1 },
        targets: targets.map((t) => t.name),
        dispatch: sequential ? 'sequential' : 'parallel',
      },
    ]),
    [ENV.captureBucket]: 'bench-captures',
    [ENV.capturePrefix]: PREFIX,
  });
  const logs: string[] = [];
  const log = (level: string) => (message: unknown, fields?: unknown) =>
    void logs.push(`${level} ${String(message)} ${JSON.stringify(fields ?? {})}`);
  const deps: PlanDeps = {
    config,
    store,
    replayQueue: replay,
    collectQueue: collect,
    clock,
    logger: { info: log('info'), warn: log('warn'), error: log('error') } as unknown as PlanDeps['logger'],
    notifier: null,
    captures: folderCaptures(root),
    recordEmptyRun: async () => {
      throw new Error('the window should not be empty');
    },
  };
  return { deps, store, replay, collect, logs };
}

async function main(): Promise<void> {
  const { records, bytes } = await writeCaptures();
  const { deps, store, replay, collect, logs } = benchDeps();
  const handler = makePlanHandler(() => deps);

  const baselineRss = process.memoryUsage().rss / MB;
  const hwmBefore = vmHwmMb();
  let peakRss = 0;
  let peakHeap = 0;
  const sampler = setInterval(() => {
    const m = process.memoryUsage();
    peakRss = Math.max(peakRss, m.rss / MB);
    peakHeap = Math.max(peakHeap, m.heapUsed / MB);
  }, 50);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const out = (await handler(
    {
      Records: [
        { messageId: 'm0', body: JSON.stringify({ v: 1, kind: 'window', schedule: 'bench', scheduledTime: FIRED }) },
      ],
    } as never,
    {} as Context,
  )) as SQSBatchResponse;
  const wallS = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  clearInterval(sampler);
  const record = store.text(runRecordKey(windowRunId('bench', FIRED)));
  if (out.batchItemFailures.length > 0 || !record)
    throw new Error(`the invocation failed: ${JSON.stringify(out)}\n${logs.join('\n')}`);
  const planned = logs.find((l) => l.includes('window run planned')) ?? '';
  const scheduled = Number(/"scheduled":(\d+)/.exec(planned)?.[1]);
  const loadavg = readFileSync('/proc/loadavg', 'utf8').trim();
  console.log(
    JSON.stringify(
      {
        window: '1 hour',
        dispatch: sequential ? 'sequential' : 'parallel',
        targets: targetCount,
        files: fileCount,
        captureMb: round(bytes / MB),
        scheduled,
        wallS: round(wallS, 2),
        cpuS: round((cpu.user + cpu.system) / 1e6, 2),
        cpuUserS: round(cpu.user / 1e6, 2),
        peakRssMb: round(Math.max(peakRss, vmHwmMb() > hwmBefore ? vmHwmMb() : 0)),
        vmHwmMb: round(vmHwmMb()),
        baselineRssMb: round(baselineRss),
        peakHeapMb: round(peakHeap),
        rangeReads,
        replayMessages: replay.messages,
        replayMb: round(replay.bytes / MB),
        collectMessages: collect.messages,
        limits: { timeoutS: 900, memoryMb: 3008 },
        loadavg,
        node: process.version,
      },
      null,
      2,
    ),
  );
  if (scheduled !== records) throw new Error(`scheduled ${scheduled} of ${records} records`);
  if (!keep) rmSync(root, { recursive: true, force: true });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
