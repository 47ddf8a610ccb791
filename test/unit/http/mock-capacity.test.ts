/**
 * The OpenAI-compatible mock's capacity (`--slots`, lambdas/mocks/capacity.ts) over real HTTP,
 * the mock in its own process as a target is: requests beyond the slots wait in a FIFO queue
 * and their first token comes later by the wait, token spacing unchanged; without `--slots`
 * nothing waits.
 *
 * Times are compared on one timeline: the mock logs each arrival (epoch ns, its process), the
 * product's HTTP client stamps each chunk (epoch ns, this process). Lower bounds are exact
 * (no token before its due time, 2 ms for the two processes' clock anchors); upper bounds
 * are loose, the machine being shared, but below the service time, so that a request that
 * queued cannot pass for one that did not.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createOpenAITarget } from '../../../lambdas/adapters/http/openai-target';
import { systemClock } from '../../../lambdas/adapters/system-clock';
import { serviceTimeMs } from '../../../lambdas/mocks/capacity';
import { startMockProcess } from '../../support/processes';

const TTFT_MS = 100;
const ITL_MS = 50;
const TOKENS = 7;
/** S = TTFT + (n - 1) * ITL: how long a request holds its slot. */
const SERVICE_MS = 400;
const EARLY_MS = 2;
/** Below S: a request late by a whole queue position fails. */
const LATE_MS = 300;

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

interface Observed {
  /** When the mock saw the request arrive (ms on the shared epoch timeline). */
  arrivalMs: number;
  /** When this process received each content chunk (ms, same timeline). */
  chunkMs: number[];
}

/** `count` concurrent streaming requests to a mock process started with `args`; in arrival order. */
async function burst(args: string[], count: number): Promise<Observed[]> {
  const dir = await mkdtemp(join(tmpdir(), 'mock-capacity-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const logFile = join(dir, 'requests.jsonl');
  const mock = await startMockProcess([
    '--ttft-ms',
    String(TTFT_MS),
    '--itl-ms',
    String(ITL_MS),
    '--output-tokens',
    String(TOKENS),
    '--log',
    logFile,
    ...args,
  ]);
  cleanups.push(() => mock.stop());
  const target = createOpenAITarget({ name: 't', baseUrl: mock.url, timeoutMs: 20_000, clock: systemClock });
  cleanups.push(() => target.close());
  const body = Buffer.from(
    JSON.stringify({
      model: 'm',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      stream_options: { include_usage: true },
    }),
  );
  const send = (prefix: string) =>
    Promise.all(
      Array.from({ length: count }, (_, i) =>
        target.send({
          requestId: `${prefix}${i}`,
          correlationId: 'c',
          contentType: 'application/json',
          body,
          streaming: true,
        }),
      ),
    );
  // A first burst opens the connections and warms both sides, so that the measured one arrives close together.
  await send('warm-');
  const results = await send('r');
  await mock.stop(); // flushes the log
  const logged = (await readFile(logFile, 'utf8'))
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line) as { arrival_ns: string; headers: { 'x-request-id': string } })
    .filter((entry) => entry.headers['x-request-id'].startsWith('r'));
  expect(logged).toHaveLength(count);
  return logged
    .map((entry) => {
      const result = results[Number(entry.headers['x-request-id'].slice(1))]!;
      expect(result.error).toBeNull();
      expect(result.contentChunkNs).toHaveLength(TOKENS);
      return {
        arrivalMs: Number(BigInt(entry.arrival_ns)) / 1e6,
        chunkMs: result.contentChunkNs.map((ns) => Number(ns) / 1e6),
      };
    })
    .sort((a, b) => a.arrivalMs - b.arrivalMs);
}

/** Token k of each request against start + TTFT + k * ITL: never early, at most LATE_MS late. */
function expectOnTimeline(observed: readonly Observed[], startsMs: readonly number[]): void {
  observed.forEach(({ chunkMs }, i) => {
    chunkMs.forEach((t, k) => {
      const due = startsMs[i]! + TTFT_MS + k * ITL_MS;
      expect(t, `request ${i} (in arrival order), token ${k}`).toBeGreaterThanOrEqual(due - EARLY_MS);
      expect(t, `request ${i} (in arrival order), token ${k}`).toBeLessThan(due + LATE_MS);
    });
  });
}

describe('mock-server --slots, in its own process', () => {
  it('the service time is what the test assumes', () => {
    expect(serviceTimeMs(TTFT_MS, ITL_MS, TOKENS)).toBe(SERVICE_MS);
  });

  it(
    'with 2 slots, 6 concurrent requests: each starts when it arrives or when the request two places ahead ' +
      'finishes, so TTFT grows by S per queue position; ITL unchanged',
    async () => {
      const observed = await burst(['--slots', '2'], 6);
      const spreadMs = observed.at(-1)!.arrivalMs - observed[0]!.arrivalMs;
      // The positions below hold when every request arrives before the first slot frees.
      expect(spreadMs).toBeLessThan(SERVICE_MS / 2);
      const starts: number[] = [];
      observed.forEach(({ arrivalMs }, k) =>
        starts.push(k < 2 ? arrivalMs : Math.max(arrivalMs, starts[k - 2]! + SERVICE_MS)),
      );
      // Queue position k / 2 (rounded down): a wait of that many service times, less how much later than the first it arrived.
      starts.forEach((start, k) => {
        const wait = start - observed[k]!.arrivalMs;
        expect(wait).toBeGreaterThanOrEqual(Math.floor(k / 2) * SERVICE_MS - spreadMs);
        expect(wait).toBeLessThanOrEqual(Math.floor(k / 2) * SERVICE_MS);
      });
      expectOnTimeline(observed, starts);
    },
  );

  it('without --slots nothing waits: 6 concurrent requests all get their first token at arrival + TTFT', async () => {
    const observed = await burst([], 6);
    expectOnTimeline(
      observed,
      observed.map((o) => o.arrivalMs),
    );
  });
});
