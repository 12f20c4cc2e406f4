"""The judge's verdicts aligned with the report's claims and the audit's design: what every
estimator of the judge audit reads (`metrics.services.estimators`, `judge_audit`)."""

import math
from typing import NamedTuple

import numpy as np
import pandas as pd

from metrics.services.audit_design import design_rate, fpc_on, named_strata
from metrics.services.common import _codes, _newest_per_claim
from metrics.services.inputs import _Data


class Judged(NamedTuple):
    """The instrument's newest parseable verdict per claim, aligned with the report's claims."""

    position: np.ndarray  # index of each judged claim in `_Data.claims`
    judge_codes: np.ndarray
    confidence: np.ndarray
    gold_codes: np.ndarray  # −1 where the claim has no gold
    answer_ids: np.ndarray
    audited: np.ndarray  # judged claims that have gold
    strata: np.ndarray  # design stratum code of each judged claim
    sizes: dict  # N_h: the project's claims per design stratum
    weights: np.ndarray | None = None  # design weight 1/π of each judged claim (active design)
    census: np.ndarray | None = None  # judged claims in a stratum known exactly (mixed design)
    names: list | None = None  # the design strata's names, by code

    @property
    def n_judged(self) -> int:
        return int(self.judge_codes.size)

    @property
    def n_audited(self) -> int:
        return int(self.audited.sum())


def judged_of(data: _Data, verdicts: pd.DataFrame) -> Judged:
    newest = _newest_per_claim(verdicts)
    index = pd.Series(np.arange(data.claim_ids.size), index=data.claim_ids)
    newest = newest[newest["claim_id"].isin(data.claim_ids)]
    position = index.loc[newest["claim_id"].to_numpy()].to_numpy()
    gold_codes = data.claims["gold"].to_numpy()[position]
    return Judged(
        position=position,
        judge_codes=_codes(newest["verdict"]),
        confidence=newest["confidence"].to_numpy(dtype=float),
        gold_codes=gold_codes,
        answer_ids=data.claims["answer_id"].to_numpy()[position],
        audited=gold_codes >= 0,
        strata=data.design.stratum[position],
        sizes=data.design.sizes(),
        weights=None if data.design.weight is None else data.design.weight[position],
        census=None if data.design.census is None else data.design.census[position],
        names=data.design.names,
    )


def gold_weights(judged: Judged) -> np.ndarray | None:
    """The audited claims' design weights 1/π within their stratum (None: equal weights)."""
    return None if judged.weights is None else judged.weights[judged.audited]


def expansion(judged: Judged) -> np.ndarray | None:
    """Each audited claim's share of the project under the design, for the figures that take
    one weight per claim rather than strata (κ, the confusion table's shares, the asymmetry):
    N_h · w_i / Σ_{j ∈ h} w_j (stratified: N_h/n_h; active: 1/π calibrated to N_h). None when
    every audited claim stands for the same number of claims (one stratum, equal weights):
    the plain counts are then the design's figures, today's to the last bit."""
    strata = judged.strata[judged.audited]
    w = gold_weights(judged)
    if w is None:
        if np.unique(strata).size <= 1:
            return None
        w = np.ones(strata.size)
    codes, uniques = pd.factorize(strata)
    big_n = np.array([judged.sizes[code] for code in uniques], dtype=float)
    return big_n[codes] * w / np.bincount(codes, weights=w)[codes]


def judged_rate(judged: Judged, outcome: np.ndarray) -> dict:
    """`design_rate` of a 0/1 outcome over the audited claims, under the audit's design."""
    audited = judged.audited
    return design_rate(
        outcome,
        judged.answer_ids[audited],
        judged.strata[audited],
        judged.sizes,
        weights=gold_weights(judged),
        names=judged.names,
        census=judged.census is not None,
    )


def fpc(judged: Judged) -> bool:
    return fpc_on(judged.census is not None)


def named(judged: Judged, strata: np.ndarray):
    """Strata codes and sizes keyed by the strata's names, for the estimators' sentences."""
    return named_strata(strata, judged.sizes, judged.names)


def with_design(method: str, block: dict) -> str:
    """The figure's method, with how its interval met the design when it is not the simple
    one (several claims per answer or several strata)."""
    answers, n, strata = block.get("answers"), block.get("n"), block.get("strata") or 1
    if not answers or (answers == n and strata <= 1):
        return method
    text = f"{method}; clustered by answer, {answers} answers"
    if strata > 1:
        text += f"; stratified by design stratum, {strata} strata (weights N_h/N)"
    deff = block.get("design_effect")
    if deff is not None and math.isfinite(deff):
        text += f"; design effect {deff:.2f}"
    return text
