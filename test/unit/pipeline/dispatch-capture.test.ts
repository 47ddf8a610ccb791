/**
 * dispatchCapture, the one dispatch path of file runs and window runs: from pass 1 to the
 * run record, each kind's plan for targets of different kinds, the collect messages, the
 * capacity verdict and the outcome's log line; a run already recorded sends nothing again.
 * The settings come from a deployment's config as the handlers give them (runSetupOf).
 */
import { describe, expect, it } from 'vitest';
import { MemoryObjectStore } from '../../../lambdas/adapters/local/memory-store';
import { MemoryQueue } from '../../../lambdas/adapters/local/memory-queue';
import { readCapturePass, type CaptureSource } from '../../../lambdas/core/pipeline/capture-pass';
import { runRecordSchema } from '../../../lambdas/core/pipeline/common';
import { dispatchCapture, targetKinds, type CaptureRunDeps } from '../../../lambdas/core/pipeline/dispatch-capture';
import { runRecordKey, runStartKey } from '../../../lambdas/core/pipeline/keys';
import type { PlanOptions } from '../../../lambdas/core/plan/plan';
import { runSetupOf } from '../../../lambdas/handlers/run-input';
import { ENV, parseRuntimeConfig } from '../../../lambdas/runtime/config';
import { VirtualClock } from '../../support/virtual-clock';
import { captureLine } from '../capture/capture-fixtures';

const NOW_NS = 1_800_000_000_000_000_000n;
const LEAD_MS = 20_000;
const chat = (n: number) => JSON.stringify({ messages: [{ role: 'user', content: `hi ${n}` }] });
/** [eventId, second, content type, data]: chat records, a CSV one (the chat target drops it) and a copy of c0. */
const LINES: [string, number, string, string][] = [
  ['c0', 0, 'application/json', chat(0)],
  ['v1', 1, 'text/csv', '1,2,3'],
  ['c2', 2, 'application/json', chat(2)],
  ['c0', 3, 'application/json', chat(0)],
];
const FILE = Buffer.from(
  LINES.map(([eventId, second, type, data]) =>
    captureLine({
      input: { observedContentType: type, data, encoding: type === 'text/csv' ? 'CSV' : 'JSON' },
      meta: { eventId, inferenceTime: `2026-04-29T00:00:0${second}Z` },
    }),
  ).join('\n') + '\n',
);
const source: CaptureSource = {
  name: 's3://captures/f.jsonl',
  open: async () => ({
    chunks: (async function* () {
      yield FILE;
    })(),
    readRange: async (start, end) => FILE.subarray(start, end),
  }),
  goneReason: 'gone',
};

function setup(env: Record<string, string> = {}) {
  const clock = new VirtualClock(NOW_NS);
  const config = parseRuntimeConfig({
    [ENV.resultsBucket]: 'results',
    [ENV.replayQueueUrl]: 'https://sqs.us-east-1.amazonaws.com/123456789012/replay',
    [ENV.collectQueueUrl]: 'https://sqs.us-east-1.amazonaws.com/123456789012/collect',
    [ENV.targets]: JSON.stringify([
      { name: 'chat', url: 'http://chat.example' },
      { name: 'sm', kind: 'sagemaker', endpointName: 'ep', region: 'us-east-1' },
    ]),
    [ENV.leadMs]: String(LEAD_MS),
    ...env,
  });
  const logs: { level: string; message: string; fields: Record<string, unknown> }[] = [];
  const log = (level: string) => (message: unknown, fields?: unknown) =>
    void logs.push({ level, message: String(message), fields: (fields ?? {}) as Record<string, unknown> });
  const published: unknown[] = [];
  const deps: CaptureRunDeps = {
    store: new MemoryObjectStore(),
    replayQueue: new MemoryQueue(() => clock.nowNs()),
    collectQueue: new MemoryQueue(() => clock.nowNs()),
    clock,
    logger: { info: log('info'), warn: log('warn') } as unknown as CaptureRunDeps['logger'],
    metrics: { publish: (sets: unknown) => void published.push(sets) } as unknown as CaptureRunDeps['metrics'],
  };
  return { deps, config, logs, published };
}

async function run(s: ReturnType<typeof setup>, extra: { startNs?: bigint } = {}) {
  const setup = runSetupOf(s.config, s.config.targets, 1);
  const kinds = targetKinds(setup.targets);
  const planOptions: PlanOptions = { runId: 'run-d', targetKind: kinds[0]!, timeScale: 1, intraSecond: 'spread' };
  const pass = await readCapturePass([source], { ...planOptions, kinds, nowMs: Date.UTC(2026, 4, 1) });
  return dispatchCapture(s.deps, {
    runId: 'run-d',
    setup,
    pass,
    planOptions,
    ...extra,
    startMoves: false,
    ingestReport: pass.report,
    inputConfig: { mode: 'test', capture: source.name },
    log: { message: 'test run dispatched', fields: { key: 'f.jsonl' } },
  });
}

const recordOf = async (s: ReturnType<typeof setup>) =>
  runRecordSchema.parse(JSON.parse((await s.deps.store.get(runRecordKey('run-d')))!.toString()));

describe('dispatchCapture', () => {
  it('records the run with each kind its plan, the copy not scheduled, the run inputConfig between the tool and the settings', async () => {
    const s = setup();
    expect(targetKinds(runSetupOf(s.config, s.config.targets, 1).targets)).toEqual(['openai-chat', 'sagemaker']);
    const result = await run(s);
    expect(result.status).toBe('scheduled');
    const record = await recordOf(s);
    expect(record.targets).toEqual(['chat', 'sm']);
    expect(record.notScheduledByReason).toEqual({ duplicate: 1 });
    // One set of shards is cut; each target's are those holding records it takes: the chat target's
    // plan drops the CSV record, the endpoint's takes all three.
    const count = (shards: { requests: number }[]) => shards.reduce((n, x) => n + x.requests, 0);
    expect(count(record.shards)).toBe(3);
    expect(count(record.targetShards!.chat!)).toBe(2);
    expect(count(record.targetShards!.sm!)).toBe(3);
    const inputConfig = record.inputConfig as Record<string, unknown>;
    expect(Object.keys(inputConfig).slice(0, 3)).toEqual(['tool', 'mode', 'capture']);
    expect(inputConfig).toMatchObject({
      tool: 'capture-replay',
      mode: 'test',
      request_timeout_ms: s.config.requestTimeoutMs,
    });
    // Not moved: the run starts `lead` from now.
    expect(record.startNs).toBe(String(NOW_NS + BigInt(LEAD_MS) * 1_000_000n));
  });

  it('tells the collector of every target and logs the outcome with the run fields', async () => {
    const s = setup();
    await run(s);
    const collect = (s.deps.collectQueue as MemoryQueue).messages.map((m) => JSON.parse(m.body) as { target: string });
    expect(collect.map((m) => m.target).sort()).toEqual(['chat', 'sm']);
    const line = s.logs.find((l) => l.message === 'test run dispatched');
    expect(line?.fields).toMatchObject({ runId: 'run-d', key: 'f.jsonl', status: 'scheduled', scheduled: 3 });
    expect(line?.fields.lateShards).toBe(0);
  });

  it('an explicit start is kept', async () => {
    const s = setup();
    const startNs = NOW_NS + 90_000n * 1_000_000n;
    await run(s, { startNs });
    expect((await recordOf(s)).startNs).toBe(String(startNs));
    expect(JSON.parse((await s.deps.store.get(runStartKey('run-d')))!.toString()).startNs).toBe(String(startNs));
  });

  it('a run recorded before sends nothing again and logs it as a duplicate', async () => {
    const s = setup();
    await run(s);
    const sent = [
      (s.deps.replayQueue as MemoryQueue).messages.length,
      (s.deps.collectQueue as MemoryQueue).messages.length,
    ];
    const again = await run(s);
    expect(again.status).toBe('duplicate');
    expect([
      (s.deps.replayQueue as MemoryQueue).messages.length,
      (s.deps.collectQueue as MemoryQueue).messages.length,
    ]).toEqual(sent);
    expect(s.logs.filter((l) => l.message === 'test run dispatched').map((l) => l.fields.status)).toEqual([
      'scheduled',
      'duplicate',
    ]);
  });

  it('weighs the lanes against the fire function: a warning naming the setting, and the metrics', async () => {
    const s = setup({
      [ENV.fireConcurrency]: '1',
      [ENV.fireConcurrencySetting]: 'maxFireConcurrency',
      [ENV.stackName]: 'st',
    });
    await run(s);
    const capacity = s.logs.filter((l) => l.fields.lanesAtOnce !== undefined);
    expect(capacity).toHaveLength(1);
    expect(capacity[0]!.fields.concurrency).toBe(1);
    expect(s.published).toHaveLength(1);
  });
});
