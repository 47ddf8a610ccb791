/**
 * Writes the bundled capture sample (samples/datacapture/...), deterministically: about ten
 * seconds of chat traffic across an hour boundary, in SageMaker Data Capture's layout, with
 * the real-world mess a replay must survive (base64 bodies, a CSV record, a blank line, a
 * non-JSON line, a duplicate, a truncated last line, a stray non-.jsonl file).
 *
 *   node --import tsx samples/generate-sample.ts
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), 'datacapture', 'demo-endpoint', 'AllTraffic');

const questions = [
  'What is the capital of Australia?',
  'Summarise the plot of Hamlet in two sentences.',
  'Write a haiku about autumn rain.',
  'Explain what a hash map is to a new programmer.',
  'List three uses of baking soda.',
  'Translate "good morning" into French, Spanish and German.',
  'Why is the sky blue?',
  'Give me a regular expression that matches an ISO date.',
];

let seed = 7;
function rand(): number {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed / 2147483648;
}

function uuid(n: number): string {
  const hex = n.toString(16).padStart(12, '0');
  return `5a3c0d2e-1b4f-4c6a-9e8d-${hex}`;
}

interface Line {
  text: string;
}

function captureLine(opts: {
  n: number;
  time: string;
  body: string;
  contentType?: string;
  encoding?: 'JSON' | 'CSV' | 'BASE64';
  completionTokens: number;
  inferenceId?: string;
}): Line {
  const encoding = opts.encoding ?? 'JSON';
  const data = encoding === 'BASE64' ? Buffer.from(opts.body).toString('base64') : opts.body;
  const output = JSON.stringify({
    id: `chatcmpl-${opts.n}`,
    object: 'chat.completion',
    choices: [{ index: 0, message: { role: 'assistant', content: 'captured answer' }, finish_reason: 'stop' }],
    usage: {
      prompt_tokens: 12 + opts.n,
      completion_tokens: opts.completionTokens,
      total_tokens: 12 + opts.n + opts.completionTokens,
    },
  });
  const record = {
    captureData: {
      endpointInput: { observedContentType: opts.contentType ?? 'application/json', mode: 'INPUT', data, encoding },
      endpointOutput: { observedContentType: 'application/json', mode: 'OUTPUT', data: output, encoding: 'JSON' },
    },
    eventMetadata: {
      eventId: uuid(opts.n),
      ...(opts.inferenceId ? { inferenceId: opts.inferenceId } : {}),
      inferenceTime: opts.time,
    },
    eventVersion: '0',
  };
  return { text: JSON.stringify(record) };
}

function chatBody(n: number, extra: Record<string, unknown> = {}): string {
  const question = questions[n % questions.length] as string;
  return JSON.stringify({
    model: 'demo-model',
    messages: [
      { role: 'system', content: 'You are a concise assistant.' },
      { role: 'user', content: question },
    ],
    max_tokens: 64,
    temperature: 0.2,
    ...extra,
  });
}

// Ten seconds from 00:59:55 to 01:00:04, 1-4 requests a second: two hourly partitions.
const hourA: Line[] = [];
const hourB: Line[] = [];
let n = 0;
for (let s = 0; s < 10; s++) {
  const second = 55 + s;
  const time =
    second < 60 ? `2026-04-29T00:59:${String(second).padStart(2, '0')}Z` : `2026-04-29T01:00:0${second - 60}Z`;
  const perSecond = 1 + Math.floor(rand() * 4);
  for (let k = 0; k < perSecond; k++) {
    n++;
    const target = second < 60 ? hourA : hourB;
    const variant = n % 5;
    if (variant === 1) {
      // Base64: SageMaker's default when no JSON content type is configured.
      target.push(captureLine({ n, time, body: chatBody(n), encoding: 'BASE64', completionTokens: 20 }));
    } else if (variant === 2) {
      // Already streaming, with include_usage: replayed byte for byte even under --streaming.
      target.push(
        captureLine({
          n,
          time,
          body: chatBody(n, { stream: true, stream_options: { include_usage: true } }),
          completionTokens: 18,
          inferenceId: `caller-${n}`,
        }),
      );
    } else {
      target.push(captureLine({ n, time, body: chatBody(n), completionTokens: 16 + (n % 7) }));
    }
  }
}
// A sub-second timestamp with an offset, a tabular model's CSV request (not for a chat target).
n++;
hourB.push(captureLine({ n, time: '2026-04-29T03:00:02.250+02:00', body: chatBody(n), completionTokens: 12 }));
n++;
hourB.push(
  captureLine({
    n,
    time: '2026-04-29T01:00:03Z',
    body: '5.1,3.5,1.4,0.2\n6.2,2.9,4.3,1.3',
    contentType: 'text/csv',
    encoding: 'CSV',
    completionTokens: 0,
  }),
);

const fileA = [hourA[0], hourA[1], { text: '' }, ...hourA.slice(2), { text: 'this line is not JSON' }, hourA[3]]
  .filter((line): line is Line => line !== undefined)
  .map((line) => line.text)
  .join('\n');
// File B ends with a truncated record (no newline): SageMaker was cut off mid-write.
const truncated = (hourB[0] as Line).text.slice(0, 80);
const fileB = hourB.map((line) => line.text).join('\n') + '\n' + truncated;

rmSync(join(dirname(fileURLToPath(import.meta.url)), 'datacapture'), { recursive: true, force: true });
mkdirSync(join(root, '2026/04/29/00'), { recursive: true });
mkdirSync(join(root, '2026/04/29/01'), { recursive: true });
writeFileSync(join(root, '2026/04/29/00/14-03-887-0a1b2c3d.jsonl'), fileA + '\n');
writeFileSync(join(root, '2026/04/29/01/01-00-112-4e5f6a7b.jsonl'), fileB);
writeFileSync(join(root, '2026/04/29/01/_SUCCESS.txt'), 'not a capture file\n');
console.log(`wrote ${n} captured requests (+1 duplicate, 1 blank, 1 non-JSON, 1 truncated line) under ${root}`);
