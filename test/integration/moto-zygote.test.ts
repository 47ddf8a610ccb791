/**
 * moto_server forked by the run's zygote (test/support/moto-zygote.ts, moto-server.py
 * --zygote): the server a test gets is the zygote's child, leading a session of its own; it
 * takes the environment it is given (moto reads INITIAL_NO_AUTH_ACTION_COUNT once, at import,
 * which the zygote did before) without passing it on to the next; it exits with the process
 * that asked for it; without a zygote, startMoto spawns moto_server itself.
 */
import { ListBucketsCommand, S3Client } from '@aws-sdk/client-s3';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { awsClientConfig, describeWithMoto, startMoto, strictMotoCommand } from '../support/moto';
import { forkMotoServer, MOTO_ZYGOTE_ENV } from '../support/moto-zygote';
import { procStatFields } from '../support/proc-stat';
import { isAlive } from '../support/run-shared';
import { until } from '../support/until';

const dir = mkdtempSync(join(tmpdir(), 'cr-moto-zygote-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const zygotePid = () => (JSON.parse(process.env[MOTO_ZYGOTE_ENV] ?? 'null') as { pid: number } | null)?.pid;

async function listBuckets(endpoint: string): Promise<string> {
  const s3 = new S3Client({ ...awsClientConfig(endpoint), maxAttempts: 1 });
  try {
    await s3.send(new ListBucketsCommand({}));
    return 'allowed';
  } catch (error) {
    return (error as Error).name;
  } finally {
    s3.destroy();
  }
}

describeWithMoto("moto_server forked by the run's zygote", () => {
  it("is the zygote's child in a session of its own, and takes the environment it is given, not the one before", async () => {
    if (!strictMotoCommand()) return; // no Python that imports moto: no zygote (moto-strict.test.ts fails that under CI)
    expect(zygotePid(), `${MOTO_ZYGOTE_ENV} is set by the run's global setup`).toBeTypeOf('number');
    const enforced = await startMoto({ env: { INITIAL_NO_AUTH_ACTION_COUNT: '0' } });
    const open = await startMoto();
    try {
      for (const moto of [enforced, open]) {
        const [, ppid, , session] = procStatFields(moto.pid!);
        expect(Number(ppid)).toBe(zygotePid());
        expect(Number(session)).toBe(moto.pid);
      }
      // moto's IAM enforcement: the test credentials are no IAM user's.
      expect(await listBuckets(enforced.endpoint)).toBe('InvalidAccessKeyId');
      expect(await listBuckets(open.endpoint)).toBe('allowed');
    } finally {
      await enforced.stop();
      await open.stop();
    }
    expect(isAlive(enforced.pid!) || isAlive(open.pid!)).toBe(false);
  });

  it('exits with the process that asked for it', async () => {
    if (!strictMotoCommand()) return;
    const script = join(dir, 'ask.mts'); // an ES module outside the package: top-level await
    writeFileSync(
      script,
      `import { forkMotoServer } from ` +
        `${JSON.stringify(join(import.meta.dirname, '../support/moto-zygote.ts'))};\nconsole.log(await ` +
        `forkMotoServer(['-H', '127.0.0.1', '-p', '0'], {}, ` +
        `${JSON.stringify(join(dir, 'stderr'))}));\nsetInterval(() => undefined, 1000);\n`,
    );
    const asker = spawn(process.execPath, ['--import', 'tsx', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      let out = '';
      asker.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
      await until(() => out.includes('\n'), "the forked server's pid", 60_000);
      const pid = Number(out.trim());
      expect(Number.isInteger(pid) && isAlive(pid), `the asker printed ${out.trim()}`).toBe(true);
      asker.kill('SIGKILL');
      await until(() => !isAlive(pid), 'the server to exit after its asker', 10_000);
    } finally {
      asker.kill('SIGKILL');
    }
  });

  it('without a zygote: no fork, and startMoto spawns moto_server as its own child', async () => {
    const saved = process.env[MOTO_ZYGOTE_ENV];
    delete process.env[MOTO_ZYGOTE_ENV];
    try {
      expect(await forkMotoServer([], {}, join(dir, 'unused'))).toBeNull();
      const moto = await startMoto();
      try {
        expect(Number(procStatFields(moto.pid!)[1])).toBe(process.pid);
        expect(await listBuckets(moto.endpoint)).toBe('allowed');
      } finally {
        await moto.stop();
      }
    } finally {
      if (saved !== undefined) process.env[MOTO_ZYGOTE_ENV] = saved;
    }
  });
});
