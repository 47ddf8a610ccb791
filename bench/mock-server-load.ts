/**
 * Load on the bundled mock server: how much of a core it needs to serve streaming chat
 * completions at a steady rate, and how late its tokens arrive, with precise timers
 * (timer + short spin, the default) and with plain timers (--no-precise-timers).
 *
 *   node --import tsx bench/mock-server-load.ts [--rates 500,1000,2000] [--seconds 10] [--tokens 8]
 *
 * The mock runs in its own process (TTFT 20 ms, ITL 5 ms); this process drives it with the
 * HTTP target. Server CPU comes from /proc/<pid>/stat (Linux only). Token lateness is seen
 * from the client: chunk k's arrival - (send + TTFT + k*ITL), so it includes the client's
 * own delays on a shared machine and is an upper bound for the server's.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { createOpenAITarget } from '../lambdas/adapters/http/openai-target';
import { systemClock } from '../lambdas/adapters/system-clock';
import { summarize } from '../lambdas/core/metrics/stats';
import type { TargetRequest } from '../lambdas/ports';
import type { TargetResult } from '../lambdas/core/types';

const args = process.argv.slice(2);
const arg = (name: string, fallback: string) =>
  args.includes(name) ? (args[args.indexOf(name) + 1] as string) : fallback;
const rates = arg('--rates', '500,1000,2000').split(',').map(Number);
const seconds = Number(arg('--seconds', '10'));
const tokens = Number(arg('--tokens', '8'));
const TTFT_MS = 20;
const ITL_MS = 5;
const root = join(fileURLToPath(import.meta.url), '..', '..');
// Clock ticks per second for /proc/<pid>/stat; 100 on every Linux this runs on.
const CLK_TCK = 100;

function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the parenthesised command name; utime and stime are the 14th and 15th.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
}

async function startServer(precise: boolean) {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      join(root, 'lambdas/mocks/mock-server.ts'),
      '--port',
      '0',
      '--ttft-ms',
      String(TTFT_MS),
      '--itl-ms',
      String(ITL_MS),
      '--output-tokens',
      String(tokens),
      ...(precise ? [] : ['--no-precise-timers']),
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const [line] = (await once(createInterface({ input: child.stdout }), 'line')) as [string];
  return { child, url: (JSON.parse(line) as { url: string }).url };
}

function body(i: number): Buffer {
  return Buffer.from(
    JSON.stringify({
      model: 'm',
      messages: [{ role: 'user', content: `question ${i}` }],
      stream: true,
      stream_options: { include_usage: true },
    }),
  );
}

/** Sends `count` requests evenly spaced at `rate`; a 1 ms tick fires whatever is due. */
async function drive(
  send: (r: TargetRequest) => Promise<TargetResult>,
  rate: number,
  count: number,
): Promise<TargetResult[]> {
  const pending: Promise<TargetResult>[] = [];
  const start = performance.now();
  let next = 0;
  await new Promise<void>((done) => {
    const tick = () => {
      const due = Math.min(count, Math.floor(((performance.now() - start) * rate) / 1000) + 1);
      for (; next < due; next++)
        pending.push(
          send({
            requestId: `r${next}`,
            correlationId: `c${next}`,
            contentType: 'application/json',
            body: body(next),
            streaming: true,
          }),
        );
      if (next < count) setTimeout(tick, 1);
      else done();
    };
    tick();
  });
  return Promise.all(pending);
}

const rows: string[] = [];
for (const precise of [true, false]) {
  const { child, url } = await startServer(precise);
  for (const rate of rates) {
    const target = createOpenAITarget({
      name: 'mock',
      baseUrl: url,
      timeoutMs: 30_000,
      clock: systemClock,
      connections: 4096,
    });
    await drive((r) => target.send(r), rate, rate); // warm-up: open the connections
    const cpu0 = cpuSeconds(child.pid!);
    const t0 = performance.now();
    const results = await drive((r) => target.send(r), rate, rate * seconds);
    const wallS = (performance.now() - t0) / 1000;
    const cpu = cpuSeconds(child.pid!) - cpu0;
    await target.close();
    const ok = results.filter((r) => !r.error && r.contentChunkNs.length === tokens);
    const late: number[] = [];
    for (const r of ok)
      r.contentChunkNs.forEach((t, k) => late.push(Number(t - r.requestStartNs) / 1e6 - (TTFT_MS + k * ITL_MS)));
    const s = summarize(late)!;
    rows.push(
      `| ${precise ? 'precise' : 'plain'} | ${rate} | ${results.length} | ${results.length - ok.length} | ` +
        `${((results.length / wallS) | 0).toLocaleString('en')} | ${((cpu / wallS) * 100).toFixed(0)} % | ` +
        `${s.p50.toFixed(2)} | ${s.p99.toFixed(2)} | ${s.max.toFixed(1)} |`,
    );
    console.log(rows.at(-1));
  }
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  await exited;
}
console.log(`\nnode ${process.version}; ${seconds} s per rate; ${tokens} tokens, TTFT ${TTFT_MS} ms, ITL ${ITL_MS} ms`);
console.log(
  '| timers | rate (req/s) | requests | failed | achieved (req/s) | server CPU | token late p50 (ms) | p99 (ms) | max (ms) |',
);
console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
for (const row of rows) console.log(row);
