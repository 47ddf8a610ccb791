/**
 * One fire worker thread (started by fire-workers.ts through fire-worker-entry.mjs): runs the
 * fire loop over its share of a target's plan with its own clock and its own target client,
 * and streams the outcomes back. Several jobs (one per target fired in parallel) run at once.
 *
 * Protocol, main -> worker: `run` (a job), `stop` (no new request is sent: the rest of every
 * job, and of any job still to come, is dropped as `aborted`), `cancel` (requests in flight
 * end cancelled). Worker -> main: `ready` once loaded, `outcomes` (batched), `done` or
 * `failed` per job. A request is never reported twice; one never reported is counted `lost`
 * by the main thread.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { WaitMode } from '../adapters/system-clock';
import { cliClock } from './cli-clock';
import { runFireLoop, type LatePolicy } from '../core/fire/fire-loop';
import type { FireOutcome, ScheduledRequest } from '../core/types';
import { beforeScheduleZero, type OpenAheadPlan } from './open-ahead';
import { collectBeforeZero, rehearse, type RehearsalPasses, type RehearsalResult } from './rehearsal';
import { createTargetClient, type TargetClientSpec } from './target-clients';

export interface WorkerData {
  wait: WaitMode;
  /** Rehearsed before `ready` (rehearsal.ts): requests per target, and each target's spec and sample of its plan. */
  rehearsal?: { requests: number; specs: TargetClientSpec[]; samples: ScheduledRequest[][]; passes: RehearsalPasses };
}

export interface RunJob {
  type: 'run';
  job: number;
  spec: TargetClientSpec;
  requests: ScheduledRequest[];
  runId: string;
  startNs: bigint;
  workerId: string;
  maxInFlight?: number;
  latePolicy?: LatePolicy;
  expireAfterMs?: number;
  /** Connections this worker opens to the target during the lead, before its full collection (open-ahead.ts). */
  openAhead?: OpenAheadPlan;
}

export type ToWorker = RunJob | { type: 'stop' } | { type: 'cancel' };

/** An outcome without its request (the main thread has it): `index` is the request's plan index. */
export type WireOutcome = Omit<FireOutcome, 'request'> & { index: number };

export type FromWorker =
  | { type: 'ready'; rehearsal: RehearsalResult | null }
  | { type: 'outcomes'; job: number; outcomes: WireOutcome[] }
  | { type: 'done'; job: number }
  | { type: 'failed'; job: number; message: string };

const port = parentPort;
if (!port) throw new Error('fire-worker.ts runs in a worker thread (see fire-workers.ts)');
const { wait, rehearsal } = workerData as WorkerData;
const clock = cliClock(wait);
const stop = new AbortController();
const cancel = new AbortController();
const post = (message: FromWorker) => port.postMessage(message);

async function run(job: RunJob): Promise<void> {
  // Outcomes go back in batches: one message per event-loop turn, not one per request.
  let batch: WireOutcome[] = [];
  let flushing = false;
  const flush = () => {
    flushing = false;
    if (batch.length === 0) return;
    post({ type: 'outcomes', job: job.job, outcomes: batch });
    batch = [];
  };
  const client = createTargetClient(job.spec, clock);
  let cancelOpenAhead: () => void = () => undefined;
  try {
    await runFireLoop(job.requests, {
      runId: job.runId,
      target: client,
      clock,
      startNs: job.startNs,
      workerId: job.workerId,
      ...(job.maxInFlight !== undefined ? { maxInFlight: job.maxInFlight } : {}),
      ...(job.latePolicy !== undefined ? { latePolicy: job.latePolicy } : {}),
      ...(job.expireAfterMs !== undefined ? { expireAfterMs: job.expireAfterMs } : {}),
      signal: stop.signal,
      cancelSignal: cancel.signal,
      // Connections opened ahead, then the collection (open-ahead.ts, rehearsal.ts).
      beforeStart: () => {
        cancelOpenAhead = beforeScheduleZero(client, job.openAhead ?? null, job.startNs, clock, collectBeforeZero);
      },
      onOutcome: ({ request, ...rest }) => {
        batch.push({ ...rest, index: request.index });
        if (!flushing) {
          flushing = true;
          setImmediate(flush);
        }
      },
    });
    flush();
    post({ type: 'done', job: job.job });
  } catch (error) {
    flush();
    post({ type: 'failed', job: job.job, message: error instanceof Error ? error.message : String(error) });
  } finally {
    cancelOpenAhead();
    await client.close().catch(() => undefined);
  }
}

port.on('message', (message: ToWorker) => {
  if (message.type === 'stop') stop.abort(new Error('stopped'));
  else if (message.type === 'cancel') cancel.abort(new Error('cancelled'));
  else void run(message);
});
// This thread's own code is compiled before it says ready (each thread has its own V8 isolate).
const rehearsed = rehearsal
  ? await rehearse(rehearsal.specs, rehearsal.samples, rehearsal.requests, clock, rehearsal.passes)
  : null;
post({ type: 'ready', rehearsal: rehearsed });
