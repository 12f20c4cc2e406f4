"""monitor.stats' confidence sequence against confseq's (the issue's reference library,
Waudby-Smith & Ramdas' own code) on the same data.

With one claim a day our daily-fixed bet is confseq's per-claim predictable plug-in bet
(`lambda_predmix_eb`, hedged capital process, convex combination, truncation ½/m), so the two
boundaries must agree to the grid's resolution at every look. With claims batched by day ours
fixes the bet for the day; its width stays close to confseq's per-claim sequence (median
ratio ≤ 1.1 over five seeded streams, none over 1.3), and both
cover the true mean at every day at once in ≥ 95% of seeded streams.
"""

import numpy as np

np.float_ = np.float64  # confseq 0.0.11 still names np.float_ (gone in NumPy 2)

from confseq.betting import betting_cs as confseq_betting_cs  # noqa: E402

from monitor.stats import betting_cs, days_group  # noqa: E402

ALPHA = 0.05


def _ours(x, days):
    n = len(x)
    day = np.repeat(np.arange(days), n // days)
    return betting_cs(days_group(day, x, np.zeros(n), np.ones(n), days), ALPHA)


def _reference(x):
    return confseq_betting_cs(x, alpha=ALPHA, running_intersection=True, convex_comb=True)


def test_one_claim_a_day_gives_confseqs_boundary():
    for seed, mean in ((0, 0.8), (1, 0.9), (2, 0.6)):
        x = (np.random.default_rng(seed).random(300) < mean).astype(float)
        ours, (lower, upper) = _ours(x, 300), _reference(x)
        # our grid has 1,001 points and reports each end one step out; confseq's has 1,000
        assert abs(ours.lower[-1] - lower[-1]) <= 0.003
        assert abs(ours.upper[-1] - upper[-1]) <= 0.003
        assert np.mean(np.abs(ours.lower - lower)) <= 0.003
        assert np.mean(np.abs(ours.upper - upper)) <= 0.003
        assert np.max(np.abs(ours.lower - lower)) <= 0.03  # the first looks, on a few claims


def test_daily_batches_stay_as_narrow_as_confseqs_per_claim_sequence():
    ratios = []
    for seed in range(5):
        x = (np.random.default_rng(10 + seed).random(1500) < 0.85).astype(float)
        ours, (lower, upper) = _ours(x, 30), _reference(x)
        ends = np.arange(49, 1500, 50)  # confseq read where each day ends
        ratios.append(np.mean(ours.upper - ours.lower) / np.mean(upper[ends] - lower[ends]))
    # fixing the bet for a day costs a little width in some streams (seeded: 0.94–1.22)
    assert np.median(ratios) <= 1.1, ratios
    assert max(ratios) <= 1.3, ratios
    assert min(ratios) >= 0.7, ratios  # not narrower than an anytime-valid CS can be


def test_both_cover_at_every_day_at_once_in_95_percent_of_streams():
    rng = np.random.default_rng(29)
    ours_cover = reference_cover = 0
    streams, mean = 100, 0.88
    for _ in range(streams):
        x = (rng.random(200) < mean).astype(float)
        ours, (lower, upper) = _ours(x, 20), _reference(x)
        seen = ~np.isnan(ours.lower)
        ours_cover += bool(np.all((ours.lower[seen] <= mean) & (mean <= ours.upper[seen])))
        reference_cover += bool(np.all((lower <= mean) & (mean <= upper)))
    assert ours_cover >= 95, ours_cover
    assert reference_cover >= 95, reference_cover
