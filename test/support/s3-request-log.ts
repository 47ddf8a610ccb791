/**
 * A recording HTTP proxy in front of moto_server: a process under test (the CLI) is pointed at
 * it with AWS_ENDPOINT_URL, and every S3 request it makes is forwarded unchanged and recorded
 * (method, bucket, key, query, Range header), so a test can count the LISTs and GETs on the
 * wire. Path-style addressing only (the SDK uses it for an IP-address endpoint). moto checks
 * no signature while IAM enforcement is off, which the forwarded Host header would break.
 */
import { once } from 'node:events';
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';

export interface S3Request {
  method: string;
  bucket: string;
  /** The object key ('' for a bucket-level request such as ListObjectsV2), decoded. */
  key: string;
  query: URLSearchParams;
  range: string | null;
}

export interface S3RequestLog {
  url: string;
  requests: S3Request[];
  /** ListObjectsV2 calls: their prefix and delimiter. */
  lists(): { prefix: string; delimiter: string | null }[];
  /** GetObject calls: the key and the Range header (null: the whole object). */
  gets(): { key: string; range: string | null }[];
  close(): Promise<void>;
}

export async function startS3RequestLog(target: string): Promise<S3RequestLog> {
  const upstream = new URL(target);
  const requests: S3Request[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://proxy');
    const [, bucket = '', ...rest] = url.pathname.split('/');
    requests.push({
      method: req.method ?? 'GET',
      bucket: decodeURIComponent(bucket),
      key: decodeURIComponent(rest.join('/')),
      query: url.searchParams,
      range: (req.headers.range as string | undefined) ?? null,
    });
    const forward = request(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forward.on('error', (error) => {
      res.writeHead(502);
      res.end(String(error));
    });
    req.pipe(forward);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    lists: () =>
      requests
        .filter((r) => r.method === 'GET' && r.key === '' && r.query.get('list-type') === '2')
        .map((r) => ({ prefix: r.query.get('prefix') ?? '', delimiter: r.query.get('delimiter') })),
    gets: () => requests.filter((r) => r.method === 'GET' && r.key !== '').map((r) => ({ key: r.key, range: r.range })),
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}
