/**
 * Before the schedule starts: can each target be reached at all? A URL that refuses
 * connections would otherwise be found out only after the whole schedule has run, one failed
 * request at a time.
 *
 * What is checked for each kind of target: preflight. Skipped with --no-preflight.
 */
import { connect as tcpConnect, isIP, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { regionConfig } from './aws-region';
import { DEFAULT_TARGET_NAME, type CliTarget } from './replay/targets';
import { terminalLine } from './terminal-text';

/** A target as the command line gives it. */
export type PreflightTarget = CliTarget;

/** A connection's time to open, the fastest of the preflight's (ms), and whether it was a TLS handshake too. */
export interface MeasuredConnect {
  ms: number;
  tls: boolean;
}

export interface PreflightResult {
  target: string;
  ok: boolean;
  /** What was checked and found, or what is wrong, in a few words. */
  detail: string;
  /** Where connections were opened: how long one took (and whether it was TLS); the run opens connections ahead by it (open-ahead.ts). */
  connect?: MeasuredConnect;
}

export interface PreflightOptions {
  /** How long a TCP connection (and TLS handshake) may take. Default 5 s. */
  connectTimeoutMs?: number;
  /** How long the SDK may take to find credentials. Default 10 s. */
  credentialsTimeoutMs?: number;
  env?: NodeJS.ProcessEnv;
}

const CONNECT_ERRORS: Record<string, string> = {
  ECONNREFUSED: 'connection refused (nothing listens there)',
  ENOTFOUND: 'host not found (DNS)',
  EAI_AGAIN: 'host name lookup failed (DNS, temporary)',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ECONNRESET: 'connection reset',
  ETIMEDOUT: 'connection timed out',
  EACCES: 'connection not permitted',
};

function describeConnectError(error: NodeJS.ErrnoException): string {
  const known = error.code ? CONNECT_ERRORS[error.code] : undefined;
  if (known) return `${known} [${error.code}]`;
  // TLS failures (certificate expired, self-signed, wrong host) carry their own message.
  return error.code ? `${error.message} [${error.code}]` : error.message;
}

/** Opens a TCP (and TLS for https) connection to the URL's origin and closes it. */
export async function probeTcp(
  url: URL,
  timeoutMs: number,
): Promise<{ ok: true; ms: number } | { ok: false; error: string }> {
  const tls = url.protocol === 'https:';
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const port = url.port ? Number(url.port) : tls ? 443 : 80;
  const started = process.hrtime.bigint();
  return new Promise((resolve) => {
    let settled = false;
    function finish(result: { ok: true; ms: number } | { ok: false; error: string }): void {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(result);
    }
    const connected = () => finish({ ok: true, ms: Number(process.hrtime.bigint() - started) / 1e6 });
    const socket: Socket = tls
      ? tlsConnect({ host, port, ...(isIP(host) ? {} : { servername: host }) }, connected)
      : tcpConnect({ host, port }, connected);
    socket.once('error', (error: NodeJS.ErrnoException) => finish({ ok: false, error: describeConnectError(error) }));
    const timer = setTimeout(
      () => finish({ ok: false, error: `no connection within ${timeoutMs / 1000} s` }),
      timeoutMs,
    );
  });
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms / 1000} s`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * A connect's time as the run's own will take it: the fastest of CONNECT_PROBES connections in
 * turn (the first also pays the name lookup and code run for the first time).
 */
const CONNECT_PROBES = 3;
async function fastestConnect(url: URL, timeoutMs: number, first: number): Promise<number> {
  let fastest = first;
  for (let i = 1; i < CONNECT_PROBES; i++) {
    const probe = await probeTcp(url, timeoutMs);
    if (!probe.ok) break;
    fastest = Math.min(fastest, probe.ms);
  }
  return fastest;
}

async function checkHttp(
  target: Extract<PreflightTarget, { kind: 'http' }>,
  options: Required<Pick<PreflightOptions, 'connectTimeoutMs'>>,
): Promise<PreflightResult> {
  const where = `${target.url.hostname}:${target.url.port || (target.url.protocol === 'https:' ? 443 : 80)}`;
  const probe = await probeTcp(target.url, options.connectTimeoutMs);
  if (!probe.ok) return { target: target.name, ok: false, detail: `${target.url.origin}: ${probe.error} at ${where}` };
  const connectMs = await fastestConnect(target.url, options.connectTimeoutMs, probe.ms);
  const tls = target.url.protocol === 'https:';
  return {
    target: target.name,
    ok: true,
    detail: `${target.url.origin} accepts connections (${tls ? 'TCP + TLS' : 'TCP'} in ${connectMs.toFixed(1)} ms)`,
    connect: { ms: connectMs, tls },
  };
}

async function checkSageMaker(
  target: Extract<PreflightTarget, { kind: 'sagemaker' }>,
  options: Required<PreflightOptions>,
): Promise<PreflightResult> {
  const { SageMakerRuntimeClient } = await import('@aws-sdk/client-sagemaker-runtime');
  const client = new SageMakerRuntimeClient({ ...regionConfig(target.sagemaker.region), maxAttempts: 1 });
  const label = target.spec;
  try {
    let region: string;
    try {
      region = await client.config.region();
    } catch {
      return {
        target: target.name,
        ok: false,
        detail: `${label}: no AWS region (set AWS_REGION or AWS_DEFAULT_REGION, a profile's region, or ?region= in the target)`,
      };
    }
    try {
      await withTimeout(client.config.credentials(), options.credentialsTimeoutMs, 'looking for credentials');
    } catch (error) {
      return {
        target: target.name,
        ok: false,
        detail:
          `${label}: no AWS credentials found (${(error as Error).message}); the SDK's default chain looks at ` +
          `the environment, the profile, SSO and the instance role`,
      };
    }
    const override = options.env.AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME ?? options.env.AWS_ENDPOINT_URL;
    let endpoint = '';
    if (override) {
      let url: URL;
      try {
        url = new URL(override);
      } catch {
        return {
          target: target.name,
          ok: false,
          detail: `${label}: AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME is not a URL: ${override}`,
        };
      }
      const probe = await probeTcp(url, options.connectTimeoutMs);
      if (!probe.ok)
        return {
          target: target.name,
          ok: false,
          detail: `${label}: the runtime at ${url.origin} (AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME): ${probe.error}`,
        };
      endpoint = `, runtime ${url.origin} accepts connections`;
      const connect = {
        ms: await fastestConnect(url, options.connectTimeoutMs, probe.ms),
        tls: url.protocol === 'https:',
      };
      return {
        target: target.name,
        ok: true,
        detail: `${label}: region ${region}, credentials found${endpoint} (the endpoint itself is not called)`,
        connect,
      };
    }
    return {
      target: target.name,
      ok: true,
      detail: `${label}: region ${region}, credentials found${endpoint} (the endpoint itself is not called)`,
    };
  } finally {
    client.destroy();
  }
}

/**
 * Every target checked at once; one result each, in the targets' order.
 *
 * - HTTP(S) target: a TCP connection to the URL's host and port (and the TLS handshake, with
 *   the same certificate checks the requests get, for https), then closed; two more in turn
 *   once it succeeds, the fastest one's time kept (`connect`: how many connections the run
 *   opens ahead, and when, open-ahead.ts). No HTTP request is sent: the server sees
 *   connections, never a replayed request.
 * - SageMaker target: the AWS SDK resolves the region and the credentials (the default
 *   chain: environment, profile, SSO, instance role) exactly as the requests will. The
 *   endpoint itself is not called (that would take sagemaker:DescribeEndpoint, which the
 *   replay does not otherwise need); when AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME (or
 *   AWS_ENDPOINT_URL) points it at another runtime, that runtime gets the TCP check too.
 *
 * Skipped with --no-preflight.
 */
export async function preflight(
  targets: readonly PreflightTarget[],
  options: PreflightOptions = {},
): Promise<PreflightResult[]> {
  const settings: Required<PreflightOptions> = {
    connectTimeoutMs: options.connectTimeoutMs ?? 5_000,
    credentialsTimeoutMs: options.credentialsTimeoutMs ?? 10_000,
    env: options.env ?? process.env,
  };
  return Promise.all(
    targets.map(async (target) => {
      try {
        return target.kind === 'http' ? await checkHttp(target, settings) : await checkSageMaker(target, settings);
      } catch (error) {
        return { target: target.name, ok: false, detail: (error as Error).message };
      }
    }),
  );
}

/** The lines the command prints: each target's result (stderr), and the failure message. */
export function describePreflight(results: readonly PreflightResult[]): { lines: string; failure: string | null } {
  // `--url` alone names its target DEFAULT_TARGET_NAME: "target target" says nothing.
  const unnamed = results.length === 1 && results[0]?.target === DEFAULT_TARGET_NAME;
  const label = (r: PreflightResult) => (unnamed ? 'the target' : `target ${r.target}`);
  // A TLS error or the SDK's may quote what the server sent.
  const lines = results
    .map(
      (r) => `Preflight: ${unnamed ? '' : `${label(r)}: `}${terminalLine(r.ok ? r.detail : `FAILED: ${r.detail}`)}\n`,
    )
    .join('');
  const failed = results.filter((r) => !r.ok);
  const failure =
    failed.length === 0
      ? null
      : `${failed.length === 1 ? `${label(failed[0] as PreflightResult)} is` : `targets ${failed.map((r) => r.target).join(', ')} are`}` +
        ` not reachable, nothing was sent (check the URL, or skip this check with --no-preflight)`;
  return { lines, failure };
}
