/**
 * Holm-Bonferroni step-down adjustment. Nulls pass through and do not count as tests.
 * adjusted p(i) = max over j <= i of min(1, (m - j + 1) p(j)), p sorted ascending.
 */
export function holm(pValues: readonly (number | null)[]): (number | null)[] {
  const present = pValues
    .map((p, i) => ({ p, i }))
    .filter((e): e is { p: number; i: number } => e.p !== null && Number.isFinite(e.p))
    .sort((a, b) => a.p - b.p || a.i - b.i);
  const m = present.length;
  const out: (number | null)[] = pValues.map(() => null);
  let running = 0;
  present.forEach((e, k) => {
    running = Math.max(running, Math.min(1, (m - k) * e.p));
    out[e.i] = running;
  });
  return out;
}
