/**
 * The bundled mock SageMaker runtime as its own process (as the real service is: the SDK's
 * requests cross a socket, and the mock's timers do not share the test's event loop), and
 * its request log.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { REPO_ROOT, startUrlProcess, type MockProcess } from './processes';

/** Starts `lambdas/mocks/mock-sagemaker.ts --port 0 ...args` and waits for its `{"url": ...}` line. */
export function startMockSageMakerProcess(
  args: string[],
  entry: string[] = [join(REPO_ROOT, 'lambdas/mocks/mock-sagemaker.ts')],
): Promise<MockProcess> {
  return startUrlProcess(entry, args, 'mock SageMaker');
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
export async function waitForLoggedRequests(
  file: string,
  match: (r: LoggedSageMakerRequest) => boolean,
  min: number,
  settleMs = 100,
  timeoutMs = 5000,
): Promise<LoggedSageMakerRequest[]> {
  const deadline = Date.now() + timeoutMs;
  let found = (await readMockSageMakerLog(file)).filter(match);
  while (found.length < min && Date.now() < deadline) {
    await sleep(20);
    found = (await readMockSageMakerLog(file)).filter(match);
  }
  await sleep(settleMs);
  return (await readMockSageMakerLog(file)).filter(match);
}
