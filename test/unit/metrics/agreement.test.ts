import { describe, expect, it } from 'vitest';
import { MISMATCHES_LISTED, outputAgreement } from '../../../lambdas/core/metrics/agreement';
import { computeProfileRecord } from '../../../lambdas/core/metrics/record-metrics';
import type { FireOutcome } from '../../../lambdas/core/types';
import { OUTCOMES } from '../export/fixtures';

const base = OUTCOMES[2]!; // non-streaming, succeeded, usage: 12 prompt, 5 output tokens

function replayed(
  i: number,
  captured: string | null,
  got: string | null,
  capturedTokens: number | null = null,
  error = false,
): FireOutcome {
  return {
    ...base,
    requestId: `req-${i}`,
    request: {
      ...base.request,
      source: { file: 'cap.jsonl', line: i + 1 },
      capturedOutputSha256: captured,
      capturedUsage: capturedTokens === null ? null : { promptTokens: 1, completionTokens: capturedTokens },
    },
    result: {
      ...base.result!,
      outputSha256: got,
      ...(error ? { error: { code: 500, type: 'HTTPError', message: 'x' } } : {}),
    },
  };
}

describe('output agreement with the capture', () => {
  it('marks each record: match, mismatch, or not comparable (no digest on a side, or a failure)', () => {
    const marks = [
      replayed(0, 'aa', 'aa'),
      replayed(1, 'aa', 'bb'),
      replayed(2, null, 'aa'),
      replayed(3, 'aa', null),
      replayed(4, 'aa', 'aa', null, true),
    ].map((o) => computeProfileRecord(o, 'rp').capture_replay.output_match);
    expect(marks).toEqual([true, false, null, null, null]);
  });

  it('counts exact matches and locates the first mismatches by file and line, a bounded number of them', () => {
    const outcomes = Array.from({ length: 30 }, (_, i) => replayed(i, 'cap', i % 3 === 0 ? 'cap' : 'other'));
    const agreement = outputAgreement(outcomes.map((o) => computeProfileRecord(o, 'rp')));
    expect(agreement.exact).toMatchObject({ compared: 30, matched: 10 });
    expect(agreement.exact.match_rate).toBeCloseTo(1 / 3, 12);
    expect(agreement.exact.first_mismatches).toHaveLength(MISMATCHES_LISTED);
    expect(agreement.exact.first_mismatches[0]).toEqual({
      capture_file: 'cap.jsonl',
      capture_line: 2,
      x_request_id: 'req-1',
    });
  });

  it('compares LLM output lengths with the captured usage', () => {
    // The fixture's server reported 5 output tokens for each; captured: 5, 4, 10.
    const agreement = outputAgreement(
      [replayed(0, null, null, 5), replayed(1, null, null, 4), replayed(2, null, null, 10)].map((o) =>
        computeProfileRecord(o, 'rp'),
      ),
    );
    expect(agreement.length).toMatchObject({ compared: 3, equal: 1, difference_p50: 0 }); // differences 0, +1, -5
    expect(agreement.length.mean_abs_relative_pct).toBeCloseTo(((0 + 1 / 4 + 5 / 10) / 3) * 100, 10);
    expect(agreement.exact).toMatchObject({ compared: 0, match_rate: null });
  });
});
