/**
 * A metering middleware for AWS SDK v3 clients: counts every HTTP attempt per label (who made
 * it), service, operation and resource (queue or bucket), and what AWS would bill for it: SQS
 * requests by 64 KB chunk (sqsBilledRequests, sqsPayload), S3 requests by price class
 * (s3RequestClass), one per attempt as AWS bills retries (AwsMeter.attach).
 */

export type S3RequestClass = 'put' | 'get' | 'free';

export const SQS_BILLING_CHUNK_BYTES = 64 * 1024;

/**
 * SQS billed requests for one API call with `payloadBytes` of messages (sqsPayload): every 64 KB (65,536-byte) chunk
 * is billed as one request, at least one.
 */
export function sqsBilledRequests(payloadBytes: number): number {
  return Math.max(1, Math.ceil(payloadBytes / SQS_BILLING_CHUNK_BYTES));
}

const S3_FREE = /^(Delete|AbortMultipartUpload$)/;
const S3_PUT_CLASS = /^(Put|Copy|Create|Complete|UploadPart|List|Restore|PostObject)/;

/**
 * The S3 price class of an operation name (`PutObject`, `ListObjectsV2`, `GetObject`, ...): `put` = PUT, COPY, POST
 * and LIST requests (PutObject, CopyObject, UploadPart, Create/CompleteMultipartUpload, ListObjectsV2, bucket
 * configuration writes, ...); `get` = GET, HEAD and all other requests; `free` = DELETE and abort (cancel) requests.
 */
export function s3RequestClass(operation: string): S3RequestClass {
  if (S3_FREE.test(operation)) return 'free';
  if (S3_PUT_CLASS.test(operation)) return 'put';
  return 'get';
}

interface SqsAttribute {
  DataType?: string;
  StringValue?: string;
  BinaryValue?: Uint8Array;
}
interface SqsMessageLike {
  MessageBody?: string;
  Body?: string;
  MessageAttributes?: Record<string, SqsAttribute>;
}

function attributeBytes(attributes: Record<string, SqsAttribute> | undefined): number {
  let n = 0;
  for (const [name, a] of Object.entries(attributes ?? {})) {
    n +=
      Buffer.byteLength(name) +
      Buffer.byteLength(a.DataType ?? '') +
      (a.StringValue !== undefined ? Buffer.byteLength(a.StringValue) : 0) +
      (a.BinaryValue?.byteLength ?? 0);
  }
  return n;
}

function messageBytes(m: SqsMessageLike): number {
  return Buffer.byteLength(m.MessageBody ?? m.Body ?? '') + attributeBytes(m.MessageAttributes);
}

/**
 * The payload an SQS call carries (what billing sizes) and how many messages are in it. A batch's payload is the
 * total of its messages (bodies plus message attributes); sends are sized by what was sent, receives by what came
 * back; every other action carries none (one billed request).
 */
export function sqsPayload(
  operation: string,
  input: Record<string, unknown>,
  output: Record<string, unknown> | undefined,
): { bytes: number; messages: number } {
  switch (operation) {
    case 'SendMessage':
      return { bytes: messageBytes(input as SqsMessageLike), messages: 1 };
    case 'SendMessageBatch': {
      const entries = (input.Entries as SqsMessageLike[] | undefined) ?? [];
      return { bytes: entries.reduce((n, e) => n + messageBytes(e), 0), messages: entries.length };
    }
    case 'ReceiveMessage': {
      const messages = (output?.Messages as SqsMessageLike[] | undefined) ?? [];
      return { bytes: messages.reduce((n, m) => n + messageBytes(m), 0), messages: messages.length };
    }
    case 'DeleteMessageBatch':
    case 'ChangeMessageVisibilityBatch':
      return { bytes: 0, messages: ((input.Entries as unknown[] | undefined) ?? []).length };
    case 'DeleteMessage':
    case 'ChangeMessageVisibility':
      return { bytes: 0, messages: 1 };
    default:
      return { bytes: 0, messages: 0 };
  }
}

export interface OperationCount {
  /** Who made the calls (the label the client was attached with). */
  label: string;
  /** `SQS`, `S3`, ... (the client name without `Client`). */
  service: string;
  /** `SendMessageBatch`, `PutObject`, ... */
  operation: string;
  /** Queue name (SQS) or bucket (S3), '' when the call has none. */
  resource: string;
  /** HTTP attempts that got a response, errors included. */
  calls: number;
  /** Of those, answered with an error status. */
  errors: number;
  /** Attempts that failed before any response (not billed). */
  unsent: number;
  /** What AWS bills: SQS requests (64 KB chunks), S3 requests (0 for free classes), otherwise calls. */
  billed: number;
  /** SQS: message bytes sent or received. */
  payloadBytes: number;
  /** SQS: messages sent, received, deleted. */
  messages: number;
  /** SQS ReceiveMessage calls that returned nothing. */
  emptyReceives: number;
  /** S3 only. */
  s3Class?: S3RequestClass;
}

export interface MeterTotals {
  calls: number;
  errors: number;
  sqs: { calls: number; billed: number; payloadBytes: number; emptyReceives: number; emptyReceiveBilled: number };
  s3: { put: number; get: number; free: number };
  other: number;
}

export interface MeterFilter {
  label?: string | readonly string[];
  service?: string;
  operation?: string;
  resource?: string;
}

interface HandlerContext {
  clientName?: string;
  commandName?: string;
}
type DeserializeArgs = { input: Record<string, unknown>; request?: unknown };
type DeserializeOutput = { output: Record<string, unknown>; response?: unknown };
type DeserializeHandler = (args: DeserializeArgs) => Promise<DeserializeOutput>;
type DeserializeMiddleware = (next: DeserializeHandler, context: HandlerContext) => DeserializeHandler;

function resourceOf(service: string, input: Record<string, unknown>): string {
  if (service === 'SQS' && typeof input.QueueUrl === 'string') return input.QueueUrl.split('/').pop() ?? '';
  if (service === 'S3' && typeof input.Bucket === 'string') return input.Bucket;
  return '';
}

function matches(c: OperationCount, f: MeterFilter): boolean {
  if (f.label !== undefined && !(typeof f.label === 'string' ? [f.label] : f.label).includes(c.label)) return false;
  if (f.service !== undefined && c.service !== f.service) return false;
  if (f.operation !== undefined && c.operation !== f.operation) return false;
  if (f.resource !== undefined && c.resource !== f.resource) return false;
  return true;
}

export class AwsMeter {
  private readonly counts = new Map<string, OperationCount>();

  /**
   * Adds the metering middleware to `client` (any SDK v3 client); returns the client. The middleware sits in the
   * deserialize step, inside the SDK's retry loop, so a retried call counts once per attempt, as AWS bills it. An
   * attempt that got an HTTP error response is counted (and billed) with `errors` incremented; one that never
   * reached the service (a network error) is counted in `unsent` and not billed.
   */
  attach<C extends { middlewareStack: unknown }>(client: C, label = 'default'): C {
    const middleware: DeserializeMiddleware = (next, context) => async (args) => {
      const service = (context.clientName ?? 'Unknown').replace(/Client$/, '');
      const operation = (context.commandName ?? 'Unknown').replace(/Command$/, '');
      const input = args.input ?? {};
      try {
        const out = await next(args);
        this.record(label, service, operation, input, out.output, 'ok');
        return out;
      } catch (error) {
        const status = (error as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode;
        this.record(label, service, operation, input, undefined, status !== undefined ? 'error' : 'unsent');
        throw error;
      }
    };
    (
      client.middlewareStack as {
        add(
          m: DeserializeMiddleware,
          o: { step: 'deserialize'; name: string; priority: 'high'; override: boolean },
        ): void;
      }
    ).add(middleware, {
      step: 'deserialize',
      name: 'awsMeterMiddleware',
      priority: 'high',
      override: true,
    });
    return client;
  }

  private record(
    label: string,
    service: string,
    operation: string,
    input: Record<string, unknown>,
    output: Record<string, unknown> | undefined,
    outcome: 'ok' | 'error' | 'unsent',
  ): void {
    const resource = resourceOf(service, input);
    const key = `${label}\u0000${service}\u0000${operation}\u0000${resource}`;
    let c = this.counts.get(key);
    if (!c) {
      c = {
        label,
        service,
        operation,
        resource,
        calls: 0,
        errors: 0,
        unsent: 0,
        billed: 0,
        payloadBytes: 0,
        messages: 0,
        emptyReceives: 0,
        ...(service === 'S3' ? { s3Class: s3RequestClass(operation) } : {}),
      };
      this.counts.set(key, c);
    }
    if (outcome === 'unsent') {
      c.unsent++;
      return;
    }
    c.calls++;
    if (outcome === 'error') c.errors++;
    if (service === 'SQS') {
      // A failed call's payload is what was sent (receives return nothing then).
      const p = sqsPayload(operation, input, output);
      c.payloadBytes += p.bytes;
      if (outcome === 'ok') c.messages += p.messages;
      c.billed += sqsBilledRequests(p.bytes);
      if (operation === 'ReceiveMessage' && outcome === 'ok' && p.messages === 0) c.emptyReceives++;
    } else if (service === 'S3') {
      if (c.s3Class !== 'free') c.billed++;
    } else {
      c.billed++;
    }
  }

  /** Per label, service, operation and resource, sorted. */
  operations(filter: MeterFilter = {}): OperationCount[] {
    return [...this.counts.values()]
      .filter((c) => matches(c, filter))
      .map((c) => ({ ...c }))
      .sort((a, b) =>
        `${a.label} ${a.service} ${a.operation} ${a.resource}`.localeCompare(
          `${b.label} ${b.service} ${b.operation} ${b.resource}`,
        ),
      );
  }

  totals(filter: MeterFilter = {}): MeterTotals {
    const t: MeterTotals = {
      calls: 0,
      errors: 0,
      sqs: { calls: 0, billed: 0, payloadBytes: 0, emptyReceives: 0, emptyReceiveBilled: 0 },
      s3: { put: 0, get: 0, free: 0 },
      other: 0,
    };
    for (const c of this.counts.values()) {
      if (!matches(c, filter)) continue;
      t.calls += c.calls;
      t.errors += c.errors;
      if (c.service === 'SQS') {
        t.sqs.calls += c.calls;
        t.sqs.billed += c.billed;
        t.sqs.payloadBytes += c.payloadBytes;
        t.sqs.emptyReceives += c.emptyReceives;
        t.sqs.emptyReceiveBilled += c.emptyReceives; // an empty receive carries no payload: one request
      } else if (c.service === 'S3' && c.s3Class) {
        t.s3[c.s3Class] += c.calls;
      } else {
        t.other += c.calls;
      }
    }
    return t;
  }

  reset(): void {
    this.counts.clear();
  }
}

export interface LambdaFunctionStats {
  name: string;
  memoryMb: number;
  invocations: number;
  /** Invocations that threw (a failed batch). */
  errors: number;
  /** Sum of billed durations: wall time of each invocation rounded up to 1 ms, as Lambda bills. */
  billedMs: number;
  gbSeconds: number;
  /** Execution environments the pool created: the function's peak concurrency. */
  instances: number;
}

/**
 * Lambda's side of the bill for handlers run locally: each wrapped function keeps a pool of
 * handler instances (one per concurrent invocation, as Lambda keeps one event per execution
 * environment at a time, so module state such as a batch processor is never shared by two
 * events), and times every invocation. GB-seconds = billed duration x configured memory.
 */
export class LambdaMeter {
  private readonly fns = new Map<string, LambdaFunctionStats>();

  wrap<E, C, R>(
    name: string,
    memoryMb: number,
    makeHandler: () => (event: E, context: C) => Promise<R>,
  ): (event: E, context: C) => Promise<R> {
    if (this.fns.has(name)) throw new Error(`function ${name} is already metered`);
    const stats: LambdaFunctionStats = {
      name,
      memoryMb,
      invocations: 0,
      errors: 0,
      billedMs: 0,
      gbSeconds: 0,
      instances: 0,
    };
    this.fns.set(name, stats);
    const idle: ((event: E, context: C) => Promise<R>)[] = [];
    return async (event, context) => {
      let instance = idle.pop();
      if (!instance) {
        instance = makeHandler();
        stats.instances++;
      }
      const t0 = performance.now();
      try {
        return await instance(event, context);
      } catch (error) {
        stats.errors++;
        throw error;
      } finally {
        const billed = Math.ceil(performance.now() - t0);
        stats.invocations++;
        stats.billedMs += billed;
        stats.gbSeconds += (billed / 1000) * (memoryMb / 1024);
        idle.push(instance);
      }
    };
  }

  stats(): LambdaFunctionStats[] {
    return [...this.fns.values()].map((s) => ({ ...s }));
  }
}
