/**
 * A run's fire invocations against the fire function's concurrency (core/pipeline/capacity.ts):
 * the lanes it needs at once, how late the lanes beyond the concurrency go out at least, the
 * setting to raise and its value; dispatch writing it into the run's ingest report; and how
 * the handlers say it (a warning naming the setting; the metrics as CloudWatch EMF, written by
 * Powertools' Metrics whatever the log level).
 */
import { describe, expect, it } from 'vitest';
import { MemoryObjectStore } from '../../../lambdas/adapters/local/memory-store';
import { MemoryQueue } from '../../../lambdas/adapters/local/memory-queue';
import { emfDocuments } from '../../../lambdas/adapters/aws/cloudwatch-metrics';
import type { MetricSet } from '../../../lambdas/core/metrics/cloudwatch';
import {
  assessCapacity,
  busiestSecond,
  lanesAtOnce,
  type CapacityReport,
  type FireCapacity,
  type LaneNeed,
} from '../../../lambdas/core/pipeline/capacity';
import { runPrefix } from '../../../lambdas/core/pipeline/keys';
import { cutShards } from '../../../lambdas/core/pipeline/shards';
import { dispatchRun } from '../../../lambdas/core/pipeline/stages';
import type { IngestReport } from '../../../lambdas/core/types';
import { logCapacity } from '../../../lambdas/core/pipeline/dispatch-capture';
import { deriveFireSizing } from '../../../lib/sizing';
import { scheduledRequest } from '../../support/fixtures';
import { VirtualClock } from '../../support/virtual-clock';

/** Lanes of requests due at the given offsets (ms), each sorted. */
function lanesOf(dues: readonly (readonly number[])[]): LaneNeed[] {
  return dues.map((d) => ({
    firstDueMs: d[0]!,
    lastDueMs: d.at(-1)!,
    dueBefore: (ms) => d.filter((x) => x < ms).length,
  }));
}

const peak = (concurrency: number, amplify = 1): FireCapacity => ({
  concurrency,
  setting: 'peakRequestsPerSecond',
  amplify,
});

/** `count` requests `spacingMs` apart from 0, dealt to lanes as dispatch deals them. */
function dealt(count: number, spacingMs: number, sharding: { slotMs: number; maxShardRequests: number }) {
  const items = Array.from({ length: count }, (_, i) => ({ offsetMs: i * spacingMs }));
  const shards = cutShards(items, sharding);
  return { items, shards, lanes: lanesOf(shards.map((s) => s.requests.map((r) => r.offsetMs))) };
}

/**
 * The default stack's sharding and concurrency (lib/sizing.ts at its defaults: peak 50 requests/s, one target, lead
 * 20 s, timeout 300 s, responses 2 s median, 30 s p99).
 */
const DEFAULT_SIZING = deriveFireSizing({
  peakRequestsPerSecond: 50,
  peakLatencySeconds: 30,
  peakLatencyMedianSeconds: 2,
  targets: 1,
  leadSeconds: 20,
  requestTimeoutSeconds: 300,
});

describe('lanes at once', () => {
  it('counts the invocations alive together, each from its lead before its first due time to its last', () => {
    // lead 5: [-5, 9], [5, 19], [15, 29]: two at once at most; an end and a start at one instant do not overlap.
    expect(
      lanesAtOnce(
        lanesOf([
          [0, 9],
          [10, 19],
          [20, 29],
        ]),
        5,
      ),
    ).toBe(2);
    expect(
      lanesAtOnce(
        lanesOf([
          [0, 9],
          [14, 19],
        ]),
        5,
      ),
    ).toBe(1);
    // Three lanes of one slot and one of the next, due while they still send.
    expect(
      lanesAtOnce(
        lanesOf([
          [0, 50],
          [1, 51],
          [2, 52],
          [55, 90],
        ]),
        10,
      ),
    ).toBe(4);
  });

  it('the busiest whole second of due time', () => {
    expect(busiestSecond([0, 10, 999, 1000, 1500, 2999].map((offsetMs) => ({ offsetMs })))).toBe(3);
    expect(busiestSecond([])).toBe(0);
  });
});

describe('assessCapacity', () => {
  it('within the concurrency: on time, nothing to raise', () => {
    const r = assessCapacity(
      lanesOf([
        [0, 9],
        [1, 10],
        [2, 11],
      ]),
      { leadMs: 5, busiestSecond: 3, capacity: peak(5) },
    );
    expect(r).toMatchObject({
      lanesAtOnce: 3,
      concurrency: 5,
      onTime: true,
      expectedLatenessSeconds: 0,
      lateLanes: 0,
      lateRequests: 0,
      raise: null,
    });
  });

  it(
    'a 10 s capture at 1,000 requests/s on the default stack: the lane beyond its concurrency waits for the ' +
      'first invocation to send its last request',
    () => {
      const slotMs = DEFAULT_SIZING.slotSeconds * 1000;
      const { items, shards, lanes } = dealt(10_000, 1, { slotMs, maxShardRequests: DEFAULT_SIZING.maxShardRequests });
      const n = Math.ceil(1000 / (DEFAULT_SIZING.maxShardRequests / DEFAULT_SIZING.slotSeconds)); // the lanes the per-second rule gives
      const c = DEFAULT_SIZING.maxConcurrency;
      expect(shards).toHaveLength(n);
      expect(n, 'the default stack is sized below 1,000 requests/s').toBeGreaterThan(c);
      // Request i (due at i ms) is in lane i mod n. Lanes 0..c-1 start; the first of them to end
      // sends its last request at min over j < c of the last i = j (mod n); lane c's first is due at c ms.
      const lastOf = (j: number) => 9999 - ((9999 - j) % n);
      const firstEnd = Math.min(...Array.from({ length: c }, (_, j) => lastOf(j)));
      const waiting = Array.from({ length: n - c }, (_, k) => c + k);
      const r = assessCapacity(lanes, { leadMs: 20_000, busiestSecond: busiestSecond(items), capacity: peak(c) });
      expect(r).toMatchObject({
        lanesAtOnce: n,
        concurrency: c,
        onTime: false,
        lateLanes: n - c,
        busiestSecondRequests: 1000,
        raise: { setting: 'peakRequestsPerSecond', value: 1000 },
      });
      if (n - c === 1) {
        expect(r.expectedLatenessSeconds).toBe((firstEnd - c) / 1000);
        // Lane c's requests due before it starts: c, c + n, ... below firstEnd.
        expect(r.lateRequests).toBe(Math.ceil((firstEnd - c) / n));
      }
      expect(r.expectedLatenessSeconds).toBeGreaterThan(9);
      expect(r.lateRequests).toBeLessThanOrEqual(waiting.reduce((sum, lane) => sum + shards[lane]!.requests.length, 0));
      expect(r.reason).toMatch(/peakRequestsPerSecond to 1000/);
      expect(r.reason).toMatch(/lower bound/);
    },
  );

  it('the value it names fits: the stack sized for that peak runs the lanes the run needs at once', () => {
    const { items, lanes } = dealt(10_000, 1, {
      slotMs: DEFAULT_SIZING.slotSeconds * 1000,
      maxShardRequests: DEFAULT_SIZING.maxShardRequests,
    });
    const r = assessCapacity(lanes, {
      leadMs: 20_000,
      busiestSecond: busiestSecond(items),
      capacity: peak(DEFAULT_SIZING.maxConcurrency),
    });
    const resized = deriveFireSizing({
      peakRequestsPerSecond: r.raise!.value,
      peakLatencySeconds: 30,
      peakLatencyMedianSeconds: 2,
      targets: 1,
      leadSeconds: 20,
      requestTimeoutSeconds: 300,
    });
    expect(resized.maxConcurrency).toBeGreaterThanOrEqual(r.lanesAtOnce);
    expect(
      assessCapacity(lanes, {
        leadMs: 20_000,
        busiestSecond: busiestSecond(items),
        capacity: peak(resized.maxConcurrency),
      }).onTime,
    ).toBe(true);
  });

  it('every lane waits its turn: with one invocation at a time, each lane starts when the one before sends its last request', () => {
    // Three lanes of a slot, due 0-900, 100-1000, 200-1100 ms; lead 50; one at a time.
    const lanes = lanesOf([
      [0, 300, 600, 900],
      [100, 400, 700, 1000],
      [200, 500, 800, 1100],
    ]);
    const r = assessCapacity(lanes, { leadMs: 50, busiestSecond: 12, capacity: peak(1) });
    // Lane 1 starts at 900 (800 late), lane 2 at 1000 (800 late); 3 + 3 requests due before they start.
    expect(r).toMatchObject({
      lanesAtOnce: 3,
      onTime: false,
      expectedLatenessSeconds: 0.8,
      lateLanes: 2,
      lateRequests: 6,
    });
  });

  it('lanes that wait only into their lead are on time, and still name the setting', () => {
    // Slot 0's lane sends until 9, slot 1's is picked up at 5 (lead 5) and due at 10: it waits 4 ms of its lead.
    const r = assessCapacity(
      lanesOf([
        [0, 9],
        [10, 19],
      ]),
      { leadMs: 5, busiestSecond: 20, capacity: peak(1) },
    );
    expect(r).toMatchObject({
      lanesAtOnce: 2,
      onTime: true,
      expectedLatenessSeconds: 0,
      raise: { setting: 'peakRequestsPerSecond', value: 20 },
    });
    expect(r.reason).toMatch(/within their lead/);
  });

  it('names maxFireConcurrency when that is where the concurrency comes from, and peakRequestsPerSecond before amplify', () => {
    const lanes = lanesOf([
      [0, 500],
      [1, 501],
      [2, 502],
    ]);
    expect(
      assessCapacity(lanes, {
        leadMs: 10,
        busiestSecond: 900,
        capacity: { concurrency: 2, setting: 'maxFireConcurrency', amplify: 1 },
      }).raise,
    ).toEqual({ setting: 'maxFireConcurrency', value: 3 });
    expect(assessCapacity(lanes, { leadMs: 10, busiestSecond: 900, capacity: peak(2, 4) }).raise).toEqual({
      setting: 'peakRequestsPerSecond',
      value: 225,
    });
    expect(assessCapacity(lanes, { leadMs: 10, busiestSecond: 901, capacity: peak(2, 4) }).raise).toEqual({
      setting: 'peakRequestsPerSecond',
      value: 226,
    });
  });
});

describe('dispatch writes the capacity into the ingest report', () => {
  const S = 1_800_000_000_000_000_000n;
  const REPORT: IngestReport = {
    files: [],
    skippedFiles: [],
    totals: {
      files: 1,
      linesRead: 120,
      blankLines: 0,
      accepted: 120,
      rejected: 0,
      contentTypeInferred: 0,
      rejectedByReason: {},
    },
  };

  async function dispatch(targets: string[], capacity: FireCapacity | undefined) {
    const clock = new VirtualClock(S);
    const store = new MemoryObjectStore();
    // 12 requests a second for 10 s, 10 a lane at most: 12 lanes of one 10 s slot; lane j sends
    // requests j, j + 12, ... (due at i x 1000/12 ms), its last, 108 + j, after 9 s.
    const requests = Array.from({ length: 120 }, (_, i) => scheduledRequest(i, (i * 1000) / 12));
    const result = await dispatchRun({
      runId: 'run-cap',
      plan: { requests, incompatible: [], excluded: {}, scheduleZeroMs: 0, durationMs: (119 * 1000) / 12 },
      targets,
      startNs: S + 20n * 1_000_000_000n,
      leadMs: 20_000,
      graceMs: 60_000,
      inputConfig: {},
      notScheduledByReason: {},
      sharding: { slotMs: 10_000, maxShardRequests: 10, maxMessageBytes: 768 * 1024, maxInlineBodyBytes: 64 * 1024 },
      ingestReport: REPORT,
      ...(capacity ? { fireCapacity: capacity } : {}),
      store,
      queue: new MemoryQueue(() => clock.nowNs()),
      clock,
    });
    if (result.status !== 'scheduled') throw new Error('not scheduled');
    const report = JSON.parse(
      new TextDecoder().decode((await store.get(`${runPrefix('run-cap')}ingest_report.json`))!),
    ) as IngestReport & { capacity?: CapacityReport };
    return { result, report };
  }

  it('every lane of every target that starts together; the report keeps its counts', async () => {
    const { result, report } = await dispatch(['A', 'B'], peak(20));
    expect(report.totals).toEqual(REPORT.totals);
    // 12 lanes x 2 targets alive together, 20 may run: lanes 0-9 of both targets. Lane 10 of each
    // waits for lane 0's last request (9,000 ms), lane 11 for lane 1's (9,083 ms); lane 10's first
    // is due at 833 ms: 8,167 ms late. Each waiting lane's requests due before it starts: 9.
    expect(report.capacity).toMatchObject({
      lanesAtOnce: 24,
      concurrency: 20,
      onTime: false,
      lateLanes: 4,
      lateRequests: 4 * 9,
      expectedLatenessSeconds: 8.167,
      busiestSecondRequests: 12,
      raise: { setting: 'peakRequestsPerSecond', value: 12 },
    });
    expect(result.capacity).toEqual(report.capacity);
  });

  it("without the fire function's concurrency the report is written as given", async () => {
    const { result, report } = await dispatch(['A'], undefined);
    expect(report).toEqual(REPORT);
    expect(result.capacity).toBeUndefined();
  });
});

describe('how the handlers say it', () => {
  const NOW = 1_800_000_000_123;
  function logged(capacity: CapacityReport, stackName: string | undefined) {
    const lines: { level: string; message: string; fields: Record<string, unknown> }[] = [];
    const published: { sets: readonly MetricSet[]; timestampMs: number }[] = [];
    const at = (level: string) => (message: string, fields: Record<string, unknown>) =>
      void lines.push({ level, message, fields });
    logCapacity({ info: at('info'), warn: at('warn') } as never, {
      runId: 'r1',
      stackName,
      capacity,
      nowMs: NOW,
      metrics: { publish: (sets, timestampMs) => void published.push({ sets, timestampMs }) },
    });
    // The documents Powertools writes of what was published (its warning on a timestamp far from now set aside).
    const documents = published.flatMap((p) =>
      emfDocuments(p.sets, 'capture-replay', p.timestampMs, { debug() {}, info() {}, warn() {}, error() {} }),
    );
    return { lines, documents };
  }
  const late = assessCapacity(
    lanesOf([
      [0, 9_000],
      [5, 9_005],
    ]),
    { leadMs: 100, busiestSecond: 250, capacity: peak(1) },
  );

  it('a late run: a warning naming peakRequestsPerSecond and its value; its metrics as a CloudWatch EMF document of their own', () => {
    const { lines, documents } = logged(late, 'CaptureReplay');
    const [line, ...more] = lines;
    expect(more).toEqual([]);
    expect(line!.level).toBe('warn');
    expect(line!.message).toBe(
      `run expected late by at least ${late.expectedLatenessSeconds} s: raise peakRequestsPerSecond to 250`,
    );
    expect(late.expectedLatenessSeconds).toBe(8.995);
    expect(line!.fields).toMatchObject({
      runId: 'r1',
      raise: 'peakRequestsPerSecond',
      raiseTo: 250,
      expectedLatenessSeconds: 8.995,
    });
    expect(line!.fields).not.toHaveProperty('_aws');
    expect(documents).toEqual([
      {
        _aws: {
          Timestamp: NOW,
          CloudWatchMetrics: [
            {
              Namespace: 'capture-replay',
              Dimensions: [['Stack']],
              Metrics: [
                { Name: 'ExpectedLatenessSeconds', Unit: 'Seconds' },
                { Name: 'UndersizedRuns', Unit: 'Count' },
              ],
            },
          ],
        },
        Stack: 'CaptureReplay',
        ExpectedLatenessSeconds: 8.995,
        UndersizedRuns: 1,
      },
    ]);
  });

  it("a run on time: one info line, its metrics at 0; without the stack's name, no metric", () => {
    const onTime = assessCapacity(lanesOf([[0, 9]]), { leadMs: 5, busiestSecond: 1, capacity: peak(2) });
    const { lines, documents } = logged(onTime, 'S');
    expect(lines.map((l) => l.level)).toEqual(['info']);
    expect(documents.map((d) => [d.Stack, d.ExpectedLatenessSeconds, d.UndersizedRuns])).toEqual([['S', 0, 0]]);
    expect(logged(late, undefined).documents).toEqual([]);
  });
});
