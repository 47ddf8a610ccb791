/**
 * A process group a test started in a session of its own is killed when the test's process
 * is stopped by a signal, and the signal still ends that process (test/support/kill-on-stop.ts).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { isAlive as alive } from '../../support/run-shared';
import { until } from '../../support/until';

const MODULE = fileURLToPath(new URL('../../support/kill-on-stop.ts', import.meta.url));

it.each(['SIGTERM', 'SIGINT'] as const)(
  '%s to the process that started a detached group kills the group and still ends the process',
  async (signal) => {
    // The stand-in for a test worker: starts `sleep` in a session of its own (as moto_server is
    // started), registers it, says its pid, and waits.
    const script = `
    import { spawn } from 'node:child_process';
    import { killGroupOnStop } from ${JSON.stringify(MODULE)};
    const child = spawn('sleep', ['60'], { detached: true, stdio: 'ignore' });
    killGroupOnStop(child.pid);
    process.stdout.write(String(child.pid) + '\\n');
    setInterval(() => {}, 1000);
  `;
    const worker = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    worker.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
    await until(() => out.includes('\n'), 'the detached pid', 20_000);
    const pid = Number(out.trim());
    expect(alive(pid)).toBe(true);
    worker.kill(signal);
    const [code, endedBy] = (await once(worker, 'exit')) as [number | null, NodeJS.Signals | null];
    expect({ code, endedBy }).toEqual({ code: null, endedBy: signal });
    await until(() => !alive(pid), 'the detached group to end', 5_000);
  },
  30_000,
);
