/**
 * Lambda functions in one account: concurrency, scaling rate, execution environments, cold
 * starts and the bill.
 *
 * The rules, each with its source (DOCUMENTED, ASSUMED or MEASURED):
 * docs/simulator-model.md#lambda-functions.
 */
import type { Lognormal, Rng } from '../random';

export class Account {
  /** Concurrency in use by functions without reserved concurrency. */
  unreservedInUse = 0;
  reservedTotal = 0;

  constructor(readonly concurrency: number) {}

  get unreservedLimit(): number {
    return this.concurrency - this.reservedTotal;
  }
}

export interface FunctionModelOptions {
  name: string;
  memoryMb: number;
  reservedConcurrency: number | null;
  init: Lognormal;
  scalePer10s: number;
  invokeOverheadMs: number;
  coldPlatformMs: number;
  envReclaimMinutes: number;
}

export type StartResult =
  | { ok: true; handlerStartsAt: number; initMs: number }
  | { ok: false; reason: 'concurrency' | 'scaling-rate' };

export interface LambdaBill {
  invocations: number;
  throttles: number;
  coldStarts: number;
  /** Handler duration, billed ms. */
  billedMs: number;
  /** INIT, billed ms. */
  initMs: number;
  gbSeconds: number;
  initGbSeconds: number;
  peakConcurrency: number;
}

export class FunctionModel {
  private inUse = 0;
  /** Idle environments: when each was last used (reuse the most recent first). */
  private readonly idle: number[] = [];
  private tokens: number;
  private tokensAt = 0;
  readonly bill: LambdaBill = {
    invocations: 0,
    throttles: 0,
    coldStarts: 0,
    billedMs: 0,
    initMs: 0,
    gbSeconds: 0,
    initGbSeconds: 0,
    peakConcurrency: 0,
  };

  constructor(
    readonly o: FunctionModelOptions,
    private readonly account: Account,
    private readonly rng: Rng,
    /** Environments still warm from an earlier run, last used at time 0. */
    warmEnvironments = 0,
  ) {
    this.tokens = o.scalePer10s;
    if (o.reservedConcurrency !== null) account.reservedTotal += o.reservedConcurrency;
    for (let i = 0; i < warmEnvironments; i++) this.idle.push(0);
  }

  get concurrency(): number {
    return this.inUse;
  }

  private get limit(): number {
    if (this.o.reservedConcurrency !== null) return this.o.reservedConcurrency;
    return this.account.unreservedLimit - this.account.unreservedInUse + this.inUse;
  }

  /** Tries to start an invocation at `at`: a warm environment if one is idle, else a new one within the scaling rate. */
  start(at: number): StartResult {
    this.refill(at);
    if (this.inUse >= this.limit) return this.throttle('concurrency');
    const reclaimBefore = at - this.o.envReclaimMinutes * 60_000;
    while (this.idle.length > 0 && (this.idle[0] as number) < reclaimBefore) this.idle.shift();
    let initMs = 0;
    let coldMs = 0;
    if (this.idle.length > 0) this.idle.pop();
    else {
      if (this.tokens < 1) return this.throttle('scaling-rate');
      this.tokens -= 1;
      initMs = Math.ceil(this.rng.lognormal(this.o.init));
      coldMs = this.o.coldPlatformMs + initMs;
      this.bill.coldStarts++;
      this.bill.initMs += initMs;
      this.bill.initGbSeconds += (initMs / 1000) * (this.o.memoryMb / 1024);
    }
    this.inUse++;
    if (this.o.reservedConcurrency === null) this.account.unreservedInUse++;
    this.bill.invocations++;
    this.bill.peakConcurrency = Math.max(this.bill.peakConcurrency, this.inUse);
    return { ok: true, handlerStartsAt: at + this.o.invokeOverheadMs + coldMs, initMs };
  }

  /** The invocation whose handler ran `durationMs` ended at `at`: its environment goes idle. */
  finish(at: number, durationMs: number): void {
    this.inUse--;
    if (this.o.reservedConcurrency === null) this.account.unreservedInUse--;
    this.idle.push(at);
    const billed = Math.max(1, Math.ceil(durationMs));
    this.bill.billedMs += billed;
    this.bill.gbSeconds += (billed / 1000) * (this.o.memoryMb / 1024);
  }

  private refill(at: number): void {
    const rate = this.o.scalePer10s / 10_000;
    this.tokens = Math.min(this.o.scalePer10s, this.tokens + (at - this.tokensAt) * rate);
    this.tokensAt = at;
  }

  private throttle(reason: 'concurrency' | 'scaling-rate'): StartResult {
    this.bill.throttles++;
    return { ok: false, reason };
  }
}
