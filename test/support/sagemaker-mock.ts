/**
 * The bundled mock SageMaker runtime as its own process (as the real service is: the SDK's
 * requests cross a socket, and the mock's timers do not share the test's event loop), and
 * its request log.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { REPO_ROOT, type MockProcess } from './processes';

/** Starts `lambdas/local/mock-sagemaker.ts --port 0 ...args` and waits for its `{"url": ...}` line. */
export async function startMockSageMakerProcess(args: string[], entry: string[] = [join(REPO_ROOT, 'lambdas/local/mock-sagemaker.ts')]): Promise<MockProcess> {
  const child = spawn(process.execPath, ['--no-warnings', '--import', 'tsx', ...entry, '--port', '0', ...args], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('mock SageMaker did not report its URL within 20 s')), 20_000);
    lines.once('line', (line) => {
      clearTimeout(timer);
      try {
        resolve((JSON.parse(line) as { url: string }).url);
      } catch (error) {
        reject(new Error(`unexpected first line from mock SageMaker: ${line} (${String(error)})`));
      }
    });
    child.once('exit', (code) => reject(new Error(`mock SageMaker exited early with code ${code}`)));
  });
  return {
    url,
    child,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** One line of the mock's `--log`. */
export interface LoggedSageMakerRequest {
  arrival_ns: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body_bytes: number;
  body_sha256: string;
  body_base64: string;
}

export async function readMockSageMakerLog(file: string): Promise<LoggedSageMakerRequest[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter((line) => line.endsWith('}'))
    .map((line) => JSON.parse(line) as LoggedSageMakerRequest);
}

/**
 * The logged requests that match, once at least `min` of them are there (the log is written
 * asynchronously), then after a settle time with no change, so a late duplicate would show.
 */
export async function waitForLoggedRequests(file: string, match: (r: LoggedSageMakerRequest) => boolean, min: number, settleMs = 100, timeoutMs = 5000): Promise<LoggedSageMakerRequest[]> {
  const deadline = Date.now() + timeoutMs;
  let found = (await readMockSageMakerLog(file)).filter(match);
  while (found.length < min && Date.now() < deadline) {
    await sleep(20);
    found = (await readMockSageMakerLog(file)).filter(match);
  }
  await sleep(settleMs);
  return (await readMockSageMakerLog(file)).filter(match);
}
