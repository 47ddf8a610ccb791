/**
 * A point in time on the command line (`replay --from/--to`): an ISO 8601 instant with its
 * zone, read as Data Capture's inferenceTime is (core/capture/time.ts: impossible dates such
 * as Feb 30 refused, not rolled over), or a time relative to now.
 *
 *   2026-04-29T10:00:00Z, 2026-04-29T12:00+02:00, 2026-04-29T10:00:00.250Z
 *   now, -2h, -90m, -30s, -1d, -1.5h
 *
 * A time without a zone is refused: it would mean the machine's zone, while the captures'
 * hour partitions are UTC. So is a time too far after now (`latestMs`): no capture is from the
 * future, and a window's hour partitions up to 9999-12-31 are 70 million (replay --to);
 * `schedule-now --at` takes none after now at all (schedule-now.ts).
 */
import { parseInferenceTime } from '../core/capture/time';

const RELATIVE = /^-(\d+(?:\.\d+)?)(s|m|h|d)$/;
const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
/** `THH:MM` followed by the zone: seconds left out. */
const NO_SECONDS = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2})(Z|[+-].*)$/;

export const TIME_FLAG_FORMS =
  'an ISO 8601 time with a zone (2026-04-29T10:00:00Z, 2026-04-29T12:00+02:00) or a time before now (now, -2h, -90m, -1d)';

/** How far after now a captures window may reach (--from/--to): a day, for clocks that disagree. */
export const FUTURE_SLACK_MS = 86_400_000;

/** How far after now a time is, in words: `3 h`, `12 days`, `7973 years`. */
function aheadText(ms: number): string {
  const units: [number, string][] = [
    [365.2425 * 86_400_000, 'years'],
    [86_400_000, 'days'],
    [3_600_000, 'h'],
    [60_000, 'min'],
  ];
  for (const [size, unit] of units) if (ms >= 2 * size) return `${Math.floor(ms / size)} ${unit}`;
  return `${Math.ceil(ms / 1000)} s`;
}

/**
 * Epoch ms of `raw`, relative forms taken from `nowMs`; or what is wrong with it, naming the
 * flag. A time after `latestMs` (default: a day after now) is refused: `why` says why.
 */
export function parseTimeFlag(
  flag: string,
  raw: string,
  nowMs: number,
  latest: { ms: number; why: string } = { ms: nowMs + FUTURE_SLACK_MS, why: 'no capture is from the future' },
): number | string {
  const text = raw.trim();
  if (text === 'now') return nowMs;
  const relative = RELATIVE.exec(text);
  if (relative) return nowMs - Number(relative[1]) * UNIT_MS[relative[2] as keyof typeof UNIT_MS];
  const withSeconds = NO_SECONDS.exec(text);
  const parsed = parseInferenceTime(withSeconds ? `${withSeconds[1]}:00${withSeconds[2]}` : text);
  if (parsed) {
    if (parsed.epochMs <= latest.ms) return parsed.epochMs;
    return (
      `${flag} ${raw.trim()} is ${aheadText(parsed.epochMs - nowMs)} after now: ${latest.why}; give now or a ` +
      `time before it (e.g. -1h)`
    );
  }
  const zoneless = /^\d{4}-\d{2}-\d{2}(T[\d:.]+)?$/.test(text);
  return `${flag} must be ${TIME_FLAG_FORMS} (got "${raw}"${zoneless ? ': add its zone, e.g. Z for UTC' : ''})`;
}
