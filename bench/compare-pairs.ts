/**
 * The A/B comparison on a million pairs: wall time and peak memory of buildComparisonDocument
 * with the default options (2,000 resamples, paired), on two targets with all six metrics.
 *
 *   npm run bench:compare -- [--pairs 1000000] [--resamples 2000] [--seed 1]
 *   (node --expose-gc --import tsx bench/compare-pairs.ts)
 *
 * The targets are generated in memory: per request a base cost (lognormal, sigma 0.5) drives
 * the latency metrics, each target adds its own noise (lognormal, sigma 0.1), the candidate is
 * 3 % slower; output lengths are integers around 200 tokens; 2 % of the requests fail and
 * 0.5 % are dropped on each side. Goal: at most 30 s and 1 GB of RSS.
 *
 * Peak RSS is the process's (getrusage maxrss): it includes the generated input (~250 MB for
 * a million pairs, keys included) and Node itself, reported separately as the baseline.
 */
import { buildComparisonDocument } from '../lambdas/core/compare/compare';
import { Rng } from '../lambdas/core/stats/rng';
import {
  COMPARED_METRICS,
  DEFAULT_COMPARE_OPTIONS,
  OUTCOME,
  type ComparedMetricTag,
  type TargetColumns,
} from '../lambdas/core/compare/types';
import { flag } from './args';

const pairs = flag('--pairs', 1_000_000);
const resamples = flag('--resamples', DEFAULT_COMPARE_OPTIONS.resamples);
const seed = flag('--seed', 1);
const MB = 1024 * 1024;
const gc = (globalThis as { gc?: () => void }).gc;

function gaussian(rng: Rng): number {
  const u = rng.double() || Number.MIN_VALUE;
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rng.double());
}

function generate(): [TargetColumns, TargetColumns] {
  const rng = new Rng(seed, 12345);
  const base = Float64Array.from({ length: pairs }, () => Math.exp(0.5 * gaussian(rng)));
  const tokens = Float64Array.from({ length: pairs }, () =>
    Math.max(2, Math.round(200 * Math.exp(0.4 * gaussian(rng)))),
  );
  const keys = Array.from({ length: pairs }, (_, i) => `evt-${i.toString(36)}-${(i * 2654435761) >>> 0}#0`);
  const make = (name: string, slower: number): TargetColumns => {
    const metrics = {} as Record<ComparedMetricTag, Float64Array>;
    for (const { tag } of COMPARED_METRICS) metrics[tag] = new Float64Array(pairs);
    const outcome = new Uint8Array(pairs);
    const errorType: (string | null)[] = new Array(pairs).fill(null);
    const dropReason: (string | null)[] = new Array(pairs).fill(null);
    const captured = new Float64Array(pairs);
    for (let i = 0; i < pairs; i++) {
      const u = rng.double();
      const osl = (tokens[i] as number) + (rng.double() < 0.3 ? Math.round(gaussian(rng) * 3) : 0);
      captured[i] = tokens[i] as number;
      if (u < 0.025) {
        outcome[i] = u < 0.005 ? OUTCOME.dropped : OUTCOME.failed;
        if (u < 0.005) dropReason[i] = 'deadline';
        else errorType[i] = 'http_503';
        for (const { tag } of COMPARED_METRICS) metrics[tag][i] = NaN;
        continue;
      }
      const noise = () => slower * Math.exp(0.1 * gaussian(rng));
      const ttft = 40 * (base[i] as number) * noise();
      const itl = 12 * Math.sqrt(base[i] as number) * noise();
      metrics.time_to_first_token[i] = ttft;
      metrics.inter_token_latency[i] = itl;
      metrics.time_to_second_token[i] = itl * Math.exp(0.2 * gaussian(rng));
      metrics.request_latency[i] = ttft + itl * (osl - 1);
      metrics.output_sequence_length[i] = osl;
      metrics.output_token_throughput_per_user[i] = 1000 / itl;
    }
    return { name, keys, outcome, errorType, dropReason, metrics, capturedOutputTokens: captured };
  };
  return [make('baseline', 1), make('candidate', 1.03)];
}

console.log(
  `node ${process.version}, ${process.arch}; ${pairs.toLocaleString('en-US')} pairs, ${resamples} resamples, seed ${seed}`,
);
const g0 = Date.now();
const targets = generate();
gc?.();
const baselineRss = process.memoryUsage().rss;
console.log(
  `generated in ${((Date.now() - g0) / 1000).toFixed(1)} s; RSS before comparing ${(baselineRss / MB).toFixed(0)} MB`,
);

const cpu0 = process.cpuUsage();
const t0 = process.hrtime.bigint();
const doc = buildComparisonDocument(targets, { ...DEFAULT_COMPARE_OPTIONS, resamples, seed }, new Date().toISOString());
const wallSeconds = Number(process.hrtime.bigint() - t0) / 1e9;
const cpu = process.cpuUsage(cpu0);
const peakRssMb = (process.resourceUsage().maxRSS * 1024) / MB;

const summary = {
  pairs,
  resamples,
  mode: doc.mode,
  used: doc.pairs.used,
  excluded: doc.pairs.excluded,
  wallSeconds: Math.round(wallSeconds * 10) / 10,
  cpuSeconds: Math.round(((cpu.user + cpu.system) / 1e6) * 10) / 10,
  peakRssMb: Math.round(peakRssMb),
  rssBeforeComparingMb: Math.round(baselineRss / MB),
  goal: { wallSeconds: 30, peakRssMb: 1024 },
  met: wallSeconds <= 30 && peakRssMb <= 1024,
  verdicts: Object.fromEntries(
    doc.metrics.map((m) => [
      m.tag,
      `${m.verdict} (p50 ${m.relative_pct.p50.estimate?.toFixed(2)} % ` +
        `[${m.relative_pct.p50.ci_low?.toFixed(2)}, ${m.relative_pct.p50.ci_high?.toFixed(2)}])`,
    ]),
  ),
  errors: doc.errors.verdict,
};
console.log(JSON.stringify(summary, null, 2));
if (!summary.met) process.exitCode = 1;
