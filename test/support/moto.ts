/**
 * moto_server (Python moto 5) as the emulated AWS for integration tests: started on a free
 * port, stopped after. Without moto the suite is skipped with one line saying how to get
 * it, except under CI=true, where its absence fails the run.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { describe, it } from 'vitest';

export function motoAvailable(): boolean {
  return spawnSync('sh', ['-c', 'command -v moto_server'], { stdio: 'ignore' }).status === 0;
}

const INSTALL_HINT = 'moto_server not found: install it with `pip install "moto[server]"` (Python moto 5) to run the emulated-AWS tests';

/** describe() that needs moto: skipped locally without it, failing under CI=true. */
export function describeWithMoto(name: string, body: () => void): void {
  if (motoAvailable()) {
    describe(name, body);
    return;
  }
  if (process.env.CI === 'true') {
    describe(name, () => {
      it('has moto_server (required in CI)', () => {
        throw new Error(INSTALL_HINT);
      });
    });
    return;
  }
  console.warn(`[skipped] ${name}: ${INSTALL_HINT}`);
  describe.skip(name, body);
}

async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as { port: number }).port;
  server.close();
  await once(server, 'close');
  return port;
}

export interface Moto {
  endpoint: string;
  stop(): Promise<void>;
}

export async function startMoto(): Promise<Moto> {
  const port = await freePort();
  const child: ChildProcess = spawn('moto_server', ['-H', '127.0.0.1', '-p', String(port)], { stdio: 'ignore' });
  const endpoint = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`moto_server exited with code ${child.exitCode}`);
    try {
      const res = await fetch(`${endpoint}/moto-api/`);
      if (res.ok) break;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) throw new Error('moto_server did not answer within 30 s');
    await new Promise((r) => setTimeout(r, 150));
  }
  return {
    endpoint,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** AWS SDK v3 client settings that talk to moto. */
export function awsClientConfig(endpoint: string) {
  return { region: 'us-east-1', endpoint, forcePathStyle: true, credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' } };
}
