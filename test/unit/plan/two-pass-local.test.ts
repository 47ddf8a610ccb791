/**
 * The local CLI's two-pass planning (a columnar LineIndex, then only the selected lines read
 * back) gives exactly the plans buildPlan gives from every record in memory, for every
 * option the CLI passes and both target kinds; and bodies too deep for JSON.stringify are
 * rewritten, not a stack overflow.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LineIndex, fileRangeReader, localPlanner, readCaptures } from '../../../lambdas/adapters/local/capture-files';
import { DuplicateFilter } from '../../../lambdas/core/capture/duplicates';
import { IngestReportBuilder } from '../../../lambdas/core/capture/ingest-report';
import { LineIndex as CoreLineIndex } from '../../../lambdas/core/plan/line-index';
import { buildPlan, stringifyDeep, type PlanOptions } from '../../../lambdas/core/plan/plan';
import { twoPassPlanner } from '../../../lambdas/core/plan/read-back';
import { seededRandom } from '../../../lambdas/core/random';
import type { CaptureRecord, ReplayPlan, TargetKind } from '../../../lambdas/core/types';

const T0 = Date.UTC(2026, 3, 29, 0, 0, 0);

/**
 * A seeded capture: chat bodies (some streaming with usage), CSV, non-chat JSON, whole and fractional times, shared
 * seconds, duplicates.
 */
function captureText(seed: number, count: number): string {
  const random = seededRandom(seed);
  const lines: string[] = [];
  for (let i = 0; i < count; i++) {
    const second = Math.floor(random() * 20);
    const fraction = random();
    const time = new Date(T0 + second * 1000 + (fraction < 0.2 ? Math.floor(random() * 1000) : 0)).toISOString();
    const inferenceTime =
      fraction < 0.2 ? time : fraction < 0.3 ? time.replace(/\.\d+Z$/, '.000Z') : time.replace(/\.\d+Z$/, 'Z');
    const kind = random();
    const [type, encoding, data] =
      kind < 0.1
        ? ['text/csv', 'CSV', `${i},2,3`]
        : kind < 0.2
          ? ['application/json', 'JSON', JSON.stringify({ instances: [[i, 1]] })]
          : kind < 0.3
            ? [
                'application/json',
                'BASE64',
                Buffer.from(
                  JSON.stringify({
                    messages: [{ role: 'user', content: `b64 ${i}` }],
                    stream: true,
                    stream_options: { include_usage: true },
                  }),
                ).toString('base64'),
              ]
            : [
                'application/json',
                'JSON',
                JSON.stringify({
                  model: 'm1',
                  messages: [{ role: 'user', content: `hello ${i} ${'é'.repeat(i % 5)}` }],
                  max_tokens: 16,
                }),
              ];
    const line = JSON.stringify({
      captureData: {
        endpointInput: { observedContentType: type, mode: 'INPUT', data, encoding },
        endpointOutput: {
          observedContentType: 'application/json',
          mode: 'OUTPUT',
          data: '{"usage":{"prompt_tokens":3,"completion_tokens":4}}',
          encoding: 'JSON',
        },
      },
      eventMetadata: {
        eventId: `ev-${i % 97 === 5 ? 5 : i}`,
        ...(i % 3 === 0 ? { inferenceId: `inf-${i}` } : {}),
        inferenceTime,
      },
      eventVersion: '0',
    });
    lines.push(line);
    if (i % 50 === 7) lines.push('not json', '');
  }
  return lines.join(i3(seed)) + '\n';
}
const i3 = (seed: number) => (seed % 2 === 0 ? '\n' : '\r\n');

const dir = mkdtempSync(join(tmpdir(), 'two-pass-local-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Files in a folder; records read once into memory and once into a LineIndex, by the same reader. */
async function readBoth(
  files: Record<string, string | Buffer>,
): Promise<{ records: CaptureRecord[]; index: LineIndex; root: string }> {
  const root = mkdtempSync(join(dir, 'case-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(root, name), text);
  const records: CaptureRecord[] = [];
  for await (const r of readCaptures(root, new IngestReportBuilder(), new DuplicateFilter())) records.push(r);
  const index = new LineIndex();
  for await (const r of readCaptures(root, new IngestReportBuilder(), new DuplicateFilter())) index.add(r);
  return { records, index, root };
}

/** Plans compared with bodies as text (a rewritten body is a new buffer, equal bytes). */
const comparable = (plan: ReplayPlan) =>
  JSON.parse(
    JSON.stringify(plan, (_k, v: unknown) => (v instanceof Uint8Array ? Buffer.from(v).toString('utf8') : v)),
  ) as unknown;

describe('LineIndex + twoPassPlanner = buildPlan', () => {
  const base = { runId: 'run-x', timeScale: 1, intraSecond: 'spread' } as const;
  const variants: [string, Omit<PlanOptions, 'runId' | 'targetKind'>][] = [
    ['as captured', { timeScale: 1, intraSecond: 'spread' }],
    [
      'streaming + model, time scale 3',
      { timeScale: 3, intraSecond: 'spread', forceStreaming: true, modelOverride: 'm2' },
    ],
    ['burst, window', { timeScale: 1, intraSecond: 'burst', startOffsetMs: 2500, endOffsetMs: 9000 }],
    [
      'sample and limit',
      { timeScale: 0.5, intraSecond: 'spread', sampleRate: 0.4, seed: 7, limit: 60, forceStreaming: true },
    ],
    ['limit 1', { timeScale: 1, intraSecond: 'spread', limit: 1 }],
  ];
  for (const seed of [1, 2, 3]) {
    for (const [name, options] of variants) {
      it(`seed ${seed}, ${name}: same plan for both kinds, selected lines read back only`, async () => {
        const { records, index } = await readBoth({
          'a.jsonl': captureText(seed, 300),
          'b.jsonl': captureText(seed + 10, 150),
        });
        const reads: [string, number, number][] = [];
        const planner = twoPassPlanner(index, (file) => {
          const read = fileRangeReader(file);
          return (start, end) => {
            reads.push([file, start, end]);
            return read(start, end);
          };
        });
        for (const targetKind of ['openai-chat', 'sagemaker', 'openai-chat'] as TargetKind[]) {
          const full: PlanOptions = { ...base, ...options, targetKind };
          expect(comparable(await planner(full))).toEqual(comparable(buildPlan(records, full)));
        }
        // Read once, for the first target; only the selected lines' bytes.
        const selected = buildPlan(records, { ...base, ...options, targetKind: 'sagemaker' }).requests.length;
        const readBytes = reads.reduce((n, [, s, e]) => n + e - s, 0);
        if (options.limit === 1) expect(reads).toHaveLength(1);
        expect(selected).toBeGreaterThan(0);
        expect(readBytes).toBeLessThanOrEqual(
          records.reduce((n, r) => n + r.span!.end - r.span!.start, 0) + reads.length * 256 * 1024,
        );
        expect(index.length).toBe(records.length);
      });
    }
  }

  it('grows past its first columns, keeps capture order, and is released once planned', async () => {
    const index = new CoreLineIndex();
    const { records } = await readBoth({ 'big.jsonl': captureText(9, 2500) });
    for (const r of records) index.add(r);
    const options: PlanOptions = { ...base, targetKind: 'openai-chat' };
    const plan = index.planOnce(options);
    expect(plan.entries.map((e) => [e.record.source.line, e.offsetMs])).toEqual(
      buildPlan(records, options)
        .requests.concat(buildPlan(records, options).incompatible.map((i) => i.request))
        .sort((a, b) => a.index - b.index)
        .map((r) => [r.source.line, r.offsetMs]),
    );
    expect(() => index.planOnce(options)).toThrow(/released/);
    expect(() => index.add(records[0]!)).toThrow(/released/);
  });

  it('a capture file rewritten between the passes fails the plan with what changed', async () => {
    const { index, root } = await readBoth({ 'c.jsonl': captureText(4, 40) });
    writeFileSync(join(root, 'c.jsonl'), captureText(5, 40));
    await expect(localPlanner(index)({ ...base, targetKind: 'sagemaker' })).rejects.toThrow(/the file changed/);
  });
});

describe('bodies nested too deep for JSON.stringify', () => {
  const deep = (n: number) => '['.repeat(n) + ']'.repeat(n);

  it('stringifyDeep writes what JSON.stringify writes, for every kind of parsed value', () => {
    const random = seededRandom(3);
    const value = (depth: number): unknown => {
      const r = random();
      if (depth > 5 || r < 0.3)
        return [1, -0, 1e21, 1.5e-7, 'é"\\\n\u2028\ud800', true, false, null][Math.floor(random() * 8)];
      if (r < 0.65) return Array.from({ length: Math.floor(random() * 4) }, () => value(depth + 1));
      return Object.fromEntries(
        Array.from({ length: Math.floor(random() * 4) }, (_, i) => [
          ['a', '2', '__proto__', 'k"é', ''][i] as string,
          value(depth + 1),
        ]),
      );
    };
    for (let i = 0; i < 300; i++) {
      const parsed = JSON.parse(JSON.stringify(value(0))) as unknown;
      expect(stringifyDeep(parsed)).toBe(JSON.stringify(parsed));
    }
    const text = '{"2":1,"1":[{}],"__proto__":{"x":[]},"big":1e400}';
    expect(stringifyDeep(JSON.parse(text))).toBe(JSON.stringify(JSON.parse(text)));
    expect(stringifyDeep(JSON.parse(deep(3000)))).toBe(deep(3000));
  });

  it('a chat body 10,000 levels deep gets its overrides, with the same bytes a shallow one would', async () => {
    const body = `{"messages":[{"role":"user","content":"x"}],"model":"m1","deep":${deep(10_000)}}`;
    const line = JSON.stringify({
      captureData: { endpointInput: { observedContentType: 'application/json', data: body, encoding: 'JSON' } },
      eventMetadata: { eventId: 'deep', inferenceTime: '2026-04-29T00:00:00Z' },
    });
    const { records, index } = await readBoth({ 'd.jsonl': line + '\n' });
    const options: PlanOptions = {
      runId: 'r',
      targetKind: 'openai-chat',
      timeScale: 1,
      intraSecond: 'spread',
      forceStreaming: true,
      modelOverride: 'm2',
    };
    expect(() => JSON.stringify(JSON.parse(body))).toThrow(RangeError);
    const want =
      `{"messages":[{"role":"user","content":"x"}],"model":"m2","deep":${deep(10_000)},"stream":true,` +
      `"stream_options":{"include_usage":true}}`;
    for (const plan of [buildPlan(records, options), await localPlanner(index)(options)]) {
      expect(plan.incompatible).toEqual([]);
      expect(Buffer.from(plan.requests[0]!.body).toString('utf8')).toBe(want);
      expect(plan.requests[0]!.overrides).toEqual(['model', 'stream']);
      expect(plan.requests[0]!.streaming).toBe(true);
    }
  });
});
