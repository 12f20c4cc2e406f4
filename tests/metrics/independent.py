"""Reference computations for the report tests, none of them calling `metrics`.

Each is either a definition evaluated literally (ECE, the CRC cut, held-out loss), or an
independent library: scikit-learn (isotonic regression, logistic regression for Platt scaling),
`ppi_py` (PPI++). A test that takes its expected figure from the product's own function shares
the product's bug; these do not.
"""

import math

import numpy as np
from scipy.stats import norm
from sklearn.isotonic import IsotonicRegression
from sklearn.linear_model import LogisticRegression

Z = 1.959963984540054


def wilson(k: int, n: int, z: float = Z) -> tuple[float, float]:
    p = k / n
    centre = (p + z**2 / (2 * n)) / (1 + z**2 / n)
    half = z / (1 + z**2 / n) * math.sqrt(p * (1 - p) / n + z**2 / (4 * n**2))
    return centre - half, centre + half


def answer_folds(groups: np.ndarray, folds: int = 5, seed: int = 0) -> np.ndarray:
    """The documented seeded deal of cross-fitting: the distinct answers, in order of first
    appearance, are permuted by `default_rng(seed)` and dealt round-robin into the folds."""
    uniques = list(dict.fromkeys(groups.tolist()))
    deal = np.empty(len(uniques), dtype=int)
    deal[np.random.default_rng(seed).permutation(len(uniques))] = np.arange(len(uniques)) % folds
    fold_of = dict(zip(uniques, deal.tolist(), strict=True))
    return np.array([fold_of[g] for g in groups.tolist()])


def platt_fit(c: np.ndarray, y: np.ndarray):
    """Platt (1999) scaling by scikit-learn: unpenalised logistic regression on Platt's soft
    targets t₊ = (N₊+1)/(N₊+2), t₋ = 1/(N₋+2), each claim as a weighted 1-row and 0-row."""
    n1 = y.sum()
    n0 = y.size - n1
    t = np.where(y > 0.5, (n1 + 1) / (n1 + 2), 1 / (n0 + 2))
    x = np.r_[c, c][:, None]
    labels = np.r_[np.ones(c.size), np.zeros(c.size)]
    lr = LogisticRegression(C=np.inf, tol=1e-12, max_iter=5000).fit(
        x, labels, sample_weight=np.r_[t, 1 - t]
    )
    return lambda values: lr.predict_proba(np.asarray(values, dtype=float)[:, None])[:, 1]


def isotonic_fit(c: np.ndarray, y: np.ndarray):
    iso = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip").fit(c, y)
    return iso.predict


FITS = {"platt": platt_fit, "isotonic": isotonic_fit}


def out_of_fold(c: np.ndarray, y: np.ndarray, groups: np.ndarray, method: str) -> np.ndarray:
    """Each claim scored by a calibrator fitted on the other folds' answers only."""
    fold = answer_folds(groups)
    out = np.empty(c.size)
    for f in np.unique(fold):
        test = fold == f
        out[test] = FITS[method](c[~test], y[~test])(c[test])
    return out


def ece(confidence: np.ndarray, outcome: np.ndarray, bins: int = 10) -> float:
    """Equal-width bins (lo, hi], the first also taking 0, weighted by bin size (Guo et al. 2017)."""
    confidence, outcome = np.asarray(confidence, float), np.asarray(outcome, float)
    total = 0.0
    for b in range(bins):
        lo, hi = b / bins, (b + 1) / bins
        mask = (confidence > lo) & (confidence <= hi)
        if b == 0:
            mask |= confidence == 0.0
        if mask.any():
            gap = abs(confidence[mask].mean() - outcome[mask].mean())
            total += mask.sum() / confidence.size * gap
    return total


def crc_loss(conf: np.ndarray, supported: np.ndarray, lam: float) -> float:
    """One answer's loss: its retained unsupported claims over its claim count."""
    return float(np.sum((conf >= lam) & ~supported) / conf.size)


def crc_cut(confidences: list, supported: list, alpha: float, bound: float = 1.0) -> float:
    """λ̂ = inf{λ : n/(n+1)·R̂(λ) + B/(n+1) ≤ α} (Angelopoulos et al. 2024, eq. 4), evaluated
    literally over every candidate λ: 0, each confidence and the next float above it."""
    n = len(confidences)
    if n == 0:
        return math.inf
    flat = np.concatenate(confidences)
    candidates = np.unique(np.r_[flat, np.nextafter(flat, np.inf), min(0.0, flat.min())])
    for lam in candidates:
        risk = np.mean([crc_loss(c, s, lam) for c, s in zip(confidences, supported, strict=True)])
        if n / (n + 1) * risk + bound / (n + 1) <= alpha + 1e-12:
            return float(lam)
    return math.inf


def ppi(y: np.ndarray, judge_on_gold: np.ndarray, judge_on_rest: np.ndarray, alpha=0.05):
    """PPI++ by `ppi_py` (Angelopoulos, Duchi & Zrnic 2023): value, 95% interval and the
    power-tuning λ (recovered from the point estimate θ̂ = λ·mean f_N + mean(Y − λ f_n))."""
    from ppi_py import ppi_mean_ci, ppi_mean_pointestimate  # numba: 3 s to import, so here

    y, fg, fr = (np.asarray(v, dtype=float) for v in (y, judge_on_gold, judge_on_rest))
    value = float(np.squeeze(ppi_mean_pointestimate(y, fg, fr)))
    lo, hi = (float(np.squeeze(v)) for v in ppi_mean_ci(y, fg, fr, alpha=alpha))
    lam = (value - y.mean()) / (fr.mean() - fg.mean())
    return value, (lo, hi), lam


def lang_reiczigel(kprev, nprev, ksens, nsens, kspec, nspec, conf=0.95):
    """Line-by-line Python transcription of Reiczigel's R script CI4TruePrevalence (2013) as
    published with Lang & Reiczigel (2014), Prev Vet Med 113:13–22, eq. 16."""
    zcrit = norm.ppf((1 + conf) / 2)
    plus = 2
    nprev_, kprev_ = nprev + zcrit**2, kprev + zcrit**2 / 2
    nsens_, ksens_ = nsens + plus, ksens + plus / 2
    nspec_, kspec_ = nspec + plus, kspec + plus / 2
    obs_prev_, obs_sens_, obs_spec_ = kprev_ / nprev_, ksens_ / nsens_, kspec_ / nspec_
    est_prev_ = (obs_prev_ + obs_spec_ - 1) / (obs_sens_ + obs_spec_ - 1)
    youden_ = obs_sens_ + obs_spec_ - 1
    se_est = math.sqrt(
        obs_prev_ * (1 - obs_prev_) / nprev_
        + obs_sens_ * (1 - obs_sens_) / nsens_ * est_prev_**2
        + obs_spec_ * (1 - obs_spec_) / nspec_ * (1 - est_prev_) ** 2
    ) / abs(youden_)
    dprev = (
        2
        * zcrit**2
        * (
            est_prev_ * obs_sens_ * (1 - obs_sens_) / nsens_
            - (1 - est_prev_) * obs_spec_ * (1 - obs_spec_) / nspec_
        )
    )
    lcl = min(1, max(0, est_prev_ + dprev - zcrit * se_est))
    ucl = min(1, max(0, est_prev_ + dprev + zcrit * se_est))
    return lcl, ucl


def clustered_wilson(y, answer_ids, conf: float = 0.95) -> tuple[float, float]:
    """A claim share's interval with claims clustered by answer, by hand (one stratum).

    CR1 variance of the mean, V = G/(G−1)·Σ_g (Σ_{i∈g}(y_i − p))²/n² (Liang & Zeger 1986),
    never below the independent-claims V₀ = n/(n−1)·Σ(y_i − p)²/n²; Kish's effective size
    n_eff = p(1 − p)/V, scaled by (z/t_{G−1})² (Korn & Graubard 1998), into the Wilson formula
    (Dean & Pagano 2015). With a share of 0 or 1, n_eff = G. The interval holds p. One claim
    per answer: plain Wilson.
    """
    from scipy.stats import t as student_t

    y = np.asarray(y, dtype=float)
    n, p = y.size, float(np.mean(y))
    groups = {}
    for value, answer in zip(y, answer_ids, strict=True):
        groups.setdefault(answer, []).append(value - p)
    g = len(groups)
    if g == n:
        # one claim per answer: independent claims, today's Wilson interval exactly
        return wilson(int(round(float(np.sum(y)))), n)
    v = g / (g - 1) * sum(sum(d) ** 2 for d in groups.values()) / n**2
    v0 = n / (n - 1) * float(np.sum((y - p) ** 2)) / n**2
    n_eff = p * (1 - p) / max(v, v0) if 0 < p < 1 else g
    z = norm.ppf(0.5 + conf / 2)
    t = student_t.ppf(0.5 + conf / 2, g - 1)
    m = n_eff * (z / t) ** 2
    centre = (p + z**2 / (2 * m)) / (1 + z**2 / m)
    half = z * math.sqrt(p * (1 - p) / m + z**2 / (4 * m**2)) / (1 + z**2 / m)
    lo = 0.0 if p == 0 else min(max(centre - half, 0.0), p)
    hi = 1.0 if p == 1 else max(min(centre + half, 1.0), p)
    return lo, hi
