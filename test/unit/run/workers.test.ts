/**
 * The fire loop over worker threads (lambdas/local/fire-workers.ts) against a real HTTP server
 * in its own process: exactly one outcome per scheduled request, in plan order, with the ids
 * and indices one thread gives; a worker that crashes has its unreported requests counted
 * `lost` and its error said; stop and cancel reach every worker with exact accounting. The
 * server's own log is the witness of what was sent.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../../lambdas/adapters/system-clock';
import { runFireLoop, type FireLoopOptions } from '../../../lambdas/core/fire/fire-loop';
import { deterministicUuid } from '../../../lambdas/core/ids';
import type { FireOutcome, ReplayPlan, ScheduledRequest } from '../../../lambdas/core/types';
import {
  ONE_THREAD_RATE,
  peakRate,
  startFireWorkers,
  workerCount,
  type FireWorkers,
} from '../../../lambdas/local/fire-workers';
import { createTargetClient, type TargetClientSpec } from '../../../lambdas/local/target-clients';
import { scheduledRequest } from '../../support/fixtures';
import { bundledFireWorker, loggedArrivals, startMockProcess, type MockProcess } from '../../support/processes';
import { until } from '../../support/until';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

const ms = (n: number) => BigInt(Math.round(n * 1e6));
const RUN = 'workers-test';
const TARGET = 'mock';

/** `count` requests, one every `everyMs`, with bodies the mock answers. */
function plan(count: number, everyMs: number): ScheduledRequest[] {
  return Array.from({ length: count }, (_, i) =>
    scheduledRequest(i, i * everyMs, {
      body: Buffer.from(JSON.stringify({ model: 'm', messages: [{ role: 'user', content: `q${i}` }], max_tokens: 1 })),
    }),
  );
}

async function server(extra: string[] = []): Promise<{
  mock: MockProcess;
  spec: TargetClientSpec;
  arrivals: (atLeast?: number) => Promise<Map<string, number>>;
}> {
  const dir = mkdtempSync(join(tmpdir(), 'cr-workers-'));
  const log = join(dir, 'requests.jsonl');
  const mock = await startMockProcess([
    '--ttft-ms',
    '0',
    '--itl-ms',
    '0',
    '--output-tokens',
    '1',
    '--no-precise-timers',
    '--log',
    log,
    ...extra,
  ]);
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  cleanups.push(() => mock.stop());
  return {
    mock,
    spec: { kind: 'http', name: TARGET, baseUrl: mock.url, path: '/v1/chat/completions', timeoutMs: 60_000 },
    /**
     * Stops the server (its log is complete then): how many times each X-Request-ID arrived.
     * With `atLeast`, first waits (up to 20 s) until its log has that many lines: a server
     * starved on a loaded machine may not yet have read requests its sockets hold, and a stop
     * closes those connections unread.
     */
    async arrivals(atLeast = 0) {
      await until(() => loggedArrivals(log) >= atLeast, `${atLeast} arrivals in the server's log`, 20_000).catch(
        () => undefined,
      );
      await mock.stop();
      const counts = new Map<string, number>();
      for (const line of readFileSync(log, 'utf8').split('\n')) {
        if (!line) continue;
        const id = (JSON.parse(line) as { headers: { 'x-request-id': string } }).headers['x-request-id'];
        counts.set(id, (counts.get(id) ?? 0) + 1);
      }
      return counts;
    },
  };
}

/**
 * Two fire threads, each loading `entry`: by default the worker's module bundled once per run
 * (the product's entry registers tsx and compiles the worker in every thread; the CLI's runs in
 * test/e2e/workers.test.ts use it).
 */
async function workers(spec: TargetClientSpec, entry?: URL) {
  const errors: string[] = [];
  const pool: FireWorkers = await startFireWorkers({
    workers: 2,
    wait: 'precise',
    specs: [spec],
    onError: (m) => errors.push(m),
    entry: entry ?? (await bundledFireWorker()),
  });
  cleanups.push(() => pool.close());
  return { pool, errors };
}

/** Loop options as runReplay gives them; `target` is this thread's client, which workers do not use. */
function loopOptions(spec: TargetClientSpec, startNs: bigint, extra: Partial<FireLoopOptions> = {}) {
  const reported: FireOutcome[] = [];
  const client = createTargetClient(spec, systemClock);
  cleanups.push(() => client.close());
  const options: FireLoopOptions = {
    runId: RUN,
    target: client,
    clock: systemClock,
    startNs,
    workerId: 'worker_local',
    onOutcome: (o) => reported.push(o),
    ...extra,
  };
  return { options, reported };
}

/** What must not depend on the thread that fired: ids, indices, schedule, how it ended. */
const shape = (outcomes: readonly FireOutcome[], startNs: bigint) =>
  outcomes.map((o) => ({
    index: o.request.index,
    requestId: o.requestId,
    offsetNs: o.scheduledNs - startNs,
    workerId: o.workerId,
    target: o.target,
    dropReason: o.dropReason,
    status: o.result?.httpStatus ?? null,
    error: o.result?.error ?? null,
    usage: o.result?.usage ?? null,
  }));

describe('how many fire threads', () => {
  const planOf = (offsets: number[]): ReplayPlan => ({
    requests: offsets.map((t, i) => scheduledRequest(i, t)),
    incompatible: [],
    excluded: {},
    scheduleZeroMs: 0,
    durationMs: offsets.at(-1) ?? 0,
  });

  it('peak rate: the busiest 1,000 ms window; parallel targets add up, sequential ones do not', () => {
    const a = planOf([0, 100, 999, 1000, 1500, 5000]); // [0, 1000): 3; [999, 1999): 3
    const b = planOf([0, 10, 20]);
    expect(peakRate([a], 'parallel')).toBe(3);
    expect(peakRate([a, b], 'parallel')).toBe(6);
    expect(peakRate([a, b], 'sequential')).toBe(3);
    expect(peakRate([planOf([])], 'parallel')).toBe(0);
  });

  it('auto: this thread below ONE_THREAD_RATE, then one per ONE_THREAD_RATE up to the cores; never more than --max-in-flight', () => {
    expect(workerCount('auto', ONE_THREAD_RATE - 1, 8)).toBe(1);
    expect(workerCount('auto', ONE_THREAD_RATE, 8)).toBe(1);
    expect(workerCount('auto', ONE_THREAD_RATE + 1, 8)).toBe(2);
    // A core is left for the rest: two cores fire from one thread, three from two workers.
    expect(workerCount('auto', ONE_THREAD_RATE * 5, 2)).toBe(1);
    expect(workerCount('auto', ONE_THREAD_RATE * 5, 3)).toBe(2);
    expect(workerCount('auto', ONE_THREAD_RATE * 5, 8)).toBe(5);
    expect(workerCount(3, 10, 2)).toBe(3);
    expect(workerCount(4, 10_000, 8, 2)).toBe(2);
  });
});

describe('fire workers against a real server process', () => {
  it('3,000 requests over 2 workers: one outcome each, in plan order, as one thread gives them; each arrives once', async () => {
    const { spec, arrivals } = await server();
    const requests = plan(3000, 0.5); // 2,000/s for 1.5 s
    const { pool, errors } = await workers(spec);

    const startNs = systemClock.nowNs() + ms(300);
    const many = loopOptions(spec, startNs);
    const outcomes = await pool.run(requests, many.options, { index: 0, name: TARGET });
    expect(errors).toEqual([]);
    expect(outcomes.map((o) => o.request)).toEqual(requests);
    expect(outcomes.every((o, i) => o.request === requests[i])).toBe(true); // the plan's own objects, not copies
    expect(new Set(many.reported).size).toBe(3000); // progress saw each once
    expect(outcomes.filter((o) => o.dropReason !== null || o.result?.error || o.result?.httpStatus !== 200)).toEqual(
      [],
    );
    expect(outcomes.every((o) => o.requestId === deterministicUuid(RUN, TARGET, o.request.index))).toBe(true);

    const oneStart = systemClock.nowNs() + ms(100);
    const one = await runFireLoop(requests, loopOptions(spec, oneStart).options);
    expect(shape(outcomes, startNs)).toEqual(shape(one, oneStart));

    // Two runs with the same ids: every request arrived exactly twice, none three times.
    const seen = await arrivals();
    expect(seen.size).toBe(3000);
    expect([...seen.values()].every((n) => n === 2)).toBe(true);
  }, 120_000);

  it('a worker that crashes: its unreported requests are counted lost, the others are untouched, the error is said', async () => {
    const { spec, arrivals } = await server();
    const requests = plan(600, 2); // 500/s for 1.2 s; worker 1 crashes ~400 ms after its job arrives
    const { pool, errors } = await workers(spec, new URL('../../support/crashing-fire-worker.mjs', import.meta.url));
    const startNs = systemClock.nowNs() + ms(200);
    const { options, reported } = loopOptions(spec, startNs);
    const outcomes = await pool.run(requests, options, { index: 0, name: TARGET });

    expect(outcomes.map((o) => o.request.index)).toEqual(requests.map((r) => r.index));
    expect(reported).toHaveLength(600);
    const lost = outcomes.filter((o) => o.dropReason === 'lost');
    // Round-robin: worker 1 had the even positions, worker 2 the odd ones.
    expect(lost.length).toBeGreaterThan(0);
    expect(lost.every((o) => o.request.index % 2 === 0)).toBe(true);
    expect(
      outcomes
        .filter((o) => o.request.index % 2 === 1)
        .every((o) => o.dropReason === null && o.result?.httpStatus === 200),
    ).toBe(true);
    expect(
      lost.every(
        (o) =>
          o.requestId === deterministicUuid(RUN, TARGET, o.request.index) &&
          o.scheduledNs === startNs + ms(o.request.offsetMs),
      ),
    ).toBe(true);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(
      /fire worker 1 of 2 failed \(mock\): fire worker crashed on purpose; its requests not reported are counted as dropped \(lost\)/,
    );

    // What was reported as sent did arrive, once.
    const seen = await arrivals();
    for (const o of outcomes.filter((x) => x.dropReason === null)) expect(seen.get(o.requestId)).toBe(1);
    // A later run on the same pool: the dead worker's share is lost at once, said again.
    const again = await pool.run(requests.slice(0, 4), loopOptions(spec, systemClock.nowNs()).options, {
      index: 0,
      name: TARGET,
    });
    expect(again.map((o) => o.dropReason === 'lost')).toEqual([true, false, true, false]);
  }, 120_000);

  it('stop reaches every worker: unsent requests aborted, exactly those sent reached the server; cancel ends ' +
    'the ones in flight', async () => {
    // Answers take 60 s: every request sent is still in flight when the run is cancelled.
    const { spec, arrivals } = await server(['--ttft-ms', '60000']);
    const requests = plan(1000, 2); // 2 s
    const { pool, errors } = await workers(spec);
    const stop = new AbortController();
    const cancel = new AbortController();
    const startNs = systemClock.nowNs() + ms(200);
    const { options, reported } = loopOptions(spec, startNs, { signal: stop.signal, cancelSignal: cancel.signal });
    setTimeout(() => stop.abort(new Error('stop')), 200 + 800).unref();
    setTimeout(() => cancel.abort(new Error('cancel')), 200 + 1200).unref();
    const began = Date.now();
    const outcomes = await pool.run(requests, options, { index: 0, name: TARGET });
    expect(Date.now() - began).toBeLessThan(30_000); // not the 60 s answers

    expect(errors).toEqual([]);
    expect(outcomes.map((o) => o.request.index)).toEqual(requests.map((r) => r.index));
    expect(reported).toHaveLength(1000);
    const aborted = outcomes.filter((o) => o.dropReason === 'aborted');
    const sent = outcomes.filter((o) => o.dropReason === null);
    expect(aborted.length + sent.length).toBe(1000);
    expect(aborted.length).toBeGreaterThan(0);
    expect(sent.length).toBeGreaterThan(0);
    // Cancelled, not answered: the cancel reached both workers' requests in flight.
    expect(sent.every((o) => o.result?.error?.type === 'CancelledError' && o.result.error.code === 499)).toBe(true);
    expect(new Set(sent.map((o) => o.request.index % 2)).size).toBe(2);
    // In each worker's share, due order: everything sent comes before everything aborted.
    for (const parity of [0, 1]) {
      const share = outcomes.filter((o) => o.request.index % 2 === parity).map((o) => o.dropReason);
      expect(share.indexOf('aborted')).toBe(share.lastIndexOf(null) + 1);
    }
    // The server saw exactly the requests whose bytes reached the socket, once (a request
    // fired and cancelled before it was written is not seen).
    const onWire = sent.filter((o) => o.result?.requestWireNs != null);
    expect(onWire.length).toBeGreaterThan(0);
    const seen = await arrivals(onWire.length);
    expect(new Set(seen.keys())).toEqual(new Set(onWire.map((o) => o.requestId)));
    expect([...seen.values()].every((n) => n === 1)).toBe(true);
  }, 120_000);
});
