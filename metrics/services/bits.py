"""Grounding bits audited like an instrument (issue 18): on gold claims, how well the bits a
pile adds to a claim separate supported from unsupported claims.

A grounding-bits judge (backend "bits") is an ordinary judge: its verdicts (SUPPORTED where
bits > threshold, else NOT_IN_PILE) and its confidence (1 / (1 + 2**-bits)) go through the
report's judge audit unchanged — sensitivity/specificity, Rogan–Gladen, PPI++, calibration
(Platt, isotonic, out of fold), the frontier and the conformal cut are the `judge` block of a
report computed for that judge. This module adds what only bits have, as the report's
`grounding_bits` block (present only for such a judge):

- the bits' AUC, supported (gold SUPPORTED) against unsupported (gold CONTRADICTED or
  NOT_IN_PILE), with DeLong's interval (`metrics.stats.ranking.auc_delong`);
- the share of unsupported claims with non-positive bits (the seed's "94% of hallucinations")
  and of supported claims with positive bits, Wilson intervals;
- sensitivity and specificity of the threshold rule, Wilson intervals;
- mean bits by gold verdict; calibration of the bits into P(SUPPORTED) (ECE raw, Platt and
  isotonic out of fold, 5 folds grouped by answer — the calibration code path of the report);
- a histogram of the bits by gold verdict, bins right-closed and aligned on 0, for the panel.

The newest instrument (model × prompt version) of the judge is the one described, as for the
report's `judge` block; each claim's newest verdict with bits counts.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from annotate.vocabulary import VERDICTS, Verdict
from judges.models import Judge
from metrics import selectors
from metrics.services.calibration import _ece_and_bins, _recalibrated
from metrics.services.common import _newest_per_claim, _proportion
from metrics.services.inputs import _Data
from metrics.stats.ranking import auc_delong

HISTOGRAM_BINS = 12
_NICE = (1.0, 2.0, 2.5, 5.0, 10.0)

METHOD = (
    "Grounding bits = log2 p(claim | question, pile) − log2 p(claim | question), summed over the "
    "claim's tokens; supported = gold SUPPORTED, unsupported = gold CONTRADICTED or NOT_IN_PILE; "
    "AUC by midranks with DeLong's interval (logit scale; Wilson of min(m, n) at 0 or 1), claims "
    "taken as independent; shares with Wilson intervals; sensitivity = share of supported with "
    "bits above the threshold, specificity = share of unsupported at or below it; calibration "
    "of 1/(1 + 2^−bits) out of fold (5 folds grouped by answer); each claim's newest verdict "
    "with bits of the newest instrument counts, UNPARSEABLE never."
)


def _auc_block(supported_bits: np.ndarray, unsupported_bits: np.ndarray) -> dict:
    """The bits' AUC as the block has always written it (DeLong, logit interval)."""
    auc = auc_delong(supported_bits, unsupported_bits)
    return {
        "auc": auc.value,
        "se": auc.se,
        "lo": auc.lower,
        "hi": auc.upper,
        "m": auc.positives,
        "n": auc.negatives,
    }


def _step(span: float, bins: int) -> float:
    raw = span / bins if span > 0 else 1.0
    power = 10.0 ** math.floor(math.log10(raw))
    return next(n * power for n in _NICE if n * power >= raw - 1e-12)


def histogram_edges(values: np.ndarray, bins: int = HISTOGRAM_BINS) -> np.ndarray:
    """Bin edges of round width covering `values` and 0, with 0 an edge."""
    lo = min(float(values.min()), 0.0) if values.size else -1.0
    hi = max(float(values.max()), 0.0) if values.size else 1.0
    width = _step(hi - lo, bins)
    start = math.floor(lo / width)
    stop = math.ceil(hi / width)
    if stop == start:
        stop += 1
    if lo == start * width and values.size and lo < 0:
        start -= 1  # right-closed bins: the lowest value needs a bin below it
    return np.arange(start, stop + 1) * width


def histogram_counts(values: np.ndarray, edges: np.ndarray) -> list[int]:
    """Counts in right-closed bins (edges[i], edges[i+1]]: 0 falls in the bin left of zero,
    with the other non-positive bits."""
    index = np.searchsorted(edges, values, side="left") - 1
    index = np.clip(index, 0, edges.size - 2)
    return np.bincount(index, minlength=edges.size - 1).tolist()


def _newest_bits(frame: pd.DataFrame, data: _Data) -> pd.DataFrame:
    newest = frame.drop_duplicates("claim_id", keep="last")
    claims = data.claims[["claim_id", "answer_id", "gold"]]
    return newest.merge(claims, on="claim_id", how="inner").sort_values("claim_id", kind="stable")


def _empty(judge: Judge, model: str, prompt_version: str, threshold: float) -> dict:
    return {
        "name": judge.name,
        "model": model,
        "prompt_version": prompt_version,
        "threshold": threshold,
        "n_scored": 0,
        "n_audited": 0,
        "method": METHOD,
    }


def grounding_bits_block(*, data: _Data, judge: Judge, model: str, prompt_version: str) -> dict:
    """The `grounding_bits` block of the report for a grounding-bits judge's instrument."""
    threshold = selectors.judge_bits_threshold(
        judge=judge, model=model, prompt_version=prompt_version
    )
    frame = selectors.judge_bits_columns(judge=judge)
    frame = frame[(frame["model"] == model) & (frame["prompt_version"] == prompt_version)]
    rows = _newest_bits(frame, data)
    if rows.empty:
        return _empty(judge, model, prompt_version, threshold)
    bits = rows["bits"].to_numpy(dtype=float)
    gold = rows["gold"].to_numpy()
    audited = gold >= 0
    b, g = bits[audited], gold[audited]
    supported = g == Verdict.SUPPORTED.code
    pos, neg = b[supported], b[~supported]
    edges = histogram_edges(b if b.size else bits)
    block = _empty(judge, model, prompt_version, threshold)
    block.update(
        n_scored=int(bits.size),
        n_audited=int(b.size),
        auc=_auc_block(pos, neg),
        unsupported_non_positive=_proportion(int((neg <= 0).sum()), neg.size),
        supported_positive=_proportion(int((pos > 0).sum()), pos.size),
        sensitivity=_proportion(int((pos > threshold).sum()), pos.size),
        specificity=_proportion(int((neg <= threshold).sum()), neg.size),
        mean_bits={
            **{
                v.value: float(b[g == v.code].mean()) if (g == v.code).any() else math.nan
                for v in VERDICTS
            },
            "unsupported": float(neg.mean()) if neg.size else math.nan,
        },
        calibration=_bits_calibration(rows[audited], supported),
        with_judge=with_judge_block(judge, rows[audited]),
        histogram={
            "edges": edges.tolist(),
            "width": float(edges[1] - edges[0]),
            "counts": {v.value: histogram_counts(b[g == v.code], edges) for v in VERDICTS},
            "zero_index": int(np.flatnonzero(np.isclose(edges, 0.0))[0]),
        },
    )
    return block


def _bits_calibration(rows: pd.DataFrame, supported: np.ndarray) -> dict:
    c = rows["confidence"].to_numpy(dtype=float)
    y = supported.astype(float)
    groups = rows["answer_id"].to_numpy()
    enough = c.size >= 2 and np.unique(groups).size >= 2 and 0 < y.sum() < y.size
    ece, _ = _ece_and_bins(_recalibrated(c, y, groups, enough), y)
    return {"ece": ece, "n": int(c.size), "enough": bool(enough)}


# --- two instruments together ---------------------------------------------------------------
COMBINATION_FOLDS = 5

COMBINATION_METHOD = (
    "Gold claims scored by both instruments (each one's newest parseable verdict); the "
    "combination is a logistic regression of gold SUPPORTED on the judge's P(SUPPORTED) (its 0/1 "
    "verdict where it gave none) and the bits, features standardised within each training fold, "
    "cross-fitted over 5 folds grouped by answer (no claim is predicted by a model that saw its "
    "answer); each instrument alone is the same logistic model on its one feature. Offered as a "
    "third instrument only when its out-of-fold log loss is below both instruments' alone."
)


def combine_out_of_fold(judge_score, bits, outcome, groups, folds: int = COMBINATION_FOLDS) -> dict:
    """Out-of-fold log loss, Brier score and AUC of the judge alone, the bits alone and both
    (logistic regressions, cross-fitted with folds grouped by `groups`); `offered` when the
    combination's log loss beats both."""
    # scikit-learn here and not at the top: importing it costs 1.4 s (python -X importtime),
    # paid by every web and worker start-up though only this panel's refit needs it
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import brier_score_loss, log_loss, roc_auc_score
    from sklearn.model_selection import GroupKFold
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    x = np.column_stack([np.asarray(judge_score, float), np.asarray(bits, float)])
    y = np.asarray(outcome, dtype=int)
    g = np.asarray(groups)
    k = min(folds, np.unique(g).size)
    out = {"n": int(y.size), "folds": int(k), "offered": False}
    if k < 2 or y.min() == y.max():
        return out
    splits = list(GroupKFold(n_splits=k).split(x, y, g))
    if any(np.unique(y[train]).size < 2 for train, _ in splits):
        return out
    for name, columns in (("judge", [0]), ("bits", [1]), ("combined", [0, 1])):
        p = np.empty(y.size)
        for train, test in splits:
            model = make_pipeline(StandardScaler(), LogisticRegression())
            model.fit(x[train][:, columns], y[train])
            p[test] = model.predict_proba(x[test][:, columns])[:, 1]
        out[name] = {
            "log_loss": float(log_loss(y, p, labels=[0, 1])),
            "brier": float(brier_score_loss(y, p)),
            "auc": float(roc_auc_score(y, p)),
        }
    best_alone = min(out["judge"]["log_loss"], out["bits"]["log_loss"])
    out["offered"] = bool(out["combined"]["log_loss"] < best_alone)
    return out


def _other_judge_rows(judge: Judge, rows: pd.DataFrame) -> tuple[Judge | None, pd.DataFrame]:
    """The project's prompted judge whose newest instrument scored most of these gold claims,
    with its verdicts merged on them."""
    best, best_rows = None, pd.DataFrame()
    for other in selectors.judges_for_project(project=judge.project):
        if other.pk == judge.pk or other.backend == "bits":
            continue
        verdicts = selectors.judge_verify_columns(judge=other)
        if verdicts.empty:
            continue
        newest_key = verdicts.iloc[-1][["model", "prompt_version"]].tolist()
        mine = verdicts[
            (verdicts["model"] == newest_key[0]) & (verdicts["prompt_version"] == newest_key[1])
        ]
        newest = _newest_per_claim(mine)[["claim_id", "verdict", "confidence"]]
        merged = rows.merge(newest, on="claim_id", suffixes=("", "_judge"))
        if len(merged) > len(best_rows):
            best, best_rows = other, merged
    return best, best_rows


def with_judge_block(judge: Judge, audited_rows: pd.DataFrame) -> dict | None:
    """Where a prompted judge and these grounding bits both scored gold claims: where they
    disagree (by gold verdict) and the cross-fitted combination."""
    other, rows = _other_judge_rows(judge, audited_rows)
    if other is None or rows.empty:
        return None
    gold = rows["gold"].to_numpy()
    bits_says = rows["verdict"].to_numpy() == Verdict.SUPPORTED
    judge_says = rows["verdict_judge"].to_numpy() == Verdict.SUPPORTED
    disagreements = {}
    for verdict in VERDICTS:
        at = gold == verdict.code
        disagreements[verdict.value] = {
            "claims": int(at.sum()),
            "bits_only_supported": int((at & bits_says & ~judge_says).sum()),
            "judge_only_supported": int((at & judge_says & ~bits_says).sum()),
            "both_supported": int((at & bits_says & judge_says).sum()),
            "neither": int((at & ~bits_says & ~judge_says).sum()),
        }
    score = rows["confidence_judge"].to_numpy(dtype=float)
    score = np.where(np.isnan(score), judge_says.astype(float), score)
    combination = combine_out_of_fold(
        score,
        rows["bits"].to_numpy(dtype=float),
        gold == Verdict.SUPPORTED.code,
        rows["answer_id"].to_numpy(),
    )
    return {
        "judge": other.name,
        "n": int(len(rows)),
        "disagree": int((bits_says != judge_says).sum()),
        "disagreements": disagreements,
        "combination": combination,
        "method": COMBINATION_METHOD,
    }
