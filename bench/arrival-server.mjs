// An independent arrival-stamping HTTP/1.1 server for the server-side lateness benchmark.
// Plain JavaScript on node:net, sharing no code with capture-replay (not its mock server, not
// its clock): it stamps the wall-clock time at which the FIRST byte of each request reaches
// the socket, answers at once with a small chat-completion JSON (keep-alive), and on SIGTERM
// writes one line per request `<x-request-id> <arrival epoch ns>` to the file named by its
// first argument. Prints {"url": ...} once listening.
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';

const out = process.argv[2];
if (!out) throw new Error('usage: arrival-server.mjs <arrivals-file>');

// Wall clock in ns with hrtime resolution: one anchor taken at start-up, on the instant
// Date.now() turns to a new millisecond (an anchor at a random instant would read up to 1 ms
// behind), located between two hrtime reads at most 20 us apart (a pause between the reads
// would move it); up to 50 ticks tried, the tightest kept.
function anchorOnTick() {
  let best = null;
  for (let tries = 0; tries < 50 && !(best && best.width <= 20_000n); tries++) {
    let h1 = process.hrtime.bigint();
    const start = Date.now();
    let h2 = process.hrtime.bigint();
    let h0 = h1;
    let wall = start;
    // h0 < (wall read) < h1 < (wall read) < h2: a change seen at the second read came between h0 and h2.
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

const BODY = Buffer.from(JSON.stringify({ id: 'x', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }));
const RESPONSE = Buffer.concat([Buffer.from(`HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${BODY.length}\r\nconnection: keep-alive\r\n\r\n`), BODY]);

const arrivals = [];
let unidentified = 0;

const server = createServer((socket) => {
  socket.setNoDelay(true);
  let buffer = Buffer.alloc(0);
  let firstByteNs = null; // arrival of the first byte of the request being read
  socket.on('data', (chunk) => {
    if (firstByteNs === null) firstByteNs = nowNs();
    buffer = buffer.length === 0 ? chunk : Buffer.concat([buffer, chunk]);
    for (;;) {
      const end = buffer.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = buffer.subarray(0, end).toString('latin1');
      const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
      if (buffer.length < end + 4 + length) return;
      const id = /\r\nx-request-id:\s*([^\r\n]+)/i.exec(head)?.[1]?.trim();
      if (id) arrivals.push(`${id} ${firstByteNs}`);
      else unidentified++;
      buffer = buffer.subarray(end + 4 + length);
      // A pipelined next request already in the buffer arrived with this chunk.
      firstByteNs = buffer.length > 0 ? nowNs() : null;
      socket.write(RESPONSE);
    }
  });
  socket.on('error', () => {});
});

server.listen(0, '127.0.0.1', () => {
  process.stdout.write(JSON.stringify({ url: `http://127.0.0.1:${server.address().port}` }) + '\n');
});

process.on('SIGTERM', () => {
  writeFileSync(out, arrivals.join('\n') + (arrivals.length ? '\n' : ''));
  if (unidentified > 0) process.stderr.write(`arrival-server: ${unidentified} request(s) without x-request-id\n`);
  process.exit(0);
});
