"""A judge whose error rates differ by group (risk category): the test of equality and the
per-group correction.

Rogan–Gladen with one pooled (se, sp) is exact whatever the groups, *if* the audit sample has the
project's mix of groups: pooled se is then P(judge S | gold S) over the project. When the audit
over-represents one group (a lead restricted the queue to a risk category, or audits the risky
category more), the pooled rates are those of the audit's mix, not the project's, and a judge
whose rates differ by group is then corrected with the wrong rates. The cure is to correct each
group with its own rates and combine the per-group estimates by each group's share of the
project's judged claims (seed 000's "Rigor flag": one audited rate pair corrects a drifting judge
only imperfectly).

Pure functions over counts and arrays; no Django.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from scipy import stats as sps

from ._common import NAN, check_count, z_value
from .prevalence import ppi_mean_interval, rogan_gladen, rogan_gladen_variance

EQUALITY_ALPHA = 0.05
_MIN_EXPECTED = 5.0


def rate_equality_test(successes: Sequence[int], totals: Sequence[int]) -> dict[str, Any]:
    """Is one binomial rate (sensitivity, or specificity) the same in every group?

    The groups with at least one trial form a 2×G table (successes, failures). Test:
    Pearson's chi-square test of homogeneity, G − 1 degrees of freedom, without continuity
    correction (``scipy.stats.chi2_contingency(correction=False)``); with two groups and an
    expected count below 5, Fisher's exact test (``scipy.stats.fisher_exact``, two-sided).
    With fewer than two groups, or no variation at all (every trial a success, or every one a
    failure), there is nothing to test: p = nan and ``test`` says why.
    Returns ``{"test", "statistic", "df", "p_value", "groups", "min_expected"}``.
    """
    pairs = [check_count(k, n) for k, n in zip(successes, totals, strict=True)]
    pairs = [(k, n) for k, n in pairs if n > 0]
    out: dict[str, Any] = {"groups": len(pairs), "statistic": NAN, "df": 0, "p_value": NAN}
    if len(pairs) < 2:
        return {**out, "test": "not tested: fewer than two groups with audited claims"}
    table = np.array([[k for k, _ in pairs], [n - k for k, n in pairs]], dtype=float)
    if table[0].sum() == 0 or table[1].sum() == 0:
        return {**out, "test": "not tested: no variation (the same outcome on every audited claim)"}
    expected = sps.contingency.expected_freq(table)
    min_expected = float(expected.min())
    if len(pairs) == 2 and min_expected < _MIN_EXPECTED:
        statistic, p_value = sps.fisher_exact(table.astype(int))
        return {
            **out,
            "test": "Fisher's exact test (two-sided)",
            "statistic": float(statistic),
            "df": 1,
            "p_value": float(p_value),
            "min_expected": min_expected,
        }
    chi2, p_value, df, _ = sps.chi2_contingency(table, correction=False)
    name = "Pearson's chi-square test of homogeneity"
    if min_expected < _MIN_EXPECTED:
        name += " (approximate: an expected count is below 5)"
    return {
        **out,
        "test": name,
        "statistic": float(chi2),
        "df": int(df),
        "p_value": float(p_value),
        "min_expected": min_expected,
    }


def rates_differ(p_sensitivity: float, p_specificity: float) -> tuple[bool, float]:
    """Do the judge's error rates differ across groups? Bonferroni over the two tests:
    p = min(1, 2·min(p_se, p_sp)) over the tests that could be run (×1 when only one could);
    they differ when p < 0.05, so the false-alarm rate of the decision stays at most 5%."""
    ps = [p for p in (p_sensitivity, p_specificity) if p is not None and np.isfinite(p)]
    if not ps:
        return False, NAN
    p = min(1.0, len(ps) * min(ps))
    return bool(p < EQUALITY_ALPHA), float(p)


def _combined(value: float, var: float, confidence: float, *, ok: bool) -> dict[str, Any]:
    """The combined estimate and its Wald interval value ± z·√var, clipped to [0, 1]."""
    if not ok:
        return {"value": NAN, "ci": (NAN, NAN)}
    half = z_value(confidence) * float(np.sqrt(var))

    def clip(v: float) -> float:
        return float(min(max(v, 0.0), 1.0))

    return {"value": clip(value), "ci": (clip(value - half), clip(value + half))}


def stratified_rogan_gladen(
    groups: Mapping[str, Mapping[str, int]], confidence: float = 0.95
) -> dict[str, Any]:
    """Rogan–Gladen per group, combined by each group's share of the judged claims.

    ``groups[g]`` holds ``pos``/``n`` (the judge's SUPPORTED verdicts among the group's judged
    claims) and ``se_successes``/``se_n``, ``sp_successes``/``sp_n`` (its audited rates in the
    group). Formula: π̂ = Σ_g w_g π̂_g with w_g = n_g / Σ n and π̂_g = (p_g + sp_g − 1)/(se_g +
    sp_g − 1) clipped to [0, 1]; Var = Σ_g w_g² Var(π̂_g), each the delta-method variance
    (`rogan_gladen_variance`, Greiner & Gardner 2000), the groups being independent samples;
    interval π̂ ± z·√Var clipped to [0, 1]. nan when a group with judged claims cannot be
    corrected (no audited claim on one side, or its J ≤ 0): that group is named in
    ``uncorrectable``.
    """
    total = sum(int(g["n"]) for g in groups.values())
    value, var, uncorrectable, per_group = 0.0, 0.0, [], {}
    for name, g in groups.items():
        n = int(g["n"])
        if n == 0:
            continue
        w = n / total
        ks, ms, kp, mp = (int(g[k]) for k in ("se_successes", "se_n", "sp_successes", "sp_n"))
        pi = rogan_gladen(g["pos"] / n, ks / ms, kp / mp) if ms and mp else NAN
        v = rogan_gladen_variance(int(g["pos"]), n, ks, ms, kp, mp) if ms and mp else NAN
        per_group[name] = {"weight": w, "value": pi, "variance": v}
        if not (np.isfinite(pi) and np.isfinite(v)):
            uncorrectable.append(name)
            continue
        value += w * pi
        var += w * w * v
    out = _combined(value, var, confidence, ok=not uncorrectable and total > 0)
    return {**out, "per_group": per_group, "uncorrectable": uncorrectable}


def stratified_ppi(
    groups: Mapping[str, Mapping[str, np.ndarray]], confidence: float = 0.95
) -> dict[str, Any]:
    """PPI++ per group (its own power-tuning λ_g), combined by each group's share of the judged
    claims, as stratified PPI (Fisch et al. 2024, arXiv:2406.04291, eq. 6 with the mean loss).

    ``groups[g]`` holds ``gold`` (0/1 on the group's audited claims), ``judge_on_gold`` and
    ``judge_on_rest`` (the judge's score on its audited and on its other judged claims).
    Formula: θ̂ = Σ_g w_g θ̂_g, w_g = N_g/N (N_g = audited + other judged claims of g);
    Var = Σ_g w_g² SE_g² (`ppi_mean_interval`'s SE per group). A group with judged claims but no
    audited claim cannot be rectified: the estimate is nan and the group is named.
    """
    sizes = {
        name: int(np.size(g["gold"]) + np.size(g["judge_on_rest"])) for name, g in groups.items()
    }
    total = sum(sizes.values())
    value, var, unseen, per_group = 0.0, 0.0, [], {}
    for name, g in groups.items():
        if sizes[name] == 0:
            continue
        w = sizes[name] / total
        if np.size(g["gold"]) == 0:
            unseen.append(name)
            continue
        ppi = ppi_mean_interval(g["gold"], g["judge_on_gold"], g["judge_on_rest"], confidence)
        # Its value and ends are clipped to [0, 1]: combine the unclipped figures instead.
        y = np.asarray(g["gold"], dtype=float)
        fg = np.asarray(g["judge_on_gold"], dtype=float)
        fr = np.asarray(g["judge_on_rest"], dtype=float)
        lam = ppi["lambda"]
        raw = lam * fr.mean() + np.mean(y - lam * fg) if fr.size else float(np.mean(y))
        v = np.var(y - lam * fg) / y.size + (lam**2 * np.var(fr) / fr.size if fr.size else 0.0)
        se = float(np.sqrt(v))
        per_group[name] = {"weight": w, "value": float(raw), "lambda": lam, "se": se}
        value += w * raw
        var += w * w * se * se
    out = _combined(value, var, confidence, ok=not unseen and total > 0)
    return {**out, "per_group": per_group, "unseen": unseen}
