/**
 * "Did you mean ...?" for misspelled names (configuration keys, metric tags): the closest
 * known name by edit distance, when it is close enough to be what was meant.
 */

/**
 * Optimal string alignment distance: insertions, deletions, substitutions and transpositions
 * of two adjacent characters (`laedSeconds` is one edit from `leadSeconds`), each costing 1.
 */
export function editDistance(a: string, b: string): number {
  if (a === b) return 0;
  if (a.length === 0) return b.length;
  if (b.length === 0) return a.length;
  // Three rows: the one before the previous (for transpositions), the previous, the current.
  let before = new Array<number>(b.length + 1).fill(0);
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  let current = new Array<number>(b.length + 1).fill(0);
  for (let i = 1; i <= a.length; i++) {
    current[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min((previous[j] as number) + 1, (current[j - 1] as number) + 1, (previous[j - 1] as number) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d = Math.min(d, (before[j - 2] as number) + 1);
      current[j] = d;
    }
    [before, previous, current] = [previous, current, before];
  }
  return previous[b.length] as number;
}

/**
 * The known name closest to `name`, or null when none is close: case is ignored (a
 * `leadseconds` is `leadSeconds`), and at most a third of the longer name's length in edits
 * (at least 1, at most 3) is allowed, so a short unrelated word does not get a suggestion.
 * Ties go to the first candidate.
 */
export function closest(name: string, candidates: Iterable<string>): string | null {
  const lower = name.toLowerCase();
  let best: string | null = null;
  let bestDistance = Infinity;
  for (const candidate of candidates) {
    const d = editDistance(lower, candidate.toLowerCase());
    const allowed = Math.min(3, Math.max(1, Math.floor(Math.max(name.length, candidate.length) / 3)));
    if (d <= allowed && d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}

/** `; did you mean \`x\`?` when a close name exists, else ''. */
export function didYouMean(name: string, candidates: Iterable<string>): string {
  const match = closest(name, candidates);
  return match === null ? '' : `; did you mean \`${match}\`?`;
}
