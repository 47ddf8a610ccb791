/**
 * The bundled mocks' commands, `capture-replay mock-server` and `capture-replay mock-sagemaker`:
 * each a commander program (its options, defaults and help, which docs/cli.md is generated
 * from) whose action loads its server only when it runs. The CLI (lambdas/local/program.ts)
 * adds them as they are; a mock's file run on its own (`node --import tsx
 * lambdas/mocks/mock-server.ts ...`) parses the same program (runStandalone).
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import { decimalNumber, usageErrors } from '../local/cli-usage';
import type { startMockSageMaker } from './mock-sagemaker';
import type { startMockServer } from './mock-server';

/** The mock SageMaker runtime's vocabulary, kept here so that building the command loads no server. */
export const MOCK_ERROR_TYPES = [
  'model',
  'throttling',
  'validation',
  'unavailable',
  'internal',
  'not-ready',
  'dependency',
  'stream',
  'stream-internal',
] as const;
export type MockSageMakerErrorType = (typeof MOCK_ERROR_TYPES)[number];
export const MOCK_MODELS = ['auto', 'chat', 'tabular'] as const;
export type MockSageMakerModel = (typeof MOCK_MODELS)[number];
export const MOCK_STREAM_FORMATS = ['openai', 'tgi', 'jsonlines'] as const;
export type MockStreamFormat = (typeof MOCK_STREAM_FORMATS)[number];

function numberArg(name: string, min: number, max = Infinity) {
  return (raw: string): number => {
    const v = decimalNumber(raw);
    if (!Number.isFinite(v) || v < min || v > max)
      throw new InvalidArgumentError(`${name} must be a number in [${min}, ${max}] (got "${raw}")`);
    return v;
  };
}

function wholeNumberArg(name: string, min: number) {
  return (raw: string): number => {
    const v = decimalNumber(raw);
    if (!Number.isInteger(v) || v < min)
      throw new InvalidArgumentError(`${name} must be a whole number >= ${min} (got "${raw}")`);
    return v;
  };
}

/** What each mock's command says in its own words. */
interface MockCommandText {
  name: 'mock-server' | 'mock-sagemaker';
  description: string;
  port: number;
  ttftHelp: string;
  errorRateHelp: string;
  logHelp: string;
}

/** A mock's command with the options both mocks take. */
function mockCommand(text: MockCommandText): Command {
  return usageErrors(new Command(text.name), text.name)
    .description(text.description)
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--port <port>', 'port (0 = any free port)', numberArg('--port', 0, 65535), text.port)
    .option('--ttft-ms <ms>', text.ttftHelp, numberArg('--ttft-ms', 0), 20)
    .option('--itl-ms <ms>', 'inter-token latency', numberArg('--itl-ms', 0), 5)
    .option(
      '--output-tokens <n>',
      'output length (capped by the request max_tokens)',
      numberArg('--output-tokens', 1),
      16,
    )
    .addOption(
      new Option(
        '--slots <n>',
        'concurrent generations, each holding its slot from its start to its last token: requests beyond ' +
          'them wait in a FIFO queue, their time to first token longer by the wait',
      )
        .argParser(wholeNumberArg('--slots', 1))
        .default(Infinity, 'unlimited'),
    )
    .option('--error-rate <rate>', text.errorRateHelp, numberArg('--error-rate', 0, 1), 0)
    .option('--seed <n>', 'seed for error injection', numberArg('--seed', 0), 42)
    .option('--log <file>', text.logHelp)
    .option('--no-precise-timers', 'plain timers (~1 ms late) instead of timer + short naps: less CPU at high load');
}

interface CommonMockArgs {
  host: string;
  port: number;
  ttftMs: number;
  itlMs: number;
  outputTokens: number;
  /** Infinity: unlimited. */
  slots: number;
  errorRate: number;
  seed: number;
  log?: string;
  preciseTimers: boolean;
}

/** The common options as both mocks' settings (a standalone mock records no requests in memory: it logs them). */
function commonMockSettings(o: CommonMockArgs) {
  return {
    host: o.host,
    port: o.port,
    ttftMs: o.ttftMs,
    itlMs: o.itlMs,
    outputTokens: Math.round(o.outputTokens),
    errorRate: o.errorRate,
    seed: o.seed,
    recordRequests: false,
    preciseTimers: o.preciseTimers,
    slots: o.slots,
    ...(o.log ? { logFile: o.log } : {}),
  };
}

/** Serves until SIGTERM/SIGINT, after printing `{"url": ...}` (common.ts). */
async function serve(start: Promise<{ url: string; close(): Promise<void> }>): Promise<void> {
  const { serveUntilSignal } = await import('./common');
  serveUntilSignal(await start);
}

/**
 * How a command finds its server: imported when it runs, or handed in by the server's own
 * file run standalone (a module cannot import itself while its top-level await runs).
 */
type Load<T> = () => Promise<T>;

/** `capture-replay mock-server`: the OpenAI-compatible mock (mock-server.ts). */
export function buildMockServerProgram(
  load: Load<{ startMockServer: typeof startMockServer }> = () => import('./mock-server'),
): Command {
  return mockCommand({
    name: 'mock-server',
    description: 'run the bundled OpenAI-compatible mock server (prints {"url": ...} when listening)',
    port: 8000,
    ttftHelp: 'time to first token',
    errorRateHelp: 'fraction of requests answered with HTTP 500',
    logHelp: 'append one JSON line per received request (arrival time, ids, body)',
  })
    .option('--api-key <key>', 'require Authorization: Bearer <key>')
    .action(async (o: CommonMockArgs & { apiKey?: string }) => {
      const { startMockServer } = await load();
      await serve(startMockServer({ ...commonMockSettings(o), ...(o.apiKey ? { apiKey: o.apiKey } : {}) }));
    });
}

interface MockSageMakerArgs extends CommonMockArgs {
  errorType: MockSageMakerErrorType;
  modelErrorStatus: number;
  streamErrorAfter?: number;
  model: MockSageMakerModel;
  streamFormat: MockStreamFormat;
  splitParts: boolean;
  endpoint?: string[];
  requireAuth: boolean;
}

/** `capture-replay mock-sagemaker`: the SageMaker runtime mock (mock-sagemaker.ts). */
export function buildMockSageMakerProgram(
  load: Load<{ startMockSageMaker: typeof startMockSageMaker }> = () => import('./mock-sagemaker'),
): Command {
  return mockCommand({
    name: 'mock-sagemaker',
    description:
      'run the bundled mock SageMaker runtime: InvokeEndpoint and InvokeEndpointWithResponseStream (prints ' +
      '{"url": ...} when listening; point the AWS SDK at it with AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME)',
    port: 8080,
    ttftHelp: 'time to first token (first answer byte for non-chat models)',
    errorRateHelp: 'fraction of requests answered with --error-type',
    logHelp: 'append one JSON line per received request (arrival time, path, headers, body)',
  })
    .addOption(new Option('--error-type <type>', 'injected error').choices([...MOCK_ERROR_TYPES]).default('model'))
    .option(
      '--model-error-status <status>',
      "the model's status inside a ModelError",
      numberArg('--model-error-status', 100, 599),
      500,
    )
    .option(
      '--stream-error-after <n>',
      'tokens streamed before a stream error (default: half)',
      numberArg('--stream-error-after', 0),
    )
    .addOption(
      new Option('--model <kind>', 'the model behind every endpoint (auto: by content type)')
        .choices([...MOCK_MODELS])
        .default('auto'),
    )
    .addOption(
      new Option('--stream-format <format>', 'how the chat model streams')
        .choices([...MOCK_STREAM_FORMATS])
        .default('openai'),
    )
    .option('--split-parts', 'split every streamed event across two PayloadParts', false)
    .option(
      '--endpoint <name>',
      'an endpoint that exists (repeat; default: any name)',
      (v: string, prev: string[] | undefined) => [...(prev ?? []), v],
    )
    .option('--no-require-auth', 'accept requests without a SigV4 Authorization header')
    .action(async (o: MockSageMakerArgs) => {
      const { startMockSageMaker } = await load();
      await serve(
        startMockSageMaker({
          ...commonMockSettings(o),
          errorType: o.errorType,
          modelErrorStatus: Math.round(o.modelErrorStatus),
          model: o.model,
          streamFormat: o.streamFormat,
          splitParts: o.splitParts,
          requireAuth: o.requireAuth,
          ...(o.streamErrorAfter !== undefined ? { streamErrorAfter: Math.round(o.streamErrorAfter) } : {}),
          ...(o.endpoint ? { endpoints: o.endpoint } : {}),
        }),
      );
    });
}

/** A mock's program run as its own process, as `capture-replay <name> <args>` (its help and errors say so). */
export async function runStandalone(command: Command, args: string[]): Promise<void> {
  await new Command('capture-replay').addCommand(command).parseAsync([command.name(), ...args], { from: 'user' });
}
