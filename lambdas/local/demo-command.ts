/**
 * `capture-replay demo` (`npm start`): the bundled sample against the bundled mocks, no
 * network, no AWS, with the documented defaults. The sample is split by content type
 * (demo-sample.ts): its chat requests go to an A/B run, the OpenAI-compatible mock server
 * (baseline) against the mock SageMaker runtime through the real AWS SDK; its tabular
 * requests go to their own run, to the SageMaker runtime only (an OpenAI-compatible server
 * cannot take them), so that their answers stay out of the chat latency figures. The mocks
 * differ on purpose, and the demo says so before the run, with the verdict to expect.
 */
import { join, relative } from 'node:path';
import { replayCommand } from './replay/command';
import { newRunId, type ReplayCommandOptions } from './replay/config';
import { SAMPLE_DIR, splitSample } from './demo-sample';

/** The mocks' settings: the SageMaker runtime is set SAGEMAKER_EXTRA_TTFT_MS slower to first token, everything else equal. */
const HTTP_TTFT_MS = 40;
const SAGEMAKER_EXTRA_TTFT_MS = 5;
const ITL_MS = 12;
const OUTPUT_TOKENS = 24;

/** A path as the user would type it from where they are. */
function shown(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel === '' ? '.' : rel.startsWith('..') ? path : rel;
}

/** `1 text/csv request`, `2 text/csv requests, 1 application/x-npy request`. */
function describeTabular(byType: Record<string, number>): string {
  const parts = Object.entries(byType).map(([type, n]) => `${n} ${type} request${n === 1 ? '' : 's'}`);
  return parts.length > 0 ? parts.join(', ') : 'no request';
}

/** What the demo sets up and what to expect, before anything runs (80 columns). */
export function demoIntro(capturesDir: string, tabularByType: Record<string, number>): string {
  const sagemakerTtft = HTTP_TTFT_MS + SAGEMAKER_EXTRA_TTFT_MS;
  return [
    'Demo: the bundled capture sample against the bundled mocks (no network, no AWS).',
    `The sample (${shown(SAMPLE_DIR)}) is split by content type into`,
    `${shown(capturesDir)}/, each part replayed as its own run:`,
    "  chat/     the chat requests (and the sample's bad lines, which the ingest",
    '            report counts), as an A/B run to two targets:',
    '              mock       the mock OpenAI-compatible server (the baseline)',
    '              sagemaker  the mock SageMaker runtime, through the AWS SDK',
    `  tabular/  ${describeTabular(tabularByType)}, a run of its own to the mock SageMaker`,
    '            runtime (target tabular), out of the chat latency figures.',
    `Set up on purpose: the mock SageMaker runtime's time to first token is ${sagemakerTtft} ms,`,
    `the mock server's ${HTTP_TTFT_MS} ms (both ${ITL_MS} ms between tokens, ${OUTPUT_TOKENS} tokens). Expect`,
    `sagemaker \`worse\` on time to first token (about +${SAGEMAKER_EXTRA_TTFT_MS} ms) and \`same\` on the`,
    `other metrics; on a busy machine noise can hide the ${SAGEMAKER_EXTRA_TTFT_MS} ms.`,
    '',
  ].join('\n');
}

export async function demoCommand(options: { out: string; progress: boolean }): Promise<number> {
  const captures = await splitSample(join(options.out, 'demo-captures'));
  // The mocks are loaded only when the demo runs.
  const [{ startMockServer }, { startMockSageMaker }] = await Promise.all([
    import('../mocks/mock-server'),
    import('../mocks/mock-sagemaker'),
  ]);
  const mock = { itlMs: ITL_MS, outputTokens: OUTPUT_TOKENS, seed: 42, recordRequests: false };
  const [server, runtime] = await Promise.all([
    startMockServer({ ...mock, ttftMs: HTTP_TTFT_MS }),
    startMockSageMaker({ ...mock, ttftMs: HTTP_TTFT_MS + SAGEMAKER_EXTRA_TTFT_MS }),
  ]);
  // The SDK finds the local runtime through its own setting; the demo signs with a dummy key
  // (never the user's credentials: nothing of theirs should go even to a local mock).
  Object.assign(process.env, {
    AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME: runtime.url,
    AWS_REGION: process.env.AWS_REGION ?? 'us-east-1',
    AWS_ACCESS_KEY_ID: 'AKIDDEMO',
    AWS_SECRET_ACCESS_KEY: 'demo-secret',
  });
  delete process.env.AWS_SESSION_TOKEN;
  delete process.env.AWS_PROFILE;
  process.stdout.write(demoIntro(join(options.out, 'demo-captures'), captures.tabularByType) + '\n');
  const runId = newRunId();
  const common: Omit<ReplayCommandOptions, 'capturesPath'> = {
    out: options.out,
    path: '/v1/chat/completions',
    targetName: 'target',
    streaming: true,
    timeScale: 1,
    intraSecond: 'spread',
    seed: 1,
    timeout: 30_000,
    lead: 500,
    latePolicy: 'fire',
    progress: options.progress,
  };
  try {
    const chat = await replayCommand({
      ...common,
      capturesPath: captures.chatDir,
      target: [`mock=${server.url}`, 'sagemaker=sagemaker:demo-endpoint'],
      runId,
    });
    if (chat !== 0 || Object.keys(captures.tabularByType).length === 0) return chat;
    process.stdout.write(
      `\nDemo, tabular part: ${describeTabular(captures.tabularByType)} to the mock SageMaker runtime\n`,
    );
    const tabular = await replayCommand({
      ...common,
      capturesPath: captures.tabularDir,
      target: ['tabular=sagemaker:demo-endpoint'],
      runId: `${runId}-tabular`,
    });
    process.stdout.write(
      `\nDemo reports: chat A/B  ${shown(join(options.out, runId, 'report.html'))}\n              tabular   ` +
        `${shown(join(options.out, `${runId}-tabular`, 'report.html'))}\n`,
    );
    return tabular;
  } finally {
    await Promise.all([server.close(), runtime.close()]);
  }
}
