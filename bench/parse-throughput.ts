/**
 * Capture parse throughput versus the floor of plain JSON.parse over the same lines, and
 * memory while doing it (it must stay flat however large the file).
 *
 *   node --expose-gc --import tsx bench/parse-throughput.ts [--size-mb 1024] [--keep]
 *
 * The file is generated (chat captures with messages of varied length, JSON encoding with
 * one record in eight base64) in the temp folder and deleted afterwards unless --keep.
 */
import { createReadStream, createWriteStream, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { IngestReportBuilder, parseCaptureStream } from '../lambdas/core/capture/parse';

const args = process.argv.slice(2);
const sizeMb = Number(args[args.indexOf('--size-mb') + 1] ?? 1024) || 1024;
const keep = args.includes('--keep');
const file = join(tmpdir(), `capture-bench-${sizeMb}mb.jsonl`);

const WORDS = 'the quick brown fox jumps over a lazy dog while seven wizards quietly judge boxing matches near the old harbour'.split(' ');
let seed = 1;
const rand = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
const text = (n: number) => Array.from({ length: n }, () => WORDS[Math.floor(rand() * WORDS.length)]).join(' ');

async function generate(): Promise<void> {
  const out = createWriteStream(file);
  let written = 0;
  let i = 0;
  const target = sizeMb * 1024 * 1024;
  while (written < target) {
    const body = JSON.stringify({
      model: 'llama-3-8b',
      messages: [
        { role: 'system', content: text(10 + Math.floor(rand() * 30)) },
        { role: 'user', content: text(20 + Math.floor(rand() * 400)) },
      ],
      max_tokens: 256,
      temperature: 0.7,
    });
    const base64 = i % 8 === 0;
    const line =
      JSON.stringify({
        captureData: {
          endpointInput: { observedContentType: 'application/json', mode: 'INPUT', data: base64 ? Buffer.from(body).toString('base64') : body, encoding: base64 ? 'BASE64' : 'JSON' },
          endpointOutput: {
            observedContentType: 'application/json',
            mode: 'OUTPUT',
            data: JSON.stringify({ choices: [{ message: { role: 'assistant', content: text(40) } }], usage: { prompt_tokens: 300, completion_tokens: 60 } }),
            encoding: 'JSON',
          },
        },
        eventMetadata: { eventId: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`, inferenceTime: new Date(Date.UTC(2026, 3, 29) + i * 37).toISOString().replace(/\.\d+Z$/, 'Z') },
        eventVersion: '0',
      }) + '\n';
    if (!out.write(line)) await once(out, 'drain');
    written += Buffer.byteLength(line);
    i++;
  }
  out.end();
  await once(out, 'finish');
}

interface Pass {
  name: string;
  seconds: number;
  mbPerSec: number;
  items: number;
  peakRssMb: number;
  peakHeapMb: number;
}

async function measure(name: string, run: () => Promise<number>): Promise<Pass> {
  (globalThis as { gc?: () => void }).gc?.();
  let peakRss = 0;
  let peakHeap = 0;
  const sample = () => {
    const m = process.memoryUsage();
    peakRss = Math.max(peakRss, m.rss);
    peakHeap = Math.max(peakHeap, m.heapUsed);
  };
  const timer = setInterval(sample, 50);
  const t0 = process.hrtime.bigint();
  const items = await run();
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  clearInterval(timer);
  sample();
  const mb = statSync(file).size / (1024 * 1024);
  return { name, seconds, mbPerSec: mb / seconds, items, peakRssMb: peakRss / 1048576, peakHeapMb: peakHeap / 1048576 };
}

/** Reads the file in 1 MiB chunks and hands each line to `onLine`: the same split for both floors. */
async function eachLine(onLine: (line: string) => void): Promise<number> {
  let n = 0;
  let carry: Buffer | null = null;
  for await (const chunk of createReadStream(file, { highWaterMark: 1 << 20 }) as AsyncIterable<Buffer>) {
    const buf: Buffer = carry ? Buffer.concat([carry, chunk]) : chunk;
    let start = 0;
    for (let nl = buf.indexOf(10, start); nl !== -1; nl = buf.indexOf(10, start)) {
      onLine(buf.toString('utf8', start, nl));
      n++;
      start = nl + 1;
    }
    carry = start < buf.length ? Buffer.from(buf.subarray(start)) : null;
  }
  return n;
}

/** The floor: read, split lines, JSON.parse each. Nothing else. */
const floor = () => eachLine((line) => JSON.parse(line));

/** The floor of the same validation: the line, then the JSON body inside it (what bad_inner_json needs). */
const floorWithInner = () =>
  eachLine((line) => {
    const input = (JSON.parse(line) as { captureData: { endpointInput: { data: string; encoding: string } } }).captureData.endpointInput;
    JSON.parse(input.encoding === 'JSON' ? input.data : Buffer.from(input.data, 'base64').toString('utf8'));
  });

async function ours(): Promise<number> {
  let n = 0;
  const report = new IngestReportBuilder();
  // No duplicate filter: it keeps each first body (a run retains its records for planning
  // anyway), which would make this pass's memory grow with the file. Its cost is one Map
  // lookup per record.
  for await (const record of parseCaptureStream(createReadStream(file, { highWaterMark: 1 << 20 }), file, report)) {
    if (record.input.body.byteLength >= 0) n++;
  }
  const totals = report.build().totals;
  if (totals.rejected > 0) throw new Error(`unexpected rejections: ${JSON.stringify(totals.rejectedByReason)}`);
  return n;
}

console.log(`generating ${sizeMb} MB of captures at ${file} ...`);
await generate();
const lines = (await floor()) as number;
console.log(`${lines.toLocaleString()} lines, ${(statSync(file).size / 1048576).toFixed(0)} MB; node ${process.version}`);
const passes: Pass[] = [];
for (let round = 0; round < 2; round++) {
  passes.push(await measure('JSON.parse floor', floor));
  passes.push(await measure('JSON.parse line + inner body', floorWithInner));
  passes.push(await measure('capture-replay parser', ours));
}
const best = (name: string) => passes.filter((p) => p.name === name).sort((a, b) => b.mbPerSec - a.mbPerSec)[0] as Pass;
const f = best('JSON.parse floor');
const o = best('capture-replay parser');
console.log('\n| pass | MB/s | lines/s | peak RSS MB | peak heap MB |\n| --- | ---: | ---: | ---: | ---: |');
const fi = best('JSON.parse line + inner body');
for (const p of [f, fi, o]) console.log(`| ${p.name} | ${p.mbPerSec.toFixed(1)} | ${Math.round(p.items / p.seconds).toLocaleString()} | ${p.peakRssMb.toFixed(0)} | ${p.peakHeapMb.toFixed(0)} |`);
console.log(`\nratio (ours / floor): ${(o.mbPerSec / f.mbPerSec).toFixed(2)}  (goal >= 0.70)`);
console.log(`ratio (ours / floor with inner body parse): ${(o.mbPerSec / fi.mbPerSec).toFixed(2)}`);
if (!keep) rmSync(file, { force: true });
