/**
 * The simulator against the real handlers on moto: the billed calls bench/pipeline-cost.ts
 * counted for a run (its JSON output) next to the simulator's for the same traffic and stack.
 *
 *   node --import tsx bench/pipeline-cost.ts --rate 200 --seconds 60 --targets 2 > /tmp/moto.json
 *   node --import tsx bench/sim-vs-moto.ts /tmp/moto.json
 *
 * The two simulations and what they set: beside the arguments below.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import {
  CreateQueueCommand,
  DeleteMessageCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { awsClientConfig, startMoto } from '../test/support/moto';
import { simulate, type SimRun } from '../sim/engine';
import { applyOverrides } from '../sim/overrides';
import { settingsFor } from '../sim/settings';
import { deployable } from '../sim/stack-check';

interface MotoRun {
  workload: {
    ratePerSecond: number;
    seconds: number;
    targets?: number;
    leadMs: number;
    requestTimeoutMs: number;
    graceMs: number;
  };
  deployed: Record<'ingest' | 'fire' | 'collect', { localConcurrency: number; batchingWindowS?: number }>;
  measured: {
    sqs: { billedRequests: number; handlerBilled: number; pollerBilled: number };
    s3: { putClass: number; getClass: number; byFunction: Record<string, { put: number; get: number }> };
    lambda: { functions: { name: string; invocations: number; gbSeconds: number }[] };
  };
}

/**
 * Two simulations: "as moto", with what the local harness does differently from AWS set to
 * match it (no delivery jitter: moto makes a delayed message visible on the dot; the event
 * source starts at its maximum concurrency, capped at the harness's `localConcurrency`: no
 * ramp, and warm; a receive's round trip moto's, measured here before the simulation: the
 * median of 200 ReceiveMessage calls returning a message, as the harness makes them, or
 * `--moto-receive-ms <ms>`); and "as AWS", the simulator's defaults (a ramp after an hour
 * idle, the assumed round trip).
 * Both run the stack's own batching windows: the harness takes them from the same template.
 * The goal is agreement within 5 % on every count "as moto".
 */
const args = parseArgs({ allowPositionals: true, options: { 'moto-receive-ms': { type: 'string' } } });
const file = args.positionals[0];
if (!file) throw new Error('usage: sim-vs-moto.ts <pipeline-cost JSON output> [--moto-receive-ms <ms>]');
const moto = JSON.parse(readFileSync(file, 'utf8')) as MotoRun;
const w = moto.workload;

/** The median round trip of a ReceiveMessage that returns a message, on a moto_server started here. */
async function motoReceiveRoundTripMs(samples = 200): Promise<number> {
  const server = await startMoto();
  try {
    const sqs = new SQSClient(awsClientConfig(server.endpoint));
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: 'receive-round-trip' }));
    const times: number[] = [];
    for (let i = 0; i < samples; i++) {
      await sqs.send(
        new SendMessageCommand({
          QueueUrl,
          MessageBody: '{"v":1,"kind":"collect","runId":"r","target":"A","notBeforeNs":"0"}',
        }),
      );
      const t0 = performance.now();
      const out = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl,
          MaxNumberOfMessages: 10,
          WaitTimeSeconds: 1,
          MessageSystemAttributeNames: ['All'],
          MessageAttributeNames: ['All'],
        }),
      );
      times.push(performance.now() - t0);
      for (const m of out.Messages ?? [])
        await sqs.send(new DeleteMessageCommand({ QueueUrl, ReceiptHandle: m.ReceiptHandle }));
    }
    times.sort((a, b) => a - b);
    return Math.round((times[Math.floor(times.length / 2)] as number) * 10) / 10;
  } finally {
    await server.stop();
  }
}

const given = args.values['moto-receive-ms'];
const motoReceiveMs = given !== undefined ? Number(given) : await motoReceiveRoundTripMs();
if (!Number.isFinite(motoReceiveMs) || motoReceiveMs < 0)
  throw new Error(`--moto-receive-ms must be a number >= 0 (got ${given})`);

function simulated(asMoto: boolean): SimRun {
  const { settings, problems } = settingsFor({
    ratePerTarget: w.ratePerSecond,
    targets: w.targets ?? 1,
    seconds: w.seconds,
    latencyP50S: 0.01,
    latencyP99S: 0.01,
    leadSeconds: Math.round(w.leadMs / 1000),
    requestTimeoutSeconds: w.requestTimeoutMs / 1000,
    graceSeconds: w.graceMs / 1000,
    idleBeforeMinutes: asMoto ? 0 : 60,
  });
  const overrides = asMoto
    ? [
        'aws.sqs.delayJitterMaxMs=0',
        `aws.sqs.receiveRoundTripMs=${motoReceiveMs}`,
        `stack.fire.maxConcurrency=${Math.min(settings.stack.fire.maxConcurrency ?? 1000, moto.deployed.fire.localConcurrency)}`,
      ]
    : [];
  const d = deployable(applyOverrides(settings, overrides), problems);
  if (d.problems.length > 0) throw new Error(`the stack is not deployable: ${d.problems.join('; ')}`);
  const windowS = (f: 'ingest' | 'fire' | 'collect') => moto.deployed[f].batchingWindowS ?? 0;
  for (const f of ['ingest', 'fire', 'collect'] as const) {
    if (windowS(f) !== d.settings.stack[f].batchingWindowS)
      throw new Error(
        `${f}: moto ran a batching window of ${windowS(f)} s, the simulated stack has ${d.settings.stack[f].batchingWindowS} s`,
      );
  }
  return simulate(d.settings);
}

function counts(run: SimRun) {
  const c = run.consumers;
  const s3 = {
    ingest: { put: run.ingest.counters.s3Put, get: run.ingest.counters.s3Get },
    fire: { put: run.fire.counters.s3Put, get: run.fire.counters.s3Get },
    collect: { put: run.collect.counters.s3Put + run.collect.counters.s3List, get: run.collect.counters.s3Get },
  };
  return {
    'SQS billed requests': c.ingest.queue.bill.requests + c.fire.queue.bill.requests + c.collect.queue.bill.requests,
    'S3 PUT-class': s3.ingest.put + s3.fire.put + s3.collect.put,
    'S3 GET-class': s3.ingest.get + s3.fire.get + s3.collect.get,
    'Lambda invocations': c.ingest.fn.bill.invocations + c.fire.fn.bill.invocations + c.collect.fn.bill.invocations,
    '  fire invocations': c.fire.fn.bill.invocations,
    '  collect invocations': c.collect.fn.bill.invocations,
    '  S3 PUT-class fire / ingest / collect': `${s3.fire.put} / ${s3.ingest.put} / ${s3.collect.put}`,
    '  S3 GET-class fire / ingest / collect': `${s3.fire.get} / ${s3.ingest.get} / ${s3.collect.get}`,
    'Lambda GB-s': Math.round(c.ingest.fn.bill.gbSeconds + c.fire.fn.bill.gbSeconds + c.collect.fn.bill.gbSeconds),
  };
}

const fn = (name: string) => moto.measured.lambda.functions.find((f) => f.name === name);
const s3 = moto.measured.s3.byFunction;
const measured: Record<string, number | string> = {
  'SQS billed requests': moto.measured.sqs.billedRequests,
  'S3 PUT-class': moto.measured.s3.putClass,
  'S3 GET-class': moto.measured.s3.getClass,
  'Lambda invocations': moto.measured.lambda.functions.reduce((n, f) => n + f.invocations, 0),
  '  fire invocations': fn('fire')?.invocations ?? 0,
  '  collect invocations': fn('collect')?.invocations ?? 0,
  '  S3 PUT-class fire / ingest / collect': `${s3.fire?.put} / ${s3.ingest?.put} / ${s3.collect?.put}`,
  '  S3 GET-class fire / ingest / collect': `${s3.fire?.get} / ${s3.ingest?.get} / ${s3.collect?.get}`,
  'Lambda GB-s': Math.round(moto.measured.lambda.functions.reduce((n, f) => n + f.gbSeconds, 0)),
};
const asMoto = counts(simulated(true));
const asAws = counts(simulated(false));
const rows = Object.keys(measured).map((k) => {
  const m = measured[k] as number | string;
  const s = asMoto[k as keyof typeof asMoto];
  const diff = typeof m === 'number' && typeof s === 'number' && m > 0 ? `${(((s - m) / m) * 100).toFixed(1)} %` : '';
  return { count: k.trim(), moto: m, simAsMoto: s, diff, simAsAws: asAws[k as keyof typeof asAws] };
});
console.log(
  JSON.stringify({ benchmark: 'sim-vs-moto', workload: w, motoReceiveRoundTripMs: motoReceiveMs, rows }, null, 2),
);
console.error(
  `moto's receive round trip: ${motoReceiveMs} ms (the "as moto" simulation's); AWS's assumed: ` +
    `${settingsFor({ ratePerTarget: 1, targets: 1, seconds: 1, latencyP50S: 1, latencyP99S: 1 }).settings.aws.sqs.receiveRoundTripMs}` +
    ` ms`,
);
console.error(
  [
    '| count | moto | sim, as moto | difference | sim, as AWS |',
    '| --- | ---: | ---: | ---: | ---: |',
    ...rows.map((r) => `| ${r.count} | ${r.moto} | ${r.simAsMoto} | ${r.diff} | ${r.simAsAws} |`),
  ].join('\n'),
);
