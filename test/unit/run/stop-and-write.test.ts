/**
 * Stopping a run and writing it: the signal handler's three steps, cancellation of requests
 * in flight down to their records, the order of a run's writes (manifests last), and the
 * folder store's whole-or-nothing files.
 */
import { EventEmitter } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createOpenAITarget } from '../../../lambdas/adapters/http/openai-target';
import { FsArtifactStore, PARTIAL_FILE_PREFIX } from '../../../lambdas/adapters/local/fs-artifact-store';
import { systemClock } from '../../../lambdas/adapters/system-clock';
import { runFireLoop } from '../../../lambdas/core/fire/fire-loop';
import { computeProfileRecord } from '../../../lambdas/core/metrics/record-metrics';
import { runReplay } from '../../../lambdas/core/run/replay';
import type { CaptureRecord, IngestReport } from '../../../lambdas/core/types';
import { installInterrupt, INTERRUPT_EXIT } from '../../../lambdas/local/interrupt';
import type { ArtifactStore } from '../../../lambdas/ports';
import { scheduledRequest } from '../../support/fixtures';
import { FakeTarget, VirtualClock } from '../../support/virtual-clock';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

const sink = () => {
  let text = '';
  return {
    stream: { write: (c: string) => ((text += c), true) } as unknown as NodeJS.WritableStream,
    text: () => text,
  };
};

describe('installInterrupt', () => {
  function setup(graceMs: number) {
    const source = new EventEmitter();
    const exits: number[] = [];
    const err = sink();
    const interrupt = installInterrupt({
      graceMs,
      stderr: err.stream,
      source: source as unknown as NodeJS.Process,
      exit: (code) => exits.push(code),
    });
    cleanups.push(() => interrupt.dispose());
    return { source, exits, err, interrupt };
  }

  it('first signal stops at once and cancels after the grace; exit code 128 + signal', async () => {
    const { source, interrupt, err } = setup(60);
    expect(interrupt.exitCode()).toBeNull();
    source.emit('SIGTERM');
    expect(interrupt.stop.aborted).toBe(true);
    expect(interrupt.cancel.aborted).toBe(false);
    expect(interrupt.received).toBe('SIGTERM');
    expect(interrupt.exitCode()).toBe(143);
    expect(err.text()).toContain('SIGTERM: no new requests');
    await new Promise((r) => setTimeout(r, 120));
    expect(interrupt.cancel.aborted).toBe(true);
  });

  it('second signal cancels at once; third exits with the first signal code', () => {
    const { source, interrupt, exits } = setup(60_000);
    source.emit('SIGINT');
    expect(interrupt.cancel.aborted).toBe(false);
    source.emit('SIGTERM');
    expect(interrupt.cancel.aborted).toBe(true);
    expect(exits).toEqual([]);
    source.emit('SIGINT');
    expect(exits).toEqual([INTERRUPT_EXIT.SIGINT]);
    expect(interrupt.exitCode()).toBe(130);
  });

  it('dispose removes its handlers', () => {
    const { source, interrupt } = setup(10);
    expect(source.listenerCount('SIGINT')).toBe(1);
    interrupt.dispose();
    expect(source.listenerCount('SIGINT') + source.listenerCount('SIGTERM')).toBe(0);
  });
});

describe('stop, then cancel, through the fire loop and the HTTP target', () => {
  it('sent requests end as cancelled records (499, was_cancelled, cancellation time); unsent ones are aborted', async () => {
    // A server that takes the requests and never answers.
    const server: Server = createServer(() => undefined);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    cleanups.push(() => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))));
    const target = createOpenAITarget({
      name: 'A',
      baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      timeoutMs: 60_000,
      clock: systemClock,
    });
    cleanups.push(() => target.close());
    const stop = new AbortController();
    const cancel = new AbortController();
    const startNs = systemClock.nowNs() + 20_000_000n;
    const requests = [0, 1, 2, 3, 4, 5].map((i) => scheduledRequest(i, i < 3 ? i * 5 : 5000 + i));
    setTimeout(() => stop.abort(), 150);
    let cancelAtNs = 0n;
    setTimeout(() => {
      cancelAtNs = systemClock.nowNs();
      cancel.abort();
    }, 300);
    const outcomes = await runFireLoop(requests, {
      runId: 'r',
      target,
      clock: systemClock,
      startNs,
      workerId: 'w',
      signal: stop.signal,
      cancelSignal: cancel.signal,
    });
    expect(outcomes.map((o) => o.dropReason)).toEqual([null, null, null, 'aborted', 'aborted', 'aborted']);
    for (const outcome of outcomes.slice(0, 3)) {
      const record = computeProfileRecord(outcome, 'p');
      expect(record.error).toMatchObject({ code: 499, type: 'CancelledError' });
      expect(record.metadata.was_cancelled).toBe(true);
      expect(record.metadata.cancellation_time_ns! >= cancelAtNs).toBe(true);
      expect(Number(record.metadata.cancellation_time_ns! - cancelAtNs) / 1e6).toBeLessThan(1000);
    }
  });

  it('cancelling alone also stops scheduling', async () => {
    const clock = new VirtualClock();
    const target = new FakeTarget('A', clock, () => ({ latencyMs: 10 }));
    const cancel = new AbortController();
    cancel.abort();
    const outcomes = await runFireLoop([scheduledRequest(0, 10)], {
      runId: 'r',
      target,
      clock,
      startNs: clock.nowNs(),
      workerId: 'w',
      cancelSignal: cancel.signal,
    });
    expect(outcomes[0]!.dropReason).toBe('aborted');
  });
});

describe('the order of a run\u2019s writes', () => {
  const record = (id: string, line: number): CaptureRecord => ({
    eventId: id,
    inferenceId: null,
    inferenceTimeMs: 1_777_420_800_000,
    hasSubSecondTime: false,
    input: {
      contentType: 'application/json',
      encoding: 'JSON',
      body: Buffer.from(`{"model":"m","messages":[{"role":"user","content":"${id}"}]}`),
    },
    output: null,
    source: { file: 'f.jsonl', line },
  });
  const ingest: IngestReport = {
    files: [],
    skippedFiles: [],
    totals: {
      files: 1,
      linesRead: 2,
      blankLines: 0,
      accepted: 2,
      rejected: 0,
      contentTypeInferred: 0,
      rejectedByReason: {},
    },
  };

  it('every target\u2019s results, then the run\u2019s own files, then the manifests', async () => {
    const puts: string[] = [];
    const store: ArtifactStore = { put: async (key) => void puts.push(key) };
    const clock = new VirtualClock();
    const targets = ['A', 'B'].map((name) => ({
      client: new FakeTarget(name, clock, () => ({ latencyMs: name === 'A' ? 5 : 50 })),
      kind: 'openai-chat' as const,
    }));
    await runReplay({
      runId: 'run',
      records: [record('e1', 1), record('e2', 2)],
      ingestReport: ingest,
      plan: { timeScale: 1, intraSecond: 'spread' },
      targets,
      clock,
      store,
      leadMs: 0,
      inputConfig: () => ({}),
      beforeManifests: async () => {
        await store.put('run/report.html', '');
      },
    });
    const manifests = puts.filter((k) => k.endsWith('run_manifest.json'));
    expect(manifests).toEqual(['run/A/run_manifest.json', 'run/B/run_manifest.json']);
    expect(puts.indexOf('run/report.html')).toBeGreaterThan(
      Math.max(
        ...puts.filter((k) => !k.endsWith('run_manifest.json') && k !== 'run/report.html').map((k) => puts.indexOf(k)),
      ),
    );
    expect(puts.slice(-2)).toEqual(manifests);
    expect(puts[0]).toBe('run/ingest_report.json');
  });
});

describe('FsArtifactStore: whole files or none', () => {
  const root = () => {
    const dir = mkdtempSync(join(tmpdir(), 'cr-store-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    return dir;
  };

  it('writes, replaces, and leaves no temporary file', async () => {
    const dir = root();
    const store = new FsArtifactStore(dir);
    await store.put('run/a/file.json', '{"v":1}');
    await store.put('run/a/file.json', '{"v":2}');
    expect(readFileSync(join(dir, 'run/a/file.json'), 'utf8')).toBe('{"v":2}');
    expect(readdirSync(join(dir, 'run/a'))).toEqual(['file.json']);
  });

  it('a file under its final name is never seen partly written', async () => {
    const dir = root();
    const store = new FsArtifactStore(dir);
    const body = Buffer.alloc(64 * 1024 * 1024, 'z');
    const final = join(dir, 'big.bin');
    const sizes: number[] = [];
    let writing = true;
    const watcher = (async () => {
      while (writing) {
        if (existsSync(final)) sizes.push(statSync(final).size);
        await new Promise((r) => setImmediate(r));
      }
    })();
    await store.put('big.bin', body);
    writing = false;
    await watcher;
    expect(sizes.every((s) => s === body.length)).toBe(true);
    expect(statSync(final).size).toBe(body.length);
  });

  it('a failed write leaves neither the file nor its temporary', async () => {
    const dir = root();
    mkdirSync(join(dir, 'taken', 'x'), { recursive: true });
    const store = new FsArtifactStore(dir);
    // The final name is a non-empty folder: the rename fails.
    await expect(store.put('taken/x', 'data')).rejects.toThrow();
    expect(readdirSync(join(dir, 'taken')).filter((f) => f.startsWith(PARTIAL_FILE_PREFIX))).toEqual([]);
    await expect(store.put('../escape', 'x')).rejects.toThrow(/escapes/);
  });
});
