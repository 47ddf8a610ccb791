/**
 * The wire stamp: a request's time starts when its bytes are handed to the socket, not when
 * the loop picked it up. An event loop blocked between the due time and the write (here: 60
 * ms of synchronous work right after the send starts, as a busy replay would cause) must show
 * in the wire lag, and not in the request's latency or time to first token. And the stamp
 * comes before the write, never after it: a pause right after the write (a process
 * descheduled there, as when the write wakes the server on a busy machine) must not start
 * the request's time after the server already has it. Real targets: the HTTP target over
 * undici and the SageMaker target over the AWS SDK, each against its mock in its own process.
 */
import { SageMakerRuntimeClient } from '@aws-sdk/client-sagemaker-runtime';
import { subscribe } from 'node:diagnostics_channel';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOpenAITarget } from '../../lambdas/adapters/http/openai-target';
import { createSageMakerTarget, sageMakerRuntimeClientConfig } from '../../lambdas/adapters/sagemaker/sagemaker-target';
import { systemClock } from '../../lambdas/adapters/system-clock';
import { watchedWires } from '../../lambdas/adapters/wire-stamps';
import { runFireLoop } from '../../lambdas/core/fire/fire-loop';
import { computeProfileRecord } from '../../lambdas/core/metrics/record-metrics';
import type { TargetClient } from '../../lambdas/ports';
import type { ScheduledRequest } from '../../lambdas/core/types';
import { startMockProcess, type MockProcess } from '../support/processes';
import { readMockSageMakerLog, startMockSageMakerProcess } from '../support/sagemaker-mock';
import { tolerance } from '../support/timing';

/**
 * How long the event loop is held before the write. Longer on a loaded machine (timing.ts),
 * where the mock process itself may wake late to stamp an arrival: the block must stay longer
 * than any such delay to be told apart from it.
 */
const BLOCK_MS = tolerance('wire stamp', 60);
/**
 * How far the mock's arrival stamp may precede our wire stamp: the two processes' clocks are
 * anchored to the wall clock to within a few ms, and on a loaded machine our stamp may be
 * published late after the write.
 */
const ANCHOR_MS = tolerance('wire stamp', 5);
/**
 * Between due times: a request's block is over, and its answer read, before the next one is
 * due, so the next one goes out on the kept-alive connection. A request that had to open a
 * connection is stamped when it is queued on the connecting socket (wire-stamps.ts), and its
 * bytes leave when the event loop next polls: another request's block falling in between
 * would be counted in its time, not in its wire lag.
 */
const SPACING_MS = 2 * BLOCK_MS + 50;

function busyWait(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // the event loop is held, as by heavy synchronous work
  }
}

/**
 * While set, the process is held for BLOCK_MS right after node:http has written a request:
 * node:http publishes `http.client.request.start` once the request is on its socket, and this
 * subscriber, made at load before wire-stamps.ts subscribes (on the first request watched),
 * runs before any stamp taken on that channel.
 */
let pauseAfterWrite = false;
subscribe('http.client.request.start', () => {
  if (pauseAfterWrite) busyWait(BLOCK_MS);
});

/** The product's client (sagemaker-target.ts's config), pointed at the mock. */
function sageMakerClient(url: string): SageMakerRuntimeClient {
  return new SageMakerRuntimeClient({
    ...sageMakerRuntimeClientConfig({ timeoutMs: 10_000 }),
    endpoint: url,
    region: 'us-east-1',
    credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' },
  });
}

/** The target, with the event loop held right after each send starts: after pick-up, before the write. */
function blocking(inner: TargetClient): TargetClient {
  return {
    name: inner.name,
    send(request, signal) {
      const sending = inner.send(request, signal);
      busyWait(BLOCK_MS);
      return sending;
    },
    close: () => inner.close(),
  };
}

const body = Buffer.from(
  JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: 'hi there' }] }),
);

function request(index: number): ScheduledRequest {
  return {
    index,
    offsetMs: index * SPACING_MS,
    captureTimeMs: 0,
    correlationId: `c-${index}`,
    eventId: `e-${index}`,
    inferenceId: null,
    source: { file: 'f.jsonl', line: index + 1 },
    contentType: 'application/json',
    body,
    streaming: true,
    overrides: [],
    capturedUsage: null,
    accept: null,
    capturedOutputSha256: null,
  };
}

const ms = (ns: bigint) => Number(ns) / 1e6;

/** Fires 3 requests through the blocking target; checks where the block was counted. */
async function checkBlockCounted(target: TargetClient) {
  const requests = [0, 1, 2].map(request);
  const startNs = systemClock.nowNs() + 50_000_000n;
  const outcomes = await runFireLoop(requests, {
    runId: 'wire',
    target: blocking(target),
    clock: systemClock,
    startNs,
    workerId: 'w0',
  });
  for (const outcome of outcomes) {
    const result = outcome.result!;
    expect(result.error).toBeNull();
    expect(result.requestWireNs).toBeTypeOf('bigint');
    const wireNs = result.requestWireNs!;
    // The block came after the pick-up and before the write.
    expect(ms(wireNs - result.requestStartNs)).toBeGreaterThanOrEqual(BLOCK_MS - 1);
    const record = computeProfileRecord(outcome, 'rp');
    const replay = record.capture_replay;
    // It shows in the wire lag ...
    expect(replay.wire_lag_ms).toBeCloseTo(ms(wireNs - outcome.scheduledNs), 6);
    expect(replay.wire_lag_ms! - replay.schedule_lag_ms).toBeGreaterThanOrEqual(BLOCK_MS - 1);
    // ... and not in the latency or the TTFT, which start on the wire.
    expect(record.metadata.request_start_ns).toBe(wireNs);
    const latency = record.metrics.request_latency!.value as number;
    expect(latency).toBeCloseTo(ms(result.requestEndNs - wireNs), 6);
    expect(latency).toBeLessThanOrEqual(ms(result.requestEndNs - result.requestStartNs) - (BLOCK_MS - 1));
    const ttft = record.metrics.time_to_first_token!.value as number;
    expect(ttft).toBeCloseTo(ms(result.contentChunkNs[0]! - wireNs), 6);
  }
  // Nothing is left waiting for a write.
  expect(watchedWires()).toBe(0);
  return outcomes;
}

describe('wire stamp: an event loop blocked before the write is lateness, not latency', () => {
  let http: MockProcess;
  let sagemaker: MockProcess;
  let dir: string;
  let logFile: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'wire-stamp-'));
    logFile = join(dir, 'requests.jsonl');
    [http, sagemaker] = await Promise.all([
      startMockProcess(['--ttft-ms', '5', '--itl-ms', '1', '--output-tokens', '4']),
      startMockSageMakerProcess([
        '--ttft-ms',
        '5',
        '--itl-ms',
        '1',
        '--output-tokens',
        '4',
        '--log',
        logFile,
        '--endpoint',
        'ep-chat',
      ]),
    ]);
  });

  afterAll(async () => {
    await Promise.all([http?.stop(), sagemaker?.stop()]);
    await rm(dir, { recursive: true, force: true });
  });

  it('HTTP target (undici): wire lag holds the block; latency and TTFT do not', async () => {
    const target = createOpenAITarget({ name: 'A', baseUrl: http.url, timeoutMs: 10_000, clock: systemClock });
    try {
      await checkBlockCounted(target);
    } finally {
      await target.close();
    }
  });

  it('SageMaker target (AWS SDK over node:http): the same, and the wire stamp precedes the server arrival', async () => {
    const client = sageMakerClient(sagemaker.url);
    const target = createSageMakerTarget({
      name: 'B',
      endpointName: 'ep-chat',
      timeoutMs: 10_000,
      clock: systemClock,
      client,
    });
    try {
      const outcomes = await checkBlockCounted(target);
      const log = await readMockSageMakerLog(logFile);
      for (const outcome of outcomes) {
        const seen = log.find((r) => r.headers['x-amzn-sagemaker-inference-id'] === outcome.requestId);
        expect(seen, `the mock logged ${outcome.requestId}`).toBeDefined();
        // The mock stamps its arrival on its own process's clock, anchored to the wall clock
        // as ours is (to within a few ms: Date.now has ms steps): the write comes first, and
        // the block (which happened before the write) is not between them.
        const gapMs = ms(BigInt(seen!.arrival_ns) - outcome.result!.requestWireNs!);
        expect(gapMs, `${outcome.requestId}: arrival after the wire stamp`).toBeGreaterThan(-ANCHOR_MS);
        expect(gapMs, `${outcome.requestId}: the block not between the wire stamp and the arrival`).toBeLessThan(
          BLOCK_MS - 1,
        );
      }
    } finally {
      await target.close();
      client.destroy();
    }
  });

  it('SageMaker target: a pause right after the write is in the TTFT; the wire stamp precedes the arrival', async () => {
    const client = sageMakerClient(sagemaker.url);
    const target = createSageMakerTarget({
      name: 'B',
      endpointName: 'ep-chat',
      timeoutMs: 10_000,
      clock: systemClock,
      client,
    });
    pauseAfterWrite = true;
    try {
      // The first on a new connection (its bytes leave once it is connected, a later turn of
      // the event loop), the others on the kept-alive socket (written in the same run).
      for (let i = 0; i < 4; i++) {
        const requestId = `pause-${i}`;
        const result = await target.send({
          requestId,
          correlationId: requestId,
          contentType: 'application/json',
          body,
          streaming: true,
        });
        expect(result.error).toBeNull();
        const wireNs = result.requestWireNs!;
        const [seen] = (await readMockSageMakerLog(logFile)).filter(
          (r) => r.headers['x-amzn-sagemaker-inference-id'] === requestId,
        );
        expect(seen, `the mock logged ${requestId}`).toBeDefined();
        // The mock had the request no sooner than the stamp (its clock agrees with ours to
        // within ANCHOR_MS); a stamp after the pause would follow it by ~BLOCK_MS.
        expect(ms(BigInt(seen!.arrival_ns) - wireNs), `request ${i}: arrival after the wire stamp`).toBeGreaterThan(
          -ANCHOR_MS,
        );
        // Never early: the mock's first token leaves 5 ms after its arrival. On the kept-alive
        // socket the pause came after the bytes left: the TTFT holds it (the token is read
        // once it is over); on the new connection the bytes left after it.
        const ttftMs = ms(result.contentChunkNs[0]! - wireNs);
        expect(ttftMs, `request ${i}: TTFT`).toBeGreaterThanOrEqual(i === 0 ? 5 : BLOCK_MS);
      }
    } finally {
      pauseAfterWrite = false;
      await target.close();
      client.destroy();
    }
    expect(watchedWires()).toBe(0);
  });
});
