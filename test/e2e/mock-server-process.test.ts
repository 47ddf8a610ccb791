/**
 * The bundled mock server as its own process, standalone and through the CLI: it flushes its
 * log on SIGTERM, its help names the command as a user types it (run by its path through tsx,
 * as a user runs it from the clone), bad arguments are refused (the same module from the run's
 * bundle of it, mockServerLaunch: a start without tsx's).
 * (Its HTTP behaviour and timing: test/unit/http/mock-server.test.ts.)
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import { cliScript, mockServerLaunch, REPO_ROOT } from '../support/processes';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'mock-server-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

const post = (url: string, body: string) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
const chat = () => JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi there' }] });

describe('standalone process', () => {
  it('flushes its log on SIGTERM and exits 0', async () => {
    const dir = await tempDir();
    const logFile = join(dir, 'log.jsonl');
    const child = spawn(
      process.execPath,
      [...(await mockServerLaunch()), '--port', '0', '--ttft-ms', '0', '--itl-ms', '0', '--log', logFile],
      { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const lines = createInterface({ input: child.stdout });
    const stdout: string[] = [];
    lines.on('line', (l) => stdout.push(l));
    await once(lines, 'line');
    const { url } = JSON.parse(stdout[0]!) as { url: string };
    for (let i = 0; i < 3; i++) await (await post(`${url}/v1/chat/completions`, chat())).arrayBuffer();
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    expect((await exited)[0]).toBe(0);
    expect(stdout).toHaveLength(1); // the URL line and nothing else
    expect((await readFile(logFile, 'utf8')).trimEnd().split('\n')).toHaveLength(3);
  });

  it.each([
    ['standalone', ['--import', 'tsx', join(REPO_ROOT, 'lambdas/mocks/mock-server.ts')]],
    ['through the CLI', [cliScript(), 'mock-server']],
  ])('--help %s names the command as a user types it: capture-replay mock-server', async (_how, entry) => {
    const child = spawn(process.execPath, [...entry, '--help'], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    const [code] = (await once(child, 'exit')) as [number];
    expect(code).toBe(0);
    expect(stdout.split('\n')[0]).toBe('Usage: capture-replay mock-server [options]');
    expect(stdout).toMatch(/--slots <n> +concurrent generations/);
  });

  it.each([
    [['--slots', '0'], '--slots must be a whole number >= 1'],
    [['--slots', '1.5'], '--slots must be a whole number >= 1'],
    [['--error-rate', '2'], '--error-rate'],
    [['--port', 'abc'], '--port'],
    [['--output-tokens', '0'], '--output-tokens'],
  ])('rejects bad arguments %j with a message naming %s', async (args, name) => {
    const child = spawn(process.execPath, [...(await mockServerLaunch()), ...args], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const [code] = (await once(child, 'exit')) as [number];
    expect(code).not.toBe(0);
    expect(stderr).toContain(name);
  });
});
