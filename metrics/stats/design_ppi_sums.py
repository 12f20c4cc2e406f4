"""The design PPI++ mean from sufficient statistics of the unaudited claims (issue 30).

`design_ppi_mean` needs every audited claim's row (a few thousand) but of the unaudited claims
(millions) only, per design stratum h: the count r_h, Σf, Σ(f − f̄_h)², the answers g_h, and
the cross-products of the per-answer totals v_a = (m_a,1..H, S_a,1..H) (m claims and S = Σf of
answer a in each stratum), Σ_a v_a v_aᵀ, plus the totals of the answers that also hold gold.
With them:

- the clustered variance of a stratum's mean f̄_h is g/(g−1)·Σ_a (S_ah − m_ah f̄_h)²/r_h²,
  Σ_a (S − m f̄)² = Σ S² − 2 f̄ Σ S m + f̄² Σ m² (three entries of the cross-product matrix);
- λ_h, the rectifier floor and the independent-claims variance need only Σf and Σ(f − f̄)²;
- the variance summed per answer over all its cells (answers spanning strata) is
  Σ_a z_a², z_a = G_a + βᵀv_a (G_a the answer's gold influences, β_h = (−c_h f̄_h, c_h)):
  Σ over the answers with gold of (G_a + βᵀv_a)² − (βᵀv_a)², plus βᵀ(Σ_a v_a v_aᵀ)β.

`rest_sums` computes them from arrays with numpy (the array entry point); `metrics.sql`
computes the same numbers with a GROUP BY per answer, then per stratum, in PostgreSQL.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import sparse
from scipy.stats import t as student_t

from ._common import NAN, z_value
from .design_core import DesignEstimate, _deff_text, _Design, _method


@dataclass(frozen=True)
class RestSums:
    """Sufficient statistics of the unaudited claims, by stratum (index k of `labels`)."""

    labels: list  # the strata of the unaudited claims, in order of first appearance
    count: np.ndarray  # r_h
    sum_f: np.ndarray  # Σ f
    m2: np.ndarray  # Σ (f − f̄_h)²
    answers: np.ndarray  # g_h: answers with an unaudited claim in h
    cross: np.ndarray  # (2H, 2H): Σ_a v_a v_aᵀ, v_a = (m_a,1..H, S_a,1..H)
    n_answers: int  # answers with any unaudited claim
    # The (answer, stratum index, m, S) cells of the answers that also hold gold claims.
    touched_answer: np.ndarray
    touched_stratum: np.ndarray
    touched_m: np.ndarray
    touched_s: np.ndarray

    @property
    def n(self) -> int:
        return int(self.count.sum())


def rest_sums(fr: np.ndarray, ids_r: np.ndarray, s_r: np.ndarray, ids_g: np.ndarray) -> RestSums:
    """The sufficient statistics of unaudited claims (judge outputs `fr`, answers `ids_r`,
    strata `s_r`), the answers `ids_g` of the gold claims marking which cells to keep whole."""
    fr = np.asarray(fr, dtype=float)
    s_codes, labels = pd.factorize(np.asarray(s_r).astype(object))
    h = len(labels)
    count, sum_f, m2 = stratum_totals(fr, s_codes, h)
    a_codes, a_uniq = pd.factorize(np.asarray(ids_r).astype(object))
    cells, inverse = np.unique(a_codes.astype(np.int64) * max(h, 1) + s_codes, return_inverse=True)
    cell_answer, cell_stratum = cells // max(h, 1), cells % max(h, 1)
    cell_m = np.bincount(inverse, minlength=cells.size).astype(float)
    cell_s = np.bincount(inverse, weights=fr, minlength=cells.size)
    v = sparse.csr_matrix(
        (
            np.concatenate([cell_m, cell_s]),
            (np.tile(cell_answer, 2), np.concatenate([cell_stratum, cell_stratum + h])),
        ),
        shape=(a_uniq.size, 2 * h),
    )
    touched = pd.Index(np.asarray(a_uniq, dtype=object)[cell_answer]).isin(
        np.asarray(ids_g, dtype=object)
    )
    return RestSums(
        labels=list(labels),
        count=count,
        sum_f=sum_f,
        m2=m2,
        answers=np.bincount(cell_stratum, minlength=h).astype(np.int64),
        cross=np.asarray((v.T @ v).toarray(), dtype=float),
        n_answers=int(a_uniq.size),
        touched_answer=np.asarray(a_uniq, dtype=object)[cell_answer[touched]],
        touched_stratum=cell_stratum[touched].astype(np.int64),
        touched_m=cell_m[touched],
        touched_s=cell_s[touched],
    )


def _pooled(fg: np.ndarray, r: int, sf: float, m2: float) -> tuple[int, float, float]:
    """(N, mean, Σ(f − mean)²) of the audited outputs `fg` with r unaudited ones (Σf, m2)."""
    total = fg.size + r
    if total == 0:
        return 0, 0.0, 0.0
    mean_f = (fg.sum() + sf) / total
    ss = float(np.sum((fg - mean_f) ** 2) + m2)
    if r:
        ss += r * (sf / r - mean_f) ** 2
    return total, float(mean_f), ss


def _lambda(y: np.ndarray, fg: np.ndarray, r: int, sf: float, m2: float) -> float:
    """`prevalence._ppi_lambda` from the unaudited claims' sums."""
    n = y.size
    if r == 0:
        return 0.0
    cov = float(np.mean((y - y.mean()) * (fg - fg.mean())))
    total, _, ss = _pooled(fg, r, sf, m2)
    var_f = ss / (total - 1) if total > 1 else 0.0
    if var_f <= 0.0:
        return 0.0
    lam = cov / ((1.0 + n / r) * var_f)
    return float(min(max(lam, 0.0), 1.0))


def _floor(rect: np.ndarray, fg: np.ndarray, r: int, sf: float, m2: float, lam: float) -> float:
    """`design_ppi._rectifier_floor` from sums: mean f(1 − f) = f̄(1 − f̄) − Var f."""
    m = rect.size
    total, mean_f, ss = _pooled(fg, r, sf, m2)
    var_all = ss / total
    tau2 = float(mean_f * (1.0 - mean_f) - var_all + (1.0 - lam) ** 2 * var_all)
    s2 = float(rect.var(ddof=1)) if m > 1 else 0.0
    return ((m - 1) * s2 + tau2) / m / m


def _mean_var(x: np.ndarray, ids: np.ndarray) -> tuple[float, float]:
    """CR1 variance of a claim mean clustered by answer, and the independent-claims one."""
    m = x.size
    if m <= 1:
        return 0.0, 0.0
    cl, uniq = pd.factorize(ids)
    g = uniq.size
    dev = x - x.mean()
    z = np.bincount(cl, weights=dev, minlength=g)
    v = g / max(g - 1, 1) * float(z @ z) / m**2
    v0 = m / (m - 1) * float(dev @ dev) / m**2
    return v, v0


def _rest_var(rest: RestSums, k: int) -> tuple[float, float]:
    """`_mean_var` of stratum k's unaudited outputs, from the cross-products."""
    m = int(rest.count[k])
    if m <= 1:
        return 0.0, 0.0
    h, mu, g = len(rest.labels), rest.sum_f[k] / m, int(rest.answers[k])
    c = rest.cross
    zz = c[h + k, h + k] - 2.0 * mu * c[k, h + k] + mu * mu * c[k, k]
    v = g / max(g - 1, 1) * max(float(zz), 0.0) / m**2
    v0 = m / (m - 1) * float(rest.m2[k]) / m**2
    return v, v0


def _strata_design(h: int, unseen, unseen_share: float, g_total: int) -> _Design:
    """A design of h strata (the unseen ones named), for the method text."""
    return _Design(
        cluster=np.empty(0, np.int64),
        stratum=np.empty(0, np.int64),
        keep=np.empty(0, bool),
        weights=np.ones(h),
        n_h=np.ones(h),
        labels=[],
        unseen=unseen,
        unseen_share=unseen_share,
        n_clusters=g_total,
        nested=True,
        g_h=np.zeros(h, np.int64),
    )


def stratum_totals(f: np.ndarray, codes: np.ndarray, h: int):
    """Per stratum code 0..h−1: (count, Σf, Σ(f − f̄)²), summed the one way every entry point
    sums (so the array and the sums paths give the same bits)."""
    count = np.bincount(codes, minlength=h).astype(np.int64)
    sum_f = np.bincount(codes, weights=f, minlength=h)
    mean = sum_f / np.maximum(count, 1)
    m2 = np.bincount(codes, weights=(f - mean[codes]) ** 2, minlength=h)
    return count, sum_f, m2


def ppi_independent(y, fg, r: int, sf: float, m2: float, confidence: float = 0.95) -> dict:
    """`prevalence.ppi_mean_interval`'s figures from the unaudited claims' count, Σf and
    Σ(f − f̄)²: {"value", "ci", "lambda"} (nan when there is no audited claim)."""
    n = y.size
    if n == 0:
        return {"value": NAN, "ci": (NAN, NAN), "lambda": NAN}
    lam = _lambda(y, fg, r, sf, m2)
    value = lam * (sf / r) + np.mean(y - lam * fg) if r else float(np.mean(y))
    var = np.var(y - lam * fg) / n
    if r:
        var += lam**2 * (m2 / r) / r
    half = z_value(confidence) * float(np.sqrt(var))
    clip = lambda v: float(min(max(v, 0.0), 1.0))  # noqa: E731
    return {"value": clip(value), "ci": (clip(value - half), clip(value + half)), "lambda": lam}


def _independent(y, fg, rest: RestSums, confidence: float) -> DesignEstimate:
    """One stratum, one claim per answer: `ppi_independent` as a design estimate."""
    n, r = y.size, rest.n
    sf = float(rest.sum_f.sum()) if r else 0.0
    m2 = float(rest.m2.sum()) if r else 0.0
    out = ppi_independent(y, fg, r, sf, m2, confidence)
    return DesignEstimate(
        value=out["value"],
        lower=out["ci"][0],
        upper=out["ci"][1],
        method="PPI++, normal interval, one claim per answer.",
        design_effect=1.0,
        n_clusters=n,
        n=n,
        extra={"lambda": float(out["lambda"]), "N": r},
    )


def _cells(s_g: np.ndarray, rest: RestSums, total: int):
    """The strata with gold as (label, gold mask, rest index or None, n_h, r_h), the share of
    claims they hold, and the strata without gold (`design_ppi._ppi_cells`' order)."""
    index = {lab: k for k, lab in enumerate(rest.labels)}
    labels = pd.unique(np.concatenate([s_g.astype(object), np.asarray(rest.labels, object)]))
    seen_w, unseen, parts = 0.0, [], []
    for lab in labels:
        mg = s_g == lab
        k = index.get(lab)
        n_h, r_h = int(mg.sum()), 0 if k is None else int(rest.count[k])
        if n_h == 0:
            unseen.append(lab)
            continue
        seen_w += (n_h + r_h) / total
        parts.append((lab, mg, k, n_h, r_h))
    return parts, seen_w, unseen


def _strata_sum(parts, seen_w, total, y, fg, ids_g, rest: RestSums):
    """`design_ppi._ppi_strata_sum` from sums; the unaudited influences as coefficients c_h
    (claim i of stratum h: c_h·(f_i − f̄_h))."""
    theta = var = var0 = deficit = 0.0
    floored = 0
    lambdas: dict[Any, float] = {}
    u_g = np.zeros(y.size)
    coef = np.zeros(len(rest.labels))
    for lab, mg, k, n_h, r_h in parts:
        w = (n_h + r_h) / total / seen_w
        yh, fgh = y[mg], fg[mg]
        sf, m2 = (float(rest.sum_f[k]), float(rest.m2[k])) if r_h else (0.0, 0.0)
        lam = _lambda(yh, fgh, r_h, sf, m2)
        lambdas[lab] = lam
        rect = yh - lam * fgh
        est = (lam * (sf / r_h) if r_h else 0.0) + rect.mean() if r_h else float(yh.mean())
        v_rect, v0_rect = _mean_var(rect, ids_g[mg])
        v_imp, v0_imp = _rest_var(rest, k) if r_h else (0.0, 0.0)
        if len(parts) > 1:
            floor = _floor(rect, fgh, r_h, sf, m2, lam)
            if floor > v_rect:
                deficit += w**2 * (floor - v_rect)
                floored += 1
            v0_rect = max(v0_rect, floor)
        theta += w * est
        var += w**2 * (v_rect + lam**2 * v_imp)
        var0 += w**2 * (v0_rect + lam**2 * v0_imp)
        u_g[mg] = w * (rect - rect.mean()) / n_h
        if r_h:
            coef[k] = w * lam / r_h
    return theta, var, var0, deficit, floored, lambdas, u_g, coef


def _spans(parts, ids_g, rest: RestSums) -> bool:
    """Whether some answer has claims in more than one (stratum, gold/unaudited) cell of the
    strata that have gold (`design_ppi._answers_span_cells`)."""
    seen_k = [k for _lab, _mg, k, _n, r_h in parts if r_h]
    block = rest.cross[np.ix_(seen_k, seen_k)] if seen_k else np.zeros((0, 0))
    if np.any(block[~np.eye(len(seen_k), dtype=bool)] > 0):
        return True
    part_of_k = {k: j for j, (_lab, _mg, k, _n, r_h) in enumerate(parts) if r_h}
    gold_cell = np.zeros(ids_g.size, np.int64)
    for j, (_lab, mg, _k, _n, _r) in enumerate(parts):
        gold_cell[mg] = 2 * j
    keep = np.array([k in part_of_k for k in rest.touched_stratum.tolist()], bool)
    rest_cell = np.array([2 * part_of_k[k] + 1 for k in rest.touched_stratum[keep].tolist()])
    answers = np.concatenate([ids_g.astype(object), rest.touched_answer[keep]])
    if answers.size == 0:
        return False
    cell = np.concatenate([gold_cell, rest_cell.astype(np.int64)])
    codes, uniq = pd.factorize(answers)
    some = np.empty(uniq.size, dtype=np.int64)
    some[codes] = cell
    return bool(np.any(some[codes] != cell))


def _summed_var(ids_g, u_g, rest: RestSums, coef: np.ndarray) -> float:
    """CR1 variance of θ̂ from each answer's influences summed over all its claims."""
    mu = rest.sum_f / np.maximum(rest.count, 1)
    beta = np.concatenate([-coef * mu, coef])
    codes, uniq = pd.factorize(ids_g.astype(object))
    gold_z = np.bincount(codes, weights=u_g, minlength=uniq.size)
    rest_z = np.zeros(uniq.size)
    where = pd.Index(uniq).get_indexer(rest.touched_answer)
    inside = where >= 0
    k = rest.touched_stratum[inside]
    dev = rest.touched_s[inside] - mu[k] * rest.touched_m[inside]
    np.add.at(rest_z, where[inside], coef[k] * dev)
    total = float(np.sum((gold_z + rest_z) ** 2 - rest_z**2))
    if len(rest.labels):
        total += max(float(beta @ rest.cross @ beta), 0.0)
    g_all = rest.n_answers + uniq.size - int(np.unique(where[inside]).size)
    return g_all / max(g_all - 1, 1) * max(total, 0.0)


def design_ppi_from_sums(
    y: np.ndarray,
    fg: np.ndarray,
    ids_g: np.ndarray,
    s_g: np.ndarray,
    rest: RestSums,
    confidence: float = 0.95,
) -> DesignEstimate:
    """`design_ppi.design_ppi_mean` (its formula and sources) from the audited claims' rows
    (`y` gold 0/1, `fg` judge outputs, answers, strata) and the unaudited claims' sums."""
    n, big_n = y.size, rest.n
    one_stratum = len(set(s_g.tolist()) | set(rest.labels)) <= 1
    set_g = set(ids_g.tolist())
    if one_stratum and len(set_g) == n and rest.n_answers == big_n and not rest.touched_m.size:
        return _independent(y, fg, rest, confidence)
    parts, seen_w, unseen = _cells(s_g, rest, n + big_n)
    g_total = len(set_g)
    theta, var, var0, deficit, floored, lambdas, u_g, coef = _strata_sum(
        parts, seen_w, n + big_n, y, fg, ids_g, rest
    )
    if _spans(parts, ids_g, rest):
        # An answer with claims in several cells ties those cells' means together: the CR1
        # variance of θ̂ from each answer's influences summed over all its claims (Binder 1983).
        var = _summed_var(ids_g, u_g, rest, coef)
    var += deficit
    h = len(parts)
    df = float(max(g_total - h, 1))
    t = float(student_t.ppf(0.5 + confidence / 2.0, df))
    half = t * float(np.sqrt(var))
    clip = lambda v: float(min(max(v, 0.0), 1.0))  # noqa: E731
    unseen_share = 1.0 - seen_w
    deff = var / var0 if var0 > 0 else NAN
    base = (
        f"PPI++ (power-tuned per stratum), rectifier clustered by answer ({g_total} audited "
        f"answers, {_deff_text(deff)}), t with {df:.0f} df"
    )
    if floored:
        base += (
            f"; {floored} of {h} strata's variance floored at what the judge's scores predict "
            "(too few audited claims to show their own)"
        )
    return DesignEstimate(
        value=clip(theta),
        lower=clip(theta - half),
        upper=clip(theta + half),
        method=_method(base, _strata_design(h, unseen, unseen_share, g_total)),
        design_effect=deff,
        n_clusters=g_total,
        n=n,
        se=float(np.sqrt(max(var, 0.0))),
        df=df,
        n_strata=h,
        unseen_share=unseen_share,
        extra={"lambda": lambdas, "N": big_n},
    )
