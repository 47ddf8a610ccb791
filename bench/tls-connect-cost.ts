/**
 * The client's CPU for one TLS connection to a local node:tls server in another process, as the
 * fire function opens them: with the session of the connection before (undici's session cache),
 * and either a SecureContext made for each connection (what tls.connect does without one) or one
 * shared by all (lambdas/adapters/http/tls-context.ts). The certificate is bench:fire-lateness's
 * (certificate.ts), trusted through NODE_EXTRA_CA_CERTS; connections one after another, full CPU.
 *
 *   node --import tsx bench/tls-connect-cost.ts [connections per round, default 400]
 */
import { execFileSync, fork } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import { selfSignedCertificate } from './certificate';

const KEY_ENV = 'CR_TLS_COST_KEY';

async function measure(n: number, key: string, cert: string): Promise<void> {
  const server = fork(process.argv[1] as string, ['server', key, cert]);
  const port = await new Promise<number>((resolve) => server.once('message', (p) => resolve(p as number)));
  const shared = tls.createSecureContext();
  let session: Buffer | undefined;
  const connect = (own: boolean) =>
    new Promise<tls.TLSSocket>((resolve, reject) => {
      const socket = tls.connect({ host: '127.0.0.1', port, ...(own ? {} : { secureContext: shared }), session });
      socket.once('secureConnect', () => resolve(socket)).once('error', reject);
      socket.on('session', (s: Buffer) => (session = s));
    });
  for (const round of [1, 2])
    for (const own of [true, false]) {
      const sockets: tls.TLSSocket[] = [];
      const cpu = process.cpuUsage();
      for (let i = 0; i < n; i++) sockets.push(await connect(own));
      const used = process.cpuUsage(cpu);
      const perConnection = (used.user + used.system) / 1000 / n;
      console.log(
        `round ${round}, ${own ? 'a context per connection' : 'one shared context'}: ` +
          `${perConnection.toFixed(3)} ms of client CPU per connection (${n})`,
      );
      for (const s of sockets) s.destroy();
    }
  server.kill();
}

if (process.argv[2] === 'server') {
  const [key, cert] = [process.argv[3] as string, process.argv[4] as string];
  const server = tls.createServer({ key: readFileSync(key), cert: readFileSync(cert) }, (s) =>
    s.on('error', () => undefined),
  );
  server.listen(0, '127.0.0.1', () => process.send?.((server.address() as { port: number }).port));
} else if (!process.env[KEY_ENV]) {
  // The client must trust the certificate from its start, as the fire function does: run again with it.
  const dir = mkdtempSync(join(tmpdir(), 'cr-tls-cost-'));
  const { cert, key } = selfSignedCertificate(dir);
  try {
    execFileSync(process.execPath, [...process.execArgv, process.argv[1] as string, ...process.argv.slice(2)], {
      stdio: 'inherit',
      env: { ...process.env, NODE_EXTRA_CA_CERTS: cert, [KEY_ENV]: key },
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
} else {
  await measure(
    Number(process.argv[2] ?? 400),
    process.env[KEY_ENV] as string,
    process.env.NODE_EXTRA_CA_CERTS as string,
  );
}
