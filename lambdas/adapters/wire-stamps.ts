/**
 * When a request's bytes are handed to the socket: the send time a server's view can be
 * compared with. A target stamps its own start before it calls its HTTP client (the loop's
 * pick-up); anything that delays the write after that (a busy event loop, a connection still
 * being opened, a pool with no free socket) would otherwise be counted as the endpoint's time
 * and not as our lateness.
 *
 * Two of Node's diagnostics channels, both published synchronously at the write:
 *   - `undici:client:sendHeaders` (the HTTP targets' undici pool): published with the request
 *     right before its header block (and, for a buffered body, the body) is written to the
 *     socket (undici lib/dispatcher/client-h1.js, writeH1). The request is found by its
 *     `x-request-id` header.
 *   - `http.client.request.start` (node:http, which the AWS SDK's NodeHttpHandler uses for
 *     SageMaker): published by ClientRequest once the request has been written to its
 *     socket (measured on Node 20: after `end()`, with the socket attached). The request is
 *     found by SageMaker's `X-Amzn-SageMaker-Inference-Id` header, which carries our
 *     request id (sagemaker-target.ts sets InferenceId to it).
 * Subscribing costs each request one header lookup; requests nobody waits for are ignored.
 */
import { subscribe } from 'node:diagnostics_channel';
import type { Clock } from '../ports';

interface Expected {
  clock: Clock;
  ns: bigint | null;
}

const expected = new Map<string, Expected>();
let subscribed = false;

function stamp(id: unknown): void {
  if (typeof id !== 'string') return;
  const entry = expected.get(id);
  // The first write counts: a request is written once (no retries in either client).
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
    stamp(request?.getHeader?.('x-amzn-sagemaker-inference-id'));
  });
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
