/**
 * What profile_export_aiperf.json says about the run's configuration, built in one place for
 * the CLI and the pipeline. `input_config` holds only AIPerf's own BenchmarkConfig fields (a
 * pydantic model that forbids unknown keys), with our settings mapped onto them; everything
 * else of ours goes beside it, in `capture_replay`; URLs lose their credentials. The mapping
 * and its reasons: docs/outputs.md#what-input_config-holds.
 */
import { redactedUrl, stripUrlCredentials } from '../redact';

export interface ReplayInputSettings {
  /** Target name (`default`, `A`, ...). */
  target?: string | null;
  /** Target base URL as configured (may carry userinfo or a token: redacted here). */
  url?: string | null;
  /** Endpoint path requests go to, e.g. `/v1/chat/completions`. */
  path?: string | null;
  /** The --model override; null when each request keeps its captured model. */
  model?: string | null;
  /** true: every request was made to stream (--streaming); null: as captured. */
  streaming?: boolean | null;
  timeoutMs?: number | null;
  /** Where the captures came from (local path or S3 object). */
  capture?: string | null;
  /** At most this many captured records were replayed (--limit). */
  limit?: number | null;
  /** Cap on requests in flight (--max-in-flight). */
  maxInFlight?: number | null;
  /** Our other settings, written as given under `capture_replay` (URLs inside are stripped). */
  extra?: Record<string, unknown>;
}

/** The two blocks of profile_export_aiperf.json that describe the configuration. */
export interface ExportInputConfig {
  /** AIPerf's BenchmarkConfig shape; null when it cannot be complete (see above). */
  aiperf: Record<string, unknown> | null;
  /** Ours: written as the top-level `capture_replay` key. */
  captureReplay: Record<string, unknown>;
}

/** `https://user:pw@host:8443/v1?token=abc` -> `https://host:8443/v1?token=***`; null when it is not a URL (redact.ts). */
export const withoutUserinfo = redactedUrl;

/**
 * A copy of `value` in which every URL has lost its userinfo (a string with userinfo that does
 * not parse as a URL is left out) and its secret query values.
 */
function scrubUrls(value: unknown): unknown {
  if (typeof value === 'string') {
    if (/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*@/i.test(value)) return withoutUserinfo(value);
    return /^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? stripUrlCredentials(value) : value;
  }
  if (Array.isArray(value)) return value.map(scrubUrls);
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, scrubUrls(v)]));
  return value;
}

const isPositiveInt = (n: number | null | undefined): n is number =>
  typeof n === 'number' && Number.isInteger(n) && n >= 1;

export function replayInputConfig(settings: ReplayInputSettings): ExportInputConfig {
  const url = settings.url ? withoutUserinfo(settings.url) : null;
  const path = settings.path ?? null;
  const streaming = settings.streaming ?? null;
  const timeoutMs = settings.timeoutMs ?? null;
  const captureReplay: Record<string, unknown> = {
    tool: 'capture-replay',
    ...(settings.target != null ? { target: settings.target } : {}),
    endpoint: {
      url,
      path,
      streaming: streaming === true ? 'forced' : 'as_captured',
      model_override: settings.model ?? null,
      timeout_ms: timeoutMs,
    },
    ...(settings.capture != null ? { capture: settings.capture } : {}),
    ...(settings.limit != null ? { limit: settings.limit } : {}),
    ...(settings.maxInFlight != null ? { max_in_flight: settings.maxInFlight } : {}),
    ...(scrubUrls(settings.extra ?? {}) as Record<string, unknown>),
  };

  if (!settings.model || url === null || !settings.capture) return { aiperf: null, captureReplay };
  const endpoint: Record<string, unknown> = { urls: [url], type: 'chat' };
  if (path !== null && path.startsWith('/')) endpoint.path = path;
  if (streaming === true) endpoint.streaming = true;
  if (timeoutMs !== null && Number.isFinite(timeoutMs) && timeoutMs >= 0) endpoint.timeout = timeoutMs / 1000;
  const dataset: Record<string, unknown> = {
    name: 'default',
    type: 'file',
    path: settings.capture,
    format: 'sagemaker_data_capture',
  };
  if (isPositiveInt(settings.limit)) dataset.entries = settings.limit;
  const phase: Record<string, unknown> = { name: 'profiling', type: 'fixed_schedule' };
  if (isPositiveInt(settings.maxInFlight)) phase.concurrency = settings.maxInFlight;
  return {
    aiperf: { models: { items: [{ name: settings.model }] }, endpoint, datasets: [dataset], phases: [phase] },
    captureReplay,
  };
}

/**
 * The export's configuration from whatever a caller recorded: an ExportInputConfig as built
 * above, or (older run state, tests) any other value, which is then ours alone, kept under
 * `capture_replay` with its URLs stripped of userinfo.
 */
export function exportInputConfigOf(value: unknown): ExportInputConfig {
  if (value !== null && typeof value === 'object' && 'captureReplay' in value && 'aiperf' in value) {
    const { aiperf, captureReplay } = value as ExportInputConfig;
    return {
      aiperf: (scrubUrls(aiperf) as Record<string, unknown> | null) ?? null,
      captureReplay: scrubUrls(captureReplay) as Record<string, unknown>,
    };
  }
  const ours = scrubUrls(value ?? {});
  return {
    aiperf: null,
    captureReplay:
      ours !== null && typeof ours === 'object' && !Array.isArray(ours)
        ? (ours as Record<string, unknown>)
        : { value: ours },
  };
}
