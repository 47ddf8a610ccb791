// An independent arrival-stamping target, answering like an LLM: plain JavaScript on
// node:net and node:tls, sharing no code with capture-replay (not its mock servers, not its
// clock, not its event-stream codec). It stamps the wall-clock time at which the FIRST byte of
// each request reaches the socket, and answers each request after a response time drawn from
// a lognormal (median and p99 given), streamed as tokens evenly spread over it:
//
//   POST <any path> with "stream": true in the body    -> OpenAI chat SSE chunks, usage, [DONE]
//   POST /endpoints/<name>/invocations-response-stream -> SageMaker's event stream: PayloadPart
//                                                         events carrying the same SSE text
//   any other POST                                     -> one chat-completion JSON at the end
//
// What it writes, and its options: beside the arguments below.
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer as createTcpServer } from 'node:net';
import { createServer as createTlsServer } from 'node:tls';
import { crc32 } from 'node:zlib';

// Requests are identified by x-request-id, or SageMaker's x-amzn-sagemaker-inference-id. On
// SIGTERM it writes one line per request, `<id> <arrival epoch ns> <requests before it on its
// connection> <epoch ns the connection was accepted (TLS: secured)>`, to the arrivals file, and
// its counts (requests, streams, tokens written, responses cut by a client, connections
// accepted, and how many had been accepted when the first request arrived, its own included) to
// `<arrivals-file>.counts.json`.
//
//   node bench/arrival-server.mjs <arrivals-file> [--median-ms 2000] [--p99-ms 30000]
//     [--max-ms 120000] [--tokens-per-second 30] [--seed 1] [--tls-cert f --tls-key f]
//
// With --median-ms 0 every answer is immediate (one JSON, or a stream of one token). Prints
// {"url": ...} once listening (https with --tls-cert).
const argv = process.argv.slice(2);
const out = argv[0];
if (!out || out.startsWith('--')) throw new Error('usage: arrival-server.mjs <arrivals-file> [options]');
const opt = (name, fallback) => {
  const i = argv.indexOf(name);
  return i === -1 ? fallback : argv[i + 1];
};
const MEDIAN_MS = Number(opt('--median-ms', 2000));
const P99_MS = Number(opt('--p99-ms', 30000));
const MAX_MS = Number(opt('--max-ms', 120000));
const TOKENS_PER_SECOND = Number(opt('--tokens-per-second', 30));
const tlsCert = opt('--tls-cert', null);
const tlsKey = opt('--tls-key', null);
for (const [k, v] of Object.entries({ MEDIAN_MS, P99_MS, MAX_MS, TOKENS_PER_SECOND }))
  if (!Number.isFinite(v) || v < 0) throw new Error(`${k}: not a number >= 0`);

// Wall clock in ns with hrtime resolution, anchored on the instant Date.now() turns to a new
// millisecond (between two hrtime reads at most 20 us apart; the tightest of up to 50 kept).
function anchorOnTick() {
  let best = null;
  for (let tries = 0; tries < 50 && !(best && best.width <= 20_000n); tries++) {
    let h1 = process.hrtime.bigint();
    const start = Date.now();
    let h2 = process.hrtime.bigint();
    let h0 = h1;
    let wall = start;
    while (wall === start) {
      h0 = h1;
      h1 = h2;
      wall = Date.now();
      h2 = process.hrtime.bigint();
    }
    const width = h2 - h0;
    if (!best || width < best.width) best = { wallNs: BigInt(wall) * 1_000_000n, hr: h1, width };
  }
  return best;
}
const { wallNs: anchorWallNs, hr: anchorHr } = anchorOnTick();
const nowNs = () => anchorWallNs + (process.hrtime.bigint() - anchorHr);

// Seeded draws: xorshift32 uniforms, Box-Muller normals.
let seed = Number(opt('--seed', 1)) >>> 0 || 1;
function uniform() {
  seed ^= seed << 13;
  seed >>>= 0;
  seed ^= seed >>> 17;
  seed ^= seed << 5;
  seed >>>= 0;
  return (seed + 0.5) / 4294967296;
}
const Z99 = 2.3263478740408408;
const SIGMA = MEDIAN_MS > 0 && P99_MS > MEDIAN_MS ? Math.log(P99_MS / MEDIAN_MS) / Z99 : 0;
function responseMs() {
  if (MEDIAN_MS === 0) return 0;
  const z = Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform());
  return Math.min(MAX_MS, MEDIAN_MS * Math.exp(SIGMA * z));
}

// What an answer is made of, written once.
const chunked = (text) => {
  const body = Buffer.from(text);
  return Buffer.concat([Buffer.from(`${body.length.toString(16)}\r\n`), body, Buffer.from('\r\n')]);
};
const END_CHUNKED = Buffer.from('0\r\n\r\n');
const sse = (obj) => `data: ${JSON.stringify(obj)}\n\n`;
const TOKEN_SSE = sse({
  id: 'c',
  object: 'chat.completion.chunk',
  created: 0,
  model: 'm',
  choices: [{ index: 0, delta: { content: 'tok ' }, finish_reason: null }],
});
const finishSse = (tokens) =>
  sse({
    id: 'c',
    object: 'chat.completion.chunk',
    created: 0,
    model: 'm',
    choices: [{ index: 0, delta: {}, finish_reason: 'stop' }],
    usage: { prompt_tokens: 10, completion_tokens: tokens, total_tokens: 10 + tokens },
  }) + 'data: [DONE]\n\n';
const answerJson = (tokens) =>
  JSON.stringify({
    id: 'c',
    object: 'chat.completion',
    created: 0,
    model: 'm',
    choices: [{ index: 0, message: { role: 'assistant', content: 'tok '.repeat(tokens) }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 10, completion_tokens: tokens, total_tokens: 10 + tokens },
  });

// An event-stream message (the vnd.amazon.eventstream framing): prelude (total length, headers
// length, CRC32 of those 8 bytes), string headers, payload, CRC32 of all that precedes it.
function eventMessage(headers, payload) {
  const parts = [];
  for (const [name, value] of Object.entries(headers)) {
    const n = Buffer.from(name);
    const v = Buffer.from(value);
    const h = Buffer.alloc(1 + n.length + 1 + 2 + v.length);
    h.writeUInt8(n.length, 0);
    n.copy(h, 1);
    h.writeUInt8(7, 1 + n.length);
    h.writeUInt16BE(v.length, 2 + n.length);
    v.copy(h, 4 + n.length);
    parts.push(h);
  }
  const head = Buffer.concat(parts);
  const total = 12 + head.length + payload.length + 4;
  const msg = Buffer.alloc(total);
  msg.writeUInt32BE(total, 0);
  msg.writeUInt32BE(head.length, 4);
  msg.writeUInt32BE(crc32(msg.subarray(0, 8)), 8);
  head.copy(msg, 12);
  payload.copy(msg, 12 + head.length);
  msg.writeUInt32BE(crc32(msg.subarray(0, total - 4)), total - 4);
  return msg;
}
const payloadPart = (text) =>
  eventMessage(
    { ':event-type': 'PayloadPart', ':content-type': 'application/octet-stream', ':message-type': 'event' },
    Buffer.from(text),
  );
const TOKEN_FRAME = { sse: chunked(TOKEN_SSE), sagemaker: chunked(payloadPart(TOKEN_SSE)) };
const finishFrame = (kind, tokens) =>
  kind === 'sse' ? chunked(finishSse(tokens)) : chunked(payloadPart(finishSse(tokens)));
const HEAD = {
  sse:
    'HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\ntransfer-encoding: ' +
    'chunked\r\nconnection: keep-alive\r\n\r\n',
  sagemaker:
    'HTTP/1.1 200 OK\r\ncontent-type: application/vnd.amazon.eventstream\r\nx-amzn-sagemaker-content-type: ' +
    'text/event-stream\r\nx-amzn-invoked-production-variant: AllTraffic\r\nx-amzn-requestid: ' +
    'r\r\ntransfer-encoding: chunked\r\nconnection: keep-alive\r\n\r\n',
};

const arrivals = [];
let unidentified = 0;
const counts = { requests: 0, streams: 0, tokens: 0, cut: 0, connections: 0, connectionsAtFirstRequest: null };

/** Writes one answer on the socket, then calls `done`. */
function answer(socket, kind, done) {
  const ms = responseMs();
  const tokens = Math.max(1, Math.round((ms / 1000) * TOKENS_PER_SECOND));
  if (kind === 'json') {
    setTimeout(() => {
      const body = Buffer.from(answerJson(tokens));
      if (!socket.destroyed)
        socket.write(
          `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\nconnection: keep-alive\r\n\r\n`,
        );
      if (!socket.destroyed) socket.write(body);
      done();
    }, ms);
    return;
  }
  counts.streams++;
  socket.write(HEAD[kind]);
  const started = performance.now();
  let sent = 0;
  const next = () => {
    if (socket.destroyed) {
      counts.cut++;
      return done();
    }
    sent++;
    counts.tokens++;
    if (sent < tokens) {
      socket.write(TOKEN_FRAME[kind]);
      setTimeout(next, Math.max(0, started + (ms * (sent + 1)) / tokens - performance.now()));
    } else {
      socket.write(Buffer.concat([TOKEN_FRAME[kind], finishFrame(kind, tokens), END_CHUNKED]));
      done();
    }
  };
  setTimeout(next, ms / tokens);
}

function onConnection(socket) {
  counts.connections++;
  const acceptedNs = nowNs();
  let before = 0;
  socket.setNoDelay(true);
  let buffer = Buffer.alloc(0);
  let firstByteNs = null;
  // Requests on one connection are answered in order, one at a time.
  const queue = [];
  let busy = false;
  const pump = () => {
    if (busy || queue.length === 0) return;
    busy = true;
    answer(socket, queue.shift(), () => {
      busy = false;
      pump();
    });
  };
  socket.on('data', (chunk) => {
    if (firstByteNs === null) firstByteNs = nowNs();
    buffer = buffer.length === 0 ? chunk : Buffer.concat([buffer, chunk]);
    for (;;) {
      const end = buffer.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = buffer.subarray(0, end).toString('latin1');
      const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
      if (buffer.length < end + 4 + length) return;
      const body = buffer.subarray(end + 4, end + 4 + length).toString('latin1');
      const id = (/\r\nx-request-id:\s*([^\r\n]+)/i.exec(head) ??
        /\r\nx-amzn-sagemaker-inference-id:\s*([^\r\n]+)/i.exec(head))?.[1]?.trim();
      if (id) arrivals.push(`${id} ${firstByteNs} ${before++} ${acceptedNs}`);
      else unidentified++;
      if (counts.requests === 0) counts.connectionsAtFirstRequest = counts.connections;
      counts.requests++;
      const path = head.slice(head.indexOf(' ') + 1, head.indexOf(' ', head.indexOf(' ') + 1));
      queue.push(
        path.endsWith('/invocations-response-stream') ? 'sagemaker' : /"stream"\s*:\s*true/.test(body) ? 'sse' : 'json',
      );
      buffer = buffer.subarray(end + 4 + length);
      firstByteNs = buffer.length > 0 ? nowNs() : null;
      pump();
    }
  });
  socket.on('error', () => {});
}

const server =
  tlsCert && tlsKey
    ? createTlsServer({ cert: readFileSync(tlsCert), key: readFileSync(tlsKey) }, onConnection)
    : createTcpServer(onConnection);
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(
    JSON.stringify({ url: `${tlsCert ? 'https' : 'http'}://127.0.0.1:${server.address().port}` }) + '\n',
  );
});

process.on('SIGTERM', () => {
  writeFileSync(out, arrivals.join('\n') + (arrivals.length ? '\n' : ''));
  writeFileSync(`${out}.counts.json`, JSON.stringify({ ...counts, unidentified }));
  if (unidentified > 0) process.stderr.write(`arrival-server: ${unidentified} request(s) without an id\n`);
  process.exit(0);
});
