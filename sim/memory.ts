/**
 * What a run holds in memory, estimated before it starts, and the refusal of a run that would
 * not fit. The engine keeps every request's due time (in its shard) and every sent request's
 * lateness at the server, for the report's exact percentiles, so its memory grows with the
 * requests; a run too large for the machine is refused with the estimate and the limit, rather
 * than streamed: a streamed run would need approximate percentiles (a sketch) and a plan made
 * lazily, and a run that large takes most of an hour of CPU anyway (about 1 s per million
 * requests).
 *
 * The costs per unit are measured (peak RSS, `/usr/bin/time -f %M`, this machine, Node 22), with
 * a margin: 10,000/s for 480 s to 1 target 249 MB, to 2 targets 379 MB, 960 s to 2 targets
 * 650 MB (3 B a request and 27 B a request and target over a 105 MB start); 6,000 to 24,000
 * one-request shards to 1 target 123-141 MB (1 KB a shard).
 */
import { freemem } from 'node:os';
import { getHeapStatistics } from 'node:v8';
import { lanesFor } from '../lambdas/core/pipeline/shards';
import { SettingsError } from './setting-ranges';
import type { SimSettings } from './settings';

/** Node, tsx and the modules before the run's own data. */
const START_BYTES = 110e6;
/**
 * The run's data, a request (its due time, twice while the shards are cut) and a request to a target (its lateness,
 * sorted; the fire loop's draws).
 */
const PER_REQUEST = 8;
const PER_REQUEST_TARGET = 32;
/**
 * A shard (its object, offsets array, slot, leads) and a shard to a target (its messages, agenda entries, claim
 * state): on the JavaScript heap.
 */
const PER_SHARD = 2048;
const PER_SHARD_TARGET = 1024;
/** The capture's counts, a second. */
const PER_SECOND = 4;
/** The heap before the run's shards. */
const HEAP_START_BYTES = 60e6;

export interface MemoryEstimate {
  /** Requests per target, and shards (each holding requests for every target). */
  requests: number;
  shards: number;
  /** Bytes the process would hold at its peak, and of them on the JavaScript heap. */
  bytes: number;
  heapBytes: number;
}

export interface MemoryLimit {
  /** What the process may hold: the machine's free memory now. */
  bytes: number;
  /** V8's heap limit (--max-old-space-size). */
  heapBytes: number;
}

/**
 * The run's requests and shards, counted as the workload will cut them (the even arrivals' counts; Poisson's by their
 * mean and a margin).
 */
export function memoryEstimate(s: SimSettings): MemoryEstimate {
  const w = s.workload;
  const poisson = w.arrivals === 'poisson';
  const requests = Math.ceil(w.ratePerTarget * w.seconds * (poisson ? 1.01 : 1)) + (poisson ? 10 : 0);
  const slotMs = Math.max(1, Math.round(s.stack.slotS * 1000));
  const slots = Math.ceil((w.seconds * 1000) / slotMs);
  const perSlot = Math.ceil((w.ratePerTarget * slotMs) / 1000);
  const busiest = Math.ceil(w.ratePerTarget + (poisson ? 4 * Math.sqrt(w.ratePerTarget) : 0));
  const lanes = Math.min(perSlot, lanesFor(perSlot, busiest, { slotMs, maxShardRequests: s.stack.maxShardRequests }));
  const shards = Math.min(requests, slots * lanes);
  const t = w.targets;
  const heapBytes = HEAP_START_BYTES + shards * (PER_SHARD + PER_SHARD_TARGET * t);
  const bytes =
    START_BYTES +
    PER_SECOND * Math.ceil(w.seconds) +
    requests * (PER_REQUEST + PER_REQUEST_TARGET * t) +
    heapBytes -
    HEAP_START_BYTES;
  return { requests, shards, bytes, heapBytes };
}

export function memoryLimit(): MemoryLimit {
  const free = typeof process.availableMemory === 'function' ? process.availableMemory() : freemem();
  return { bytes: free, heapBytes: getHeapStatistics().heap_size_limit };
}

const gb = (n: number) => `${(n / 1e9).toFixed(n < 1e10 ? 2 : 1)} GB`;

/** Refuses, in one line, a run whose estimate passes the limit: the estimate, the limit and what to change. */
export function checkMemory(s: SimSettings, limit: MemoryLimit = memoryLimit()): MemoryEstimate {
  const e = memoryEstimate(s);
  const size =
    `${e.requests.toLocaleString('en-US')} requests x ${s.workload.targets} ` +
    `target${s.workload.targets > 1 ? 's' : ''} in ${e.shards.toLocaleString('en-US')} shards`;
  const what =
    'shorten --seconds, lower --rate, or cut fewer shards (a run is held whole in memory: every request is kept for the exact percentiles)';
  if (e.bytes > limit.bytes)
    throw new SettingsError(
      `this run would hold about ${gb(e.bytes)} (${size}), more than the ${gb(limit.bytes)} free on this machine: ${what}`,
    );
  if (e.heapBytes > limit.heapBytes)
    throw new SettingsError(
      `this run's shards would take about ${gb(e.heapBytes)} of the JavaScript heap (${size}), more than its ` +
        `${gb(limit.heapBytes)} limit: ${what}, or raise the limit (NODE_OPTIONS=--max-old-space-size=<MB>)`,
    );
  return e;
}
