/**
 * `capture-replay demo --capacity`: a capacity search in a few seconds, no network, no AWS.
 * Two bundled mock servers of known capacity (lambdas/mocks/capacity.ts): A with one
 * generation slot, B with two, each request holding its slot TTFT + 4 ITL = 40 ms; a capture
 * written for the demo, 20 chat requests a second evenly spaced; both searched together on
 * one second of it. The mocks run in processes of their own, as real servers would: in this
 * one they would share the replayer's thread and time one another. The queueing model says where each breaks: requests 50/k ms apart at
 * factor k meet a server that completes one every 40/c ms, so A holds up to 1.25x and B up
 * to 2.5x (past that, each request waits longer than the last). The demo says so first.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { capacityCommand } from './command';
import { newRunId } from '../replay/config';

const TTFT_MS = 20;
const ITL_MS = 5;
const OUTPUT_TOKENS = 5;
const RATE_PER_SECOND = 20;
const CAPTURE_SECONDS = 2;
const T0 = Date.UTC(2026, 3, 29, 2, 0, 0);

/** The demo's capture: RATE_PER_SECOND chat requests each second, written with whole-second times as SageMaker writes them. */
export function demoCaptureLines(): string[] {
  const lines: string[] = [];
  for (let i = 0; i < RATE_PER_SECOND * CAPTURE_SECONDS; i++) {
    const second = Math.floor(i / RATE_PER_SECOND);
    const body = JSON.stringify({
      model: 'demo',
      messages: [{ role: 'user', content: `Capacity demo request ${i}` }],
      max_tokens: 16,
      stream: true,
    });
    lines.push(
      JSON.stringify({
        captureData: {
          endpointInput: { observedContentType: 'application/json', mode: 'INPUT', data: body, encoding: 'JSON' },
        },
        eventMetadata: {
          eventId: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
          inferenceTime: new Date(T0 + second * 1000).toISOString().replace('.000Z', 'Z'),
        },
        eventVersion: '0',
      }),
    );
  }
  return lines;
}

function intro(capturesDir: string): string {
  const serviceMs = TTFT_MS + (OUTPUT_TOKENS - 1) * ITL_MS;
  const gapMs = 1000 / RATE_PER_SECOND;
  return [
    'Capacity demo: how many times its traffic each of two mock servers sustains.',
    `The capture (${capturesDir}): ${RATE_PER_SECOND} chat requests a second, ${gapMs} ms apart.`,
    `Each mock holds a generation slot ${serviceMs} ms per request (${TTFT_MS} ms to the first`,
    `token, ${OUTPUT_TOKENS} tokens ${ITL_MS} ms apart); A has 1 slot, B has 2. At factor k the requests`,
    `come ${gapMs}/k ms apart, so A keeps up to ${(gapMs / serviceMs).toFixed(2)}x and B to ` +
      `${((2 * gapMs) / serviceMs).toFixed(2)}x; past that`,
    'each request waits longer than the last. The objective: 90 % of requests with a',
    `first token within 100 ms. Expect A about ${(gapMs / serviceMs).toFixed(2)}x and B about twice that.`,
    '',
  ].join('\n');
}

/**
 * `capture-replay mock-server --slots <slots>` as a process of its own, started as this CLI was
 * (its script, `process.argv[1]`: the built CLI, dist/capture-replay.mjs); its URL (its first line)
 * and how to stop it.
 */
async function startMock(slots: number): Promise<{ url: string; close: () => Promise<void> }> {
  const bin = process.argv[1] ?? fileURLToPath(new URL('../../../dist/capture-replay.mjs', import.meta.url));
  const args = [
    'mock-server',
    '--port',
    '0',
    '--slots',
    String(slots),
    '--ttft-ms',
    String(TTFT_MS),
    '--itl-ms',
    String(ITL_MS),
    '--output-tokens',
    String(OUTPUT_TOKENS),
  ];
  const child = spawn(process.execPath, ['--no-warnings', bin, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = once(child, 'exit');
  const [line] = (await Promise.race([
    once(createInterface({ input: child.stdout }), 'line'),
    exited.then(() => {
      throw new Error(`the mock server (--slots ${slots}) exited before listening`);
    }),
  ])) as [string];
  return {
    url: (JSON.parse(line) as { url: string }).url,
    close: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

export async function capacityDemoCommand(options: { out: string; progress?: boolean }): Promise<number> {
  const capturesDir = join(options.out, 'demo-captures', 'capacity');
  await mkdir(capturesDir, { recursive: true });
  await writeFile(join(capturesDir, 'capacity-demo.jsonl'), demoCaptureLines().join('\n') + '\n');
  const [a, b] = await Promise.all([startMock(1), startMock(2)]);
  try {
    process.stdout.write(intro(capturesDir) + '\n');
    return await capacityCommand({
      capturesPath: capturesDir,
      target: [`A=${a.url}`, `B=${b.url}`],
      out: options.out,
      runId: `${newRunId()}-capacity`,
      goodput: { time_to_first_token: 100 },
      minGoodput: 0.9,
      maxErrorRate: 0.01,
      window: 1000,
      startFactor: 1,
      growth: 2,
      resolution: 0.25,
      maxFactor: 16,
      cooldown: 0,
      maxClientLag: 100,
      together: true,
      path: '/v1/chat/completions',
      streaming: true,
      timeScale: 1,
      intraSecond: 'spread',
      seed: 1,
      rehearsal: 100,
      timeout: 30_000,
      lead: 300,
      latePolicy: 'fire',
      progress: options.progress !== false,
    });
  } finally {
    await Promise.all([a.close(), b.close()]);
  }
}
