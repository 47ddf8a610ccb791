/**
 * When a request's bytes are handed to the socket: the send time a server's view can be
 * compared with. A target stamps its own start before it calls its HTTP client (the loop's
 * pick-up); anything that delays the write after that (a busy event loop, a connection still
 * being opened, a pool with no free socket) would otherwise be counted as the endpoint's time
 * and not as our lateness. The stamp is taken right before the write, never after it: a
 * process paused between a write and its stamp (on a busy machine the write itself wakes the
 * server, which may take the core) would start the request's time after the server already
 * has it, and its latency and TTFT would read short.
 *
 * How each kind of target is stamped: subscribeOnce (HTTP targets, undici's channel) and
 * WireStampingHttpAgent (SageMaker targets, node:http). Subscribing costs each request one
 * header lookup; requests nobody waits for are ignored.
 */
import { subscribe } from 'node:diagnostics_channel';
import { Agent as HttpAgent, type ClientRequest } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { Duplex } from 'node:stream';
import type { Clock } from '../ports';

interface Expected {
  clock: Clock;
  ns: bigint | null;
}

const SAGEMAKER_ID_HEADER = 'x-amzn-sagemaker-inference-id';
const expected = new Map<string, Expected>();
let subscribed = false;

function stamp(id: unknown): void {
  if (typeof id !== 'string') return;
  const entry = expected.get(id);
  // The first stamp counts: the one before the write when there is one; a request is
  // written once (no retries in either client).
  if (entry && entry.ns === null) entry.ns = entry.clock.nowNs();
}

/** undici's request keeps its headers as a flat [name, value, name, value, ...] list. */
function undiciHeader(headers: unknown, name: string): unknown {
  if (!Array.isArray(headers)) return undefined;
  for (let i = 0; i + 1 < headers.length; i += 2) {
    const key: unknown = headers[i];
    if (typeof key === 'string' && key.length === name.length && key.toLowerCase() === name) return headers[i + 1];
  }
  return undefined;
}

/**
 * HTTP targets (undici's pool): Node's `undici:client:sendHeaders` diagnostics channel,
 * published with the request right before its header block (and, for a buffered body, the
 * body) is written to the socket (undici lib/dispatcher/client-h1.js, writeH1). The request
 * is found by its `x-request-id` header.
 */
function subscribeOnce(): void {
  if (subscribed) return;
  subscribed = true;
  subscribe('undici:client:sendHeaders', (message) => {
    if (expected.size === 0) return;
    stamp(undiciHeader((message as { request?: { headers?: unknown } }).request?.headers, 'x-request-id'));
  });
  subscribe('http.client.request.start', (message) => {
    if (expected.size === 0) return;
    const request = (message as { request?: { getHeader?: (name: string) => unknown } }).request;
    stamp(request?.getHeader?.(SAGEMAKER_ID_HEADER));
  });
}

/** A request's `socket` listener: node:http writes the request right after it returns. */
function stampBeforeWrite(this: ClientRequest): void {
  if (expected.size > 0) stamp(this.getHeader(SAGEMAKER_ID_HEADER));
}

function watchReusedSocket(request: ClientRequest): void {
  if (expected.size > 0) request.once('socket', stampBeforeWrite);
}

/**
 * SageMaker targets (the AWS SDK's NodeHttpHandler over node:http): the agents below. On a
 * kept-alive socket, node:http emits the request's `socket` event and writes the request in
 * the same synchronous run (lib/_http_client.js, onSocketNT: tickOnSocket, then _flush);
 * the agents listen for that event on the requests they give a reused socket. On a new
 * connection, nothing leaves before the connection (over TLS, the handshake) is made, a
 * later turn of the event loop: node:http's `http.client.request.start` channel, published
 * once the request is queued on its socket, comes first and stamps it; the connection and
 * whatever the event loop runs until then count in the request's time (never shorten it).
 * That channel is also the only stamp for a client built with other agents (it follows the write on a kept-alive socket). The
 * request is found by SageMaker's `X-Amzn-SageMaker-Inference-Id` header, which carries
 * our request id (sagemaker-target.ts sets InferenceId to it).
 *
 * node:http's agent, stamping a SageMaker request right before it is written to a kept-alive
 * socket. `reuseSocket` is the documented hook for a socket handed to a request again
 * (https://nodejs.org/docs/latest-v20.x/api/http.html#agentreusesocketsocket-request).
 */
export class WireStampingHttpAgent extends HttpAgent {
  override reuseSocket(socket: Duplex, request: ClientRequest): void {
    watchReusedSocket(request);
    super.reuseSocket(socket, request);
  }
}

/** The same for node:https (a SageMaker runtime endpoint in AWS). */
export class WireStampingHttpsAgent extends HttpsAgent {
  override reuseSocket(socket: Duplex, request: ClientRequest): void {
    watchReusedSocket(request);
    super.reuseSocket(socket, request);
  }
}

/** A request whose write is awaited: `take()` gives the wire time (null if never written) and stops waiting. */
export interface WireWatch {
  take(): bigint | null;
}

/**
 * Starts watching for the write of the request with this id (an HTTP target's X-Request-ID,
 * a SageMaker target's InferenceId). Call `take()` exactly once when the request has ended,
 * whatever the outcome.
 */
export function watchWire(requestId: string, clock: Clock): WireWatch {
  subscribeOnce();
  const entry: Expected = { clock, ns: null };
  expected.set(requestId, entry);
  return {
    take() {
      if (expected.get(requestId) === entry) expected.delete(requestId);
      return entry.ns;
    },
  };
}

/** Requests being watched (tests: nothing may be left behind). */
export function watchedWires(): number {
  return expected.size;
}
