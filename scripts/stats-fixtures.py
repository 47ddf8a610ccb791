#!/usr/bin/env python3
"""Reference values for lambdas/core/stats/ (the A/B comparison's statistics), computed independently with numpy and scipy.

    python3 scripts/stats-fixtures.py        # writes test/fixtures/stats/*.json

Every data set is generated here (seeded) and written with the expected results:
scipy.stats.wilcoxon / mannwhitneyu / binomtest / fisher_exact with their defaults, numpy's
default (linear) percentiles, and numpy percentile-bootstrap intervals (classic resampling with
numpy's Generator) of the mean and quantile differences, with many resamples so that the
reference's own Monte Carlo error is small next to the tests' tolerance.
The versions used are recorded in every file.
"""
import json
import os

import numpy as np
import scipy
from scipy import stats

OUT = os.path.join(os.path.dirname(__file__), '..', 'test', 'fixtures', 'stats')
VERSIONS = {'numpy': np.__version__, 'scipy': scipy.__version__}
PCTS = [0, 1, 5, 10, 25, 50, 75, 90, 95, 99, 99.9, 100]
CONFIDENCE = 0.95


def rounded(x, digits=4):
    return [float(v) for v in np.round(np.asarray(x, dtype=float), digits)]


def wilcoxon(d):
    res = stats.wilcoxon(d)
    return {'statistic': float(res.statistic), 'pvalue': float(res.pvalue)}


def mannwhitneyu(x, y):
    res = stats.mannwhitneyu(x, y)
    return {'statistic': float(res.statistic), 'pvalue': float(res.pvalue)}


def stat_values(samples, name):
    """Statistic of each row of a (resamples, n) array."""
    if name == 'mean':
        return samples.mean(axis=1)
    q = {'p50': 50, 'p90': 90, 'p99': 99}[name]
    return np.percentile(samples, q, axis=1)


def bootstrap(a, b, paired, resamples, seed, names=('mean', 'p50', 'p90', 'p99'), chunk=250):
    """Percentile intervals of stat(B) - stat(A) and of stat(A), stat(B): classic bootstrap."""
    rng = np.random.default_rng(seed)
    a = np.asarray(a)
    b = np.asarray(b)
    reps = {n: {'a': [], 'b': []} for n in names}
    done = 0
    while done < resamples:
        k = min(chunk, resamples - done)
        ia = rng.integers(0, len(a), (k, len(a)))
        ib = ia if paired else rng.integers(0, len(b), (k, len(b)))
        ra = a[ia]
        rb = b[ib]
        for n in names:
            reps[n]['a'].append(stat_values(ra, n))
            reps[n]['b'].append(stat_values(rb, n))
        done += k
    lo, hi = (1 - CONFIDENCE) / 2 * 100, (1 + CONFIDENCE) / 2 * 100
    out = {}
    for n in names:
        ra = np.concatenate(reps[n]['a'])
        rb = np.concatenate(reps[n]['b'])
        diff = rb - ra
        rel = diff / ra * 100
        out[n] = {
            'difference': [float(np.percentile(diff, lo)), float(np.percentile(diff, hi))],
            'relative_pct': [float(np.percentile(rel, lo)), float(np.percentile(rel, hi))],
            'baseline': [float(np.percentile(ra, lo)), float(np.percentile(ra, hi))],
            'candidate': [float(np.percentile(rb, lo)), float(np.percentile(rb, hi))],
        }
    return {'resamples': resamples, 'confidence': CONFIDENCE, 'paired': paired, 'intervals': out}


def percentiles(x):
    return {str(q): float(np.percentile(x, q)) for q in PCTS}


def write(name, doc):
    doc = {'generated_by': 'scripts/stats-fixtures.py', 'versions': VERSIONS, **doc}
    with open(os.path.join(OUT, name), 'w') as f:
        json.dump(doc, f, indent=None, separators=(',', ':'))
        f.write('\n')
    print(name, os.path.getsize(os.path.join(OUT, name)), 'bytes')


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(20260429)

    # Small paired sets with ties and zeros: scipy's permutation test (n <= 13), and the normal
    # approximation with the tie correction (14..50 values with ties or zeros).
    small = []
    for d in [
        [1.5, -2.0, 0.0, 3.0, 3.0, -1.5, 4.0, 0.0, 2.0, 5.0],
        [0.0, 0.0, 1.0, 1.0, 1.0, -1.0, 2.0],
        [2.0, 2.0, -2.0, 3.0, 4.0, 4.0, 4.0, 6.0, -1.0, 5.0, 7.0, 8.0, 9.0],
        [0.0, 0.0, 0.0],
        list(np.round(rng.normal(0.4, 1.0, 20), 1)),  # ties from rounding, 20 values
        list(np.round(rng.normal(0.3, 1.0, 40), 1)) + [0.0, 0.0],  # ties and zeros, 42 values
        [1.0, 2.0, 3.0, 4.0, 5.0],  # no ties: exact
    ]:
        d = [float(v) for v in d]
        small.append({'d': d, 'wilcoxon': wilcoxon(d)})
    write('wilcoxon-small.json', {'cases': small})

    # n = 30 and n = 50, distinct non-zero differences: the exact distribution.
    exact = []
    for n, shift in [(30, 0.3), (30, 1.0), (50, 0.2), (12, 0.0), (45, -0.6)]:
        d = rng.normal(shift, 1.0, n)
        exact.append({'d': [float(v) for v in d], 'wilcoxon': wilcoxon(d)})
    write('wilcoxon-exact.json', {'cases': exact})

    # n = 500 pairs, paired latencies: a per-request base cost and per-target noise. Normal
    # approximation; percentiles; paired bootstrap intervals.
    base = rng.lognormal(np.log(100), 0.5, 500)
    a = np.round(base * rng.lognormal(0, 0.1, 500), 3)
    b = np.round(base * 1.03 * rng.lognormal(0, 0.1, 500), 3)
    write('paired-n500.json', {
        'a': rounded(a, 3), 'b': rounded(b, 3),
        'wilcoxon': wilcoxon(b - a),
        'percentiles': {'a': percentiles(a), 'b': percentiles(b), 'difference': percentiles(b - a)},
        'mean': {'a': float(a.mean()), 'b': float(b.mean())},
        'bootstrap': bootstrap(a, b, True, 20000, 7),
    })

    # Unpaired: ties (values rounded to 1 ms), different sizes; and small exact cases.
    x = np.round(rng.lognormal(np.log(120), 0.4, 300))
    y = np.round(rng.lognormal(np.log(126), 0.4, 250))
    exact_cases = []
    for n1, n2 in [(6, 15), (8, 8), (3, 40), (9, 5), (1, 7)]:
        xs = rng.normal(0, 1, n1)
        ys = rng.normal(0.8, 1, n2)
        exact_cases.append({'x': [float(v) for v in xs], 'y': [float(v) for v in ys], 'mannwhitneyu': mannwhitneyu(xs, ys)})
    ties_cases = []
    for xs, ys in [([1, 2, 2, 3], [2, 3, 3, 4, 5]), ([5, 5, 5], [5, 5, 5, 5]), ([1, 1, 2, 9, 9], [3, 4, 4, 10])]:
        ties_cases.append({'x': [float(v) for v in xs], 'y': [float(v) for v in ys], 'mannwhitneyu': mannwhitneyu(xs, ys)})
    write('unpaired.json', {
        'x': rounded(x, 0), 'y': rounded(y, 0),
        'mannwhitneyu': mannwhitneyu(x, y),
        'percentiles': {'x': percentiles(x), 'y': percentiles(y)},
        'exact_cases': exact_cases,
        'ties_cases': ties_cases,
        'bootstrap': bootstrap(x, y, False, 20000, 11),
    })

    # Skewed: lognormal sigma 1, 12,000 pairs (above the 10,000 from which the Poisson
    # bootstrap takes over), candidate 10 % slower on the upper tail.
    n = 12000
    base = rng.lognormal(np.log(50), 1.0, n)
    a = np.round(base * rng.lognormal(0, 0.1, n), 3)
    b = np.round(base * np.where(base > np.percentile(base, 80), 1.10, 1.0) * rng.lognormal(0, 0.1, n), 3)
    write('lognormal-n12000.json', {
        'a': rounded(a, 3), 'b': rounded(b, 3),
        'wilcoxon': wilcoxon(b - a),
        'mannwhitneyu': mannwhitneyu(a, b),
        'percentiles': {'a': percentiles(a), 'b': percentiles(b)},
        'bootstrap_paired': bootstrap(a, b, True, 10000, 13),
        'bootstrap_unpaired': bootstrap(a, b, False, 10000, 17),
    })

    # Counts: McNemar exact (binomtest on discordant pairs) and Fisher's exact test.
    binom = []
    for k, n in [(0, 1), (1, 1), (3, 10), (7, 10), (5, 10), (10, 21), (11, 21), (2, 30), (40, 100), (60, 100), (450, 1000), (4800, 10000), (0, 50), (25, 25), (123, 4000), (30100, 60000)]:
        binom.append({'k': k, 'n': n, 'pvalue': float(stats.binomtest(k, n, 0.5).pvalue)})
    fisher = []
    for table in [[[3, 1], [1, 3]], [[1, 9], [11, 3]], [[0, 5], [5, 0]], [[10, 10], [10, 10]], [[2, 98], [9, 91]], [[0, 1000], [7, 993]],
                  [[25, 975], [40, 960]], [[120, 99880], [95, 99905]], [[5, 0], [0, 0]], [[8, 2], [1, 5]], [[1500, 498500], [1700, 498300]], [[3, 7], [3, 7]]]:
        res = stats.fisher_exact(table)
        fisher.append({'table': table, 'pvalue': float(res.pvalue)})
    # Holm: the textbook step-down, written out here, on p-values with a null.
    holm_in = [0.01, 0.04, None, 0.03, 0.005, 0.5]
    present = sorted([(p, i) for i, p in enumerate(holm_in) if p is not None])
    m = len(present)
    holm_out = [None] * len(holm_in)
    running = 0.0
    for k, (p, i) in enumerate(present):
        running = max(running, min(1.0, (m - k) * p))
        holm_out[i] = running
    write('counts.json', {'binomtest': binom, 'fisher_exact': fisher, 'holm': {'p': holm_in, 'adjusted': holm_out}})


if __name__ == '__main__':
    main()
