/**
 * Schedule lag of the fire loop at steady request rates, against the mock server running in
 * another process on this machine: how late (actual send - due time) requests leave while
 * hundreds of earlier ones are still streaming.
 *
 *   node --import tsx bench/schedule-lag.ts [--rates 200,1000,2000] [--seconds 10]
 *
 * Requests are streaming chat completions, evenly spaced; the mock answers with TTFT 20 ms,
 * ITL 5 ms and 8 tokens (about 55 ms per request, so ~110 streams in flight at 2,000/s).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createOpenAITarget } from '../lambdas/adapters/http/openai-target';
import { systemClock } from '../lambdas/adapters/system-clock';
import { runFireLoop } from '../lambdas/core/fire/fire-loop';
import { summarize } from '../lambdas/core/metrics/stats';
import type { ScheduledRequest } from '../lambdas/core/types';

const args = process.argv.slice(2);
const arg = (name: string, fallback: string) =>
  args.includes(name) ? (args[args.indexOf(name) + 1] as string) : fallback;
const rates = arg('--rates', '200,1000,2000').split(',').map(Number);
const seconds = Number(arg('--seconds', '10'));
const root = join(fileURLToPath(import.meta.url), '..', '..');

const server = spawn(
  process.execPath,
  [
    '--import',
    'tsx',
    join(root, 'lambdas/mocks/mock-server.ts'),
    '--port',
    '0',
    '--ttft-ms',
    '20',
    '--itl-ms',
    '5',
    '--output-tokens',
    '8',
    '--no-precise-timers',
  ],
  { stdio: ['ignore', 'pipe', 'inherit'] },
);
const [line] = (await once(createInterface({ input: server.stdout }), 'line')) as [string];
const { url } = JSON.parse(line) as { url: string };
console.log(`mock server (own process) at ${url}; node ${process.version}; ${seconds} s per rate\n`);

function plan(rate: number, count: number): ScheduledRequest[] {
  return Array.from({ length: count }, (_, i) => ({
    index: i,
    offsetMs: (i * 1000) / rate,
    captureTimeMs: 0,
    correlationId: `corr-${i}`,
    eventId: `event-${i}`,
    inferenceId: null,
    source: { file: 'bench', line: i + 1 },
    contentType: 'application/json',
    body: Buffer.from(
      JSON.stringify({
        model: 'm',
        messages: [{ role: 'user', content: `question ${i}` }],
        stream: true,
        stream_options: { include_usage: true },
      }),
    ),
    streaming: true,
    overrides: [],
    capturedUsage: null,
    accept: null,
    capturedOutputSha256: null,
  }));
}

const rows: string[] = [];
for (const rate of rates) {
  const target = createOpenAITarget({
    name: 'mock',
    baseUrl: url,
    timeoutMs: 30_000,
    clock: systemClock,
    connections: 4096,
  });
  // Warm-up: open connections at the rate so connection set-up is not what is measured.
  await runFireLoop(plan(rate, rate), {
    runId: 'warm',
    target,
    clock: systemClock,
    startNs: systemClock.nowNs() + 200_000_000n,
    workerId: 'w',
  });
  const requests = plan(rate, rate * seconds);
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  const outcomes = await runFireLoop(requests, {
    runId: `bench-${rate}`,
    target,
    clock: systemClock,
    startNs: systemClock.nowNs() + 300_000_000n,
    workerId: 'w',
  });
  const wallS = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu = process.cpuUsage(cpu0);
  await target.close();
  const lags = outcomes.filter((o) => o.result).map((o) => Number(o.result!.requestStartNs - o.scheduledNs) / 1e6);
  const errors = outcomes.filter((o) => o.result?.error).length;
  const dropped = outcomes.filter((o) => o.dropReason).length;
  const s = summarize(lags)!;
  const ttft = summarize(
    outcomes
      .filter((o) => o.result && !o.result.error && o.result.contentChunkNs[0])
      .map((o) => Number(o.result!.contentChunkNs[0]! - o.result!.requestStartNs) / 1e6),
  );
  rows.push(
    `| ${rate} | ${requests.length} | ${outcomes.length - dropped} | ${dropped} | ${errors} | ` +
      `${s.p50.toFixed(3)} | ${s.p99.toFixed(3)} | ${s.max.toFixed(3)} | ${ttft ? ttft.p50.toFixed(2) : 'n/a'} ` +
      `| ${(((cpu.user + cpu.system) / 1e6 / wallS) * 100).toFixed(0)}% |`,
  );
  console.log(rows.at(-1));
}
console.log(
  '\n| rate (req/s) | scheduled | fired | dropped | errors | lag p50 (ms) | lag p99 (ms) | lag max (ms) | TTFT p50 (ms) | client CPU |',
);
console.log('| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
for (const row of rows) console.log(row);
server.kill('SIGTERM');
