/**
 * A claim whose first PUT was stored although S3 answered 500: the AWS SDK retries the
 * conditional PutObject, the retry meets the claim its first try wrote and gets 412, and the
 * store says "not created". The fire stage must read the claim back, see its own, and fire
 * the shard; taken as another worker's claim, the whole shard was never sent and later
 * counted lost. The real S3 adapter and the SDK (its own retry strategy) talk to an S3
 * stand-in: a node:http server in this process that answers as S3 does.
 */
import { S3Client } from '@aws-sdk/client-s3';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { S3ObjectStore } from '../../../lambdas/adapters/aws/s3-object-store';
import { MemoryObjectStore } from '../../../lambdas/adapters/local/memory-store';
import { MemoryQueue } from '../../../lambdas/adapters/local/memory-queue';
import { runFireLoop } from '../../../lambdas/core/fire/fire-loop';
import { decodeResultLines } from '../../../lambdas/core/pipeline/results';
import { claimKey, resultsKey } from '../../../lambdas/core/pipeline/keys';
import { handleShard, type HandleShardDeps } from '../../../lambdas/core/pipeline/stages';
import { chatRequests, shardBodies } from '../../support/shard-messages';
import { FakeTarget, VirtualClock } from '../../support/virtual-clock';

const BUCKET = 'results';
const START_NS = 1_800_000_000_000_000_000n;

interface Seen {
  method: string;
  key: string;
  ifNoneMatch: string | undefined;
  status: number;
}

/**
 * S3 in miniature, path-style: PutObject (with `If-None-Match: *`, a conditional create) and
 * GetObject. A conditional create of a key in `failFirst` is stored and then answered 500
 * InternalError, once: the write happened, the answer was lost.
 */
function s3StandIn(failFirst: (key: string) => boolean) {
  const objects = new Map<string, Buffer>();
  const failed = new Set<string>();
  const seen: Seen[] = [];
  const xmlError = (res: ServerResponse, status: number, code: string, key: string) => {
    res.writeHead(status, { 'content-type': 'application/xml', 'x-amz-request-id': `standin-${seen.length}` });
    res.end(
      `<?xml version="1.0" ` +
        `encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${code}</Message><Key>` +
        `${key}</Key><RequestId>standin-${seen.length}</RequestId></Error>`,
    );
  };
  const handle = (req: IncomingMessage, body: Buffer, res: ServerResponse): number => {
    const path = new URL(req.url ?? '/', 'http://s3').pathname;
    const prefix = `/${BUCKET}/`;
    if (!path.startsWith(prefix)) return (xmlError(res, 404, 'NoSuchBucket', path), 404);
    const key = decodeURIComponent(path.slice(prefix.length));
    if (req.method === 'GET') {
      const object = objects.get(key);
      if (!object) return (xmlError(res, 404, 'NoSuchKey', key), 404);
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': object.length, etag: '"e"' });
      res.end(object);
      return 200;
    }
    if (req.method !== 'PUT') return (xmlError(res, 405, 'MethodNotAllowed', key), 405);
    if (req.headers['if-none-match'] === '*' && objects.has(key))
      return (xmlError(res, 412, 'PreconditionFailed', key), 412);
    objects.set(key, body);
    if (req.headers['if-none-match'] === '*' && failFirst(key) && !failed.has(key)) {
      failed.add(key);
      return (xmlError(res, 500, 'InternalError', key), 500);
    }
    res.writeHead(200, { etag: '"e"', 'content-length': 0 });
    res.end();
    return 200;
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = new URL(req.url ?? '/', 'http://s3').pathname;
      const status = handle(req, Buffer.concat(chunks), res);
      seen.push({
        method: req.method ?? '',
        key: decodeURIComponent(path.slice(BUCKET.length + 2)),
        ifNoneMatch: req.headers['if-none-match'],
        status,
      });
    });
  });
  return { server, objects, seen };
}

describe('fire stage: a claim refused by the retry of its own stored write (S3 stand-in, the AWS SDK)', () => {
  const standIn = s3StandIn((key) => key.includes('/_claims/'));
  let server: Server;
  let client: S3Client;

  beforeAll(async () => {
    server = standIn.server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    client = new S3Client({
      region: 'us-east-1',
      endpoint: `http://127.0.0.1:${port}`,
      forcePathStyle: true,
      credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' },
    });
  });

  afterAll(async () => {
    client?.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it(
    'stored, answered 500, retried by the SDK, 412: the claim read back is its own, so every request is fired ' +
      'and its results written',
    async () => {
      const clock = new VirtualClock(START_NS);
      const target = new FakeTarget('A', clock, () => ({ latencyMs: 5 }));
      const requests = chatRequests(6, 20);
      const [body] = await shardBodies({
        runId: 'run-retry',
        target: 'A',
        requests,
        startNs: START_NS,
        leadMs: 5000,
        store: new MemoryObjectStore(),
      });
      const { shardId } = JSON.parse(body!) as { shardId: string };
      const deps: HandleShardDeps = {
        store: new S3ObjectStore(client, BUCKET),
        queue: new MemoryQueue(() => clock.nowNs()),
        clock,
        leadMs: 5000,
        claimLeaseMs: 900_000,
        workerId: 'fire_invocation-1',
        fire: (reqs, message, onOutcome) =>
          runFireLoop(reqs, {
            runId: message.runId,
            target,
            clock,
            startNs: BigInt(message.startNs),
            workerId: 'fire_invocation-1',
            onOutcome,
          }),
      };

      const handled = await handleShard(body!, deps);

      // The SDK's own retry produced the 412: the claim's PUT was answered 500, then 412.
      const claim = claimKey('run-retry', 'A', shardId);
      expect(
        standIn.seen.filter((s) => s.method === 'PUT' && s.key === claim).map((s) => [s.ifNoneMatch, s.status]),
      ).toEqual([
        ['*', 500],
        ['*', 412],
      ]);
      expect(JSON.parse(standIn.objects.get(claim)!.toString('utf8'))).toMatchObject({ workerId: 'fire_invocation-1' });
      expect(handled.action).toBe('fired');
      expect(target.sent).toHaveLength(requests.length);
      const results = resultsKey('run-retry', 'A', shardId);
      const lines = decodeResultLines(standIn.objects.get(results)?.toString('utf8') ?? '', results);
      expect(lines.map((l) => l.kind)).toEqual(requests.map(() => 'record'));
    },
  );

  it("another worker's claim refused the same way is still held: nothing fired (a duplicate)", async () => {
    const clock = new VirtualClock(START_NS);
    const target = new FakeTarget('A', clock, () => ({ latencyMs: 5 }));
    const [body] = await shardBodies({
      runId: 'run-other',
      target: 'A',
      requests: chatRequests(3, 20),
      startNs: START_NS,
      leadMs: 5000,
      store: new MemoryObjectStore(),
    });
    const { shardId } = JSON.parse(body!) as { shardId: string };
    const claim = claimKey('run-other', 'A', shardId);
    standIn.objects.set(
      claim,
      Buffer.from(JSON.stringify({ workerId: 'fire_invocation-0', atNs: START_NS.toString(), nonce: 'n0' })),
    );
    const store = new S3ObjectStore(client, BUCKET);
    const base = { store, queue: new MemoryQueue(() => clock.nowNs()), clock, leadMs: 5000, claimLeaseMs: 900_000 };
    const fire: HandleShardDeps['fire'] = (reqs, message, onOutcome) =>
      runFireLoop(reqs, {
        runId: message.runId,
        target,
        clock,
        startNs: BigInt(message.startNs),
        workerId: 'w',
        onOutcome,
      });

    expect((await handleShard(body!, { ...base, workerId: 'fire_invocation-1', fire })).action).toBe('duplicate');
    // The same invocation given the shard twice (a duplicate in one batch) holds two attempts: the second is refused.
    expect((await handleShard(body!, { ...base, workerId: 'fire_invocation-0', fire })).action).toBe('duplicate');
    expect(target.sent).toHaveLength(0);
    expect(standIn.objects.has(resultsKey('run-other', 'A', shardId))).toBe(false);
  });
});
