/**
 * Capture parse throughput against the floor of plain JSON.parse over the same lines, and
 * memory while doing it (it must stay flat however large the file).
 *
 * The options and the passes compared: beside the flags below.
 */
import { createReadStream, createWriteStream, rmSync, statSync } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuplicateFilter } from '../lambdas/core/capture/duplicates';
import { IngestReportBuilder } from '../lambdas/core/capture/ingest-report';
import { parseCaptureStream } from '../lambdas/core/capture/stream';
import { flag } from './args';

/**
 *   node --expose-gc --import tsx bench/parse-throughput.ts [--size-mb 1024] [--rounds 3] [--keep] [--file <path>]
 *
 * `--file` reads a capture file already there (one kept with --keep: its path is printed)
 * instead of generating one, and leaves it in place. Otherwise the file is generated in the temp folder (chat
 * captures: 1-6 messages of lengths from a few
 * words to ~20 KB, non-ASCII text in one in ten, JSON encoding with one record in eight base64, most
 * with an OpenAI-style answer carrying `usage`) and deleted afterwards unless --keep.
 *
 * Passes, interleaved round by round so a neighbour's load hits each alike; the best round
 * of each is reported. Rates are given per wall second and per CPU second of this process
 * (the latter moves less on a shared machine; the ratio uses it), and parser / floor is also
 * given round by round (median and range).
 *   floor        read in 1 MiB chunks, split lines, JSON.parse each line
 *   floor+inner  the same, plus JSON.parse of the body inside each line: the least work that
 *                can reject `bad_inner_json`, which the parser must
 *   parser       parseCaptureStream, records consumed and dropped
 *   parser+dedup the same with a DuplicateFilter (a run's normal setup): it keeps a digest
 *                per record, so its memory grows a few hundred bytes per record by design
 */
const sizeMb = flag('--size-mb', 1024);
const rounds = flag('--rounds', 3);
const fileAt = process.argv.indexOf('--file');
const given = fileAt === -1 ? undefined : process.argv[fileAt + 1];
if (fileAt !== -1 && !given) throw new Error('--file needs a path');
const keep = given !== undefined || process.argv.includes('--keep');
const file = given ?? join(tmpdir(), `capture-bench-${process.pid}-${sizeMb}mb.jsonl`);
const CHUNK = 1 << 20;

// ---- generation -------------------------------------------------------------------------

const ASCII_WORDS = (
  'the quick brown fox jumps over a lazy dog while seven wizards quietly judge boxing matches near the old harbour ' +
  'please summarise this contract clause and list every obligation of the supplier with its deadline'
).split(' ');
const MIXED_WORDS = [...ASCII_WORDS, ...'naïve café façade über straße 東京 データ 😀 résumé'.split(' ')];
let seed = 42;
const rand = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
const pick = <T>(items: T[]): T => items[Math.floor(rand() * items.length)] as T;
let vocabulary = ASCII_WORDS;
const words = (n: number) => Array.from({ length: n }, () => pick(vocabulary)).join(' ');
/** Message lengths skewed like real chat traffic: mostly short, a long tail of pasted documents. */
const messageWords = () => Math.floor(5 + 3000 * rand() ** 4);

function captureLine(i: number): string {
  // One record in ten has non-ASCII text (V8 then parses two-byte strings, which is slower).
  vocabulary = rand() < 0.1 ? MIXED_WORDS : ASCII_WORDS;
  const turns = 1 + Math.floor(rand() * 3);
  const messages: { role: string; content: string }[] = [
    { role: 'system', content: words(5 + Math.floor(rand() * 40)) },
  ];
  for (let t = 0; t < turns; t++) {
    messages.push({ role: 'user', content: words(messageWords()) });
    if (t < turns - 1) messages.push({ role: 'assistant', content: words(10 + Math.floor(rand() * 100)) });
  }
  const body = JSON.stringify({
    model: 'llama-3-8b-instruct',
    messages,
    max_tokens: 256,
    temperature: 0.7,
    ...(rand() < 0.3 ? { stream: false, top_p: 0.9 } : {}),
  });
  const base64 = i % 8 === 0;
  const answer = words(10 + Math.floor(rand() * 200));
  const output =
    rand() < 0.9
      ? {
          observedContentType: 'application/json',
          mode: 'OUTPUT',
          encoding: 'JSON',
          data: JSON.stringify({
            id: `chatcmpl-${i}`,
            object: 'chat.completion',
            choices: [{ index: 0, message: { role: 'assistant', content: answer }, finish_reason: 'stop' }],
            usage: {
              prompt_tokens: Math.round(body.length / 4),
              completion_tokens: Math.round(answer.length / 4),
              total_tokens: 0,
            },
          }),
        }
      : undefined;
  return JSON.stringify({
    captureData: {
      endpointInput: {
        observedContentType: 'application/json',
        mode: 'INPUT',
        data: base64 ? Buffer.from(body).toString('base64') : body,
        encoding: base64 ? 'BASE64' : 'JSON',
      },
      ...(output ? { endpointOutput: output } : {}),
    },
    eventMetadata: {
      eventId: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
      ...(rand() < 0.2 ? { inferenceId: `caller-${i}` } : {}),
      inferenceTime: new Date(Date.UTC(2026, 3, 29) + i * 37).toISOString().replace(/\.\d+Z$/, 'Z'),
    },
    eventVersion: '0',
  });
}

async function generate(): Promise<number> {
  const out = createWriteStream(file);
  const target = sizeMb * 1024 * 1024;
  let written = 0;
  let i = 0;
  while (written < target) {
    const line = captureLine(i++) + '\n';
    written += Buffer.byteLength(line);
    if (!out.write(line)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
  return i;
}

// ---- passes -----------------------------------------------------------------------------

/** Bytes read so far in the current pass: memory is sampled against progress through the file. */
let bytesRead = 0;

/** The same chunk source for every pass, counting as it goes (per chunk, so it costs nothing per line). */
async function* fileChunks(): AsyncGenerator<Buffer> {
  for await (const chunk of createReadStream(file, { highWaterMark: CHUNK }) as AsyncIterable<Buffer>) {
    bytesRead += chunk.length;
    yield chunk;
  }
}

/** Reads the file in chunks and hands each line to `onLine`: the split both floors share. */
async function eachLine(onLine: (line: string) => void): Promise<number> {
  let lines = 0;
  let carry: Buffer | null = null;
  for await (const chunk of fileChunks()) {
    const buf: Buffer = carry ? Buffer.concat([carry, chunk]) : chunk;
    let start = 0;
    for (let nl = buf.indexOf(10); nl !== -1; nl = buf.indexOf(10, start)) {
      onLine(buf.toString('utf8', start, nl));
      lines++;
      start = nl + 1;
    }
    carry = start < buf.length ? Buffer.from(buf.subarray(start)) : null;
  }
  return lines;
}

const floor = () => eachLine((line) => JSON.parse(line));

const floorWithInner = () =>
  eachLine((line) => {
    const input = (JSON.parse(line) as { captureData: { endpointInput: { data: string; encoding: string } } })
      .captureData.endpointInput;
    JSON.parse(input.encoding === 'JSON' ? input.data : Buffer.from(input.data, 'base64').toString('utf8'));
  });

async function parser(duplicates?: DuplicateFilter): Promise<number> {
  const report = new IngestReportBuilder();
  let records = 0;
  for await (const record of parseCaptureStream(fileChunks(), file, report, duplicates)) {
    if (record.input.body.byteLength > 0) records++;
  }
  const { totals } = report.build();
  // A benchmark that silently rejected lines would measure the wrong thing.
  if (totals.rejected > 0 || totals.accepted !== records)
    throw new Error(`unexpected ingest result: ${JSON.stringify(totals)}`);
  return records;
}

// ---- measurement ------------------------------------------------------------------------

interface Pass {
  name: string;
  wallSeconds: number;
  cpuSeconds: number;
  lines: number;
  peakRssMb: number;
  peakHeapMb: number;
  /** Heap in use when a quarter, half, three quarters and all of the file had been read: flat, or growing with it. */
  heapByQuarterMb: number[];
}

const MB = 1024 * 1024;
const gc = (globalThis as { gc?: () => void }).gc;

async function measure(name: string, run: () => Promise<number>, fileBytes: number): Promise<Pass> {
  gc?.();
  let peakRss = 0;
  let peakHeap = 0;
  const quarters: number[] = [];
  bytesRead = 0;
  const t0 = process.hrtime.bigint();
  const cpu0 = process.cpuUsage();
  const sample = () => {
    const m = process.memoryUsage();
    peakRss = Math.max(peakRss, m.rss);
    peakHeap = Math.max(peakHeap, m.heapUsed);
    while (quarters.length < 4 && bytesRead >= ((quarters.length + 1) / 4) * fileBytes) quarters.push(m.heapUsed / MB);
  };
  const timer = setInterval(sample, 25);
  const lines = await run();
  const cpu = process.cpuUsage(cpu0);
  const wallSeconds = Number(process.hrtime.bigint() - t0) / 1e9;
  clearInterval(timer);
  sample();
  return {
    name,
    wallSeconds,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    lines,
    peakRssMb: peakRss / MB,
    peakHeapMb: peakHeap / MB,
    heapByQuarterMb: quarters,
  };
}

console.log(
  `node ${process.version}, ${process.arch}; ${given ? 'reading' : `generating ${sizeMb} MB of`} captures at ${file} ...`,
);
const generateStart = Date.now();
const generated = given ? await eachLine(() => undefined) : await generate();
const fileBytes = statSync(file).size;
console.log(
  `${generated.toLocaleString()} lines, ${(fileBytes / MB).toFixed(0)} MB, ` +
    `${given ? 'counted' : 'generated'} in ${((Date.now() - generateStart) / 1000).toFixed(0)} s; ${rounds} ` +
    `interleaved rounds`,
);

const passes: Pass[] = [];
// Parser / floor within each round (the two passes minutes apart at most, under the same
// neighbours): steadier on a shared machine than the ratio of the best passes.
const roundRatios: number[] = [];
const roundDedupRatios: number[] = [];
try {
  for (let round = 1; round <= rounds; round++) {
    passes.push(await measure('floor: split + JSON.parse', floor, fileBytes));
    passes.push(await measure('floor+inner: + JSON.parse of the body', floorWithInner, fileBytes));
    passes.push(await measure('parser: parseCaptureStream', () => parser(), fileBytes));
    passes.push(await measure('parser+dedup: with DuplicateFilter', () => parser(new DuplicateFilter()), fileBytes));
    const last = passes.slice(-4);
    const [rf, , rp, rd] = last as [Pass, Pass, Pass, Pass];
    roundRatios.push(rf.cpuSeconds / rp.cpuSeconds);
    roundDedupRatios.push(rf.cpuSeconds / rd.cpuSeconds);
    console.log(
      `round ${round}: ` +
        last.map((p) => `${p.name.split(':')[0]} ${(fileBytes / MB / p.cpuSeconds).toFixed(0)} MB/cpu-s`).join(', ') +
        `; parser/floor ${(rf.cpuSeconds / rp.cpuSeconds).toFixed(2)}`,
    );
  }
} finally {
  if (!keep) rmSync(file, { force: true });
}
for (const p of passes)
  if (p.lines !== generated) throw new Error(`${p.name} saw ${p.lines} lines, expected ${generated}`);

const names = [...new Set(passes.map((p) => p.name))];
const best = (name: string) =>
  passes.filter((p) => p.name === name).sort((a, b) => a.cpuSeconds - b.cpuSeconds)[0] as Pass;
const rows = names.map(best);
console.log(
  '\n| pass | MB/s (wall) | MB/s (CPU) | lines/s (CPU) | peak RSS MB | peak heap MB | heap at 1/4, 2/4, 3/4, end MB |',
);
console.log('| --- | ---: | ---: | ---: | ---: | ---: | --- |');
for (const p of rows) {
  const quarters = p.heapByQuarterMb.map((v) => v.toFixed(0)).join(', ');
  console.log(
    `| ${p.name} | ${(fileBytes / MB / p.wallSeconds).toFixed(1)} | ` +
      `${(fileBytes / MB / p.cpuSeconds).toFixed(1)} | ${Math.round(p.lines / p.cpuSeconds).toLocaleString()} ` +
      `| ${p.peakRssMb.toFixed(0)} | ${p.peakHeapMb.toFixed(0)} | ${quarters} |`,
  );
}
const [f, fi, ours, dedup] = rows as [Pass, Pass, Pass, Pass];
const ratio = (a: Pass, b: Pass) => (b.cpuSeconds / a.cpuSeconds).toFixed(2);
console.log(`\nratio parser / floor (CPU): ${ratio(ours, f)}   (goal >= 0.70)`);
console.log(`ratio parser / floor+inner (CPU): ${ratio(ours, fi)}`);
console.log(`ratio parser+dedup / floor (CPU): ${ratio(dedup, f)}`);
const spread = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return (
    `median ${(sorted[sorted.length >> 1] as number).toFixed(2)}, range ` +
    `${(sorted[0] as number).toFixed(2)}-${(sorted[sorted.length - 1] as number).toFixed(2)}`
  );
};
console.log(
  `per round, parser / floor (CPU): ${spread(roundRatios)}; parser+dedup / floor: ${spread(roundDedupRatios)}`,
);
console.log(
  `ratio floor+inner / floor (CPU): ${ratio(fi, f)}   (the ceiling for any parser that rejects bad_inner_json by parsing the body)`,
);
