/**
 * The plan's problems in the replay command's words (lambdas/local/replay/plan-flags.ts): each
 * typed problem's option named by the flag that sets it, taken from the program's own option
 * definitions, with no message rewritten.
 */
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { validatePlanOptions, type PlanField } from '../../../lambdas/core/plan/plan';
import { buildProgram } from '../../../lambdas/local/program';
import { flagOfKey, PLAN_OPTION_FLAGS, planFlag, planProblemsAsFlags } from '../../../lambdas/local/replay/plan-flags';

describe("the plan's options as the replay command's flags", () => {
  const replay = buildProgram().commands.find((c) => c.name() === 'replay') as Command;

  it('names each option by a flag the replay command defines, whose key is the one the table gives', () => {
    for (const [field, key] of Object.entries(PLAN_OPTION_FLAGS)) {
      const option = replay.options.find((o) => o.attributeName() === key);
      expect(option?.long, field).toBe(flagOfKey(key));
      expect(planFlag(field as PlanField)).toBe(option?.long);
    }
    expect(planFlag('startOffsetMs')).toBe('--start-offset');
    expect(planFlag('sampleRate')).toBe('--sample');
    expect(planFlag('modelOverride')).toBe('--model');
  });

  it("speaks of the plan's problems in flags, not field names", () => {
    const problems = validatePlanOptions(
      {
        runId: 'r',
        targetKind: 'openai-chat',
        timeScale: 1,
        intraSecond: 'spread',
        startOffsetMs: 5000,
        endOffsetMs: 1000,
        seed: 2 ** 33,
      },
      planFlag,
    );
    expect(problems.map((p) => p.field)).toEqual(['endOffsetMs', 'seed']);
    expect(planProblemsAsFlags(problems)).toBe(
      '--end-offset (1000) is before --start-offset (5000); --seed must be a whole number in [0, 4294967295] (got 8589934592)',
    );
    expect(
      planProblemsAsFlags([
        { field: 'sampleRate', message: 'must be in (0, 1] (got 2)' },
        { field: 'limit', message: 'must be a whole number > 0 (got 0)' },
      ]),
    ).toBe('--sample must be in (0, 1] (got 2); --limit must be a whole number > 0 (got 0)');
  });
});
