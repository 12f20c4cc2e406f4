"""The judge audit: each instrument (judge + model + prompt version) against gold — agreement,
kappa, sensitivity/specificity, naive, debiased (Rogan–Gladen) and PPI++ faithfulness, the
headline estimate, calibration and CRC, where it fails, and its canary pass rate."""

import math
from typing import NamedTuple

import numpy as np
import pandas as pd

from annotate.models import RiskCategory
from judges.models import Judge
from metrics import stats
from metrics.services.audit_design import (
    audited_unequally,
    design_rate,
    estimate_fields,
    fpc_on,
    named_strata,
)
from metrics.services.by_category import category_correction
from metrics.services.calibration import _calibration
from metrics.services.common import (
    SUPPORTED,
    VERDICTS,
    _codes,
    _newest_per_claim,
    _pct,
    _proportion,
)
from metrics.services.inputs import _Data

AGREEMENT_WARNING_BELOW = 0.80

HEADLINE_KEYS = {
    "gold_only": "gold_only_faithfulness",
    "rogan_gladen": "debiased_faithfulness",
    "ppi": "ppi_faithfulness",
}

_AUDIT_METHOD = (
    "positive = SUPPORTED; Wilson intervals for sensitivity and specificity; naive rate = "
    "share of the judge's parseable verdicts that are SUPPORTED; debiased by Rogan–Gladen "
    "(Lang–Reiczigel interval carrying the audit's uncertainty); PPI++ uses the judge's "
    "P(SUPPORTED), or its 0/1 verdict where it gave none; UNPARSEABLE responses are never "
    "counted as verdicts; calibration out of fold (5 folds grouped by answer)."
)
_CALIBRATION_PHRASE = "calibration out of fold (5 folds grouped by answer)."


class _Judged(NamedTuple):
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


def _judged(data: _Data, verdicts: pd.DataFrame) -> _Judged:
    newest = _newest_per_claim(verdicts)
    index = pd.Series(np.arange(data.claim_ids.size), index=data.claim_ids)
    newest = newest[newest["claim_id"].isin(data.claim_ids)]
    position = index.loc[newest["claim_id"].to_numpy()].to_numpy()
    gold_codes = data.claims["gold"].to_numpy()[position]
    return _Judged(
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


def _gold_weights(judged: _Judged) -> np.ndarray | None:
    """The audited claims' design weights 1/π within their stratum (None: equal weights)."""
    return None if judged.weights is None else judged.weights[judged.audited]


def _expansion(judged: _Judged) -> np.ndarray | None:
    """Each audited claim's share of the project under the design, for the figures that take
    one weight per claim rather than strata (κ, the confusion table's shares, the asymmetry):
    N_h · w_i / Σ_{j ∈ h} w_j (stratified: N_h/n_h; active: 1/π calibrated to N_h). None when
    every audited claim stands for the same number of claims (one stratum, equal weights):
    the plain counts are then the design's figures, today's to the last bit."""
    strata = judged.strata[judged.audited]
    w = _gold_weights(judged)
    if w is None:
        if np.unique(strata).size <= 1:
            return None
        w = np.ones(strata.size)
    codes, uniques = pd.factorize(strata)
    big_n = np.array([judged.sizes[code] for code in uniques], dtype=float)
    return big_n[codes] * w / np.bincount(codes, weights=w)[codes]


def _design_rate(judged: _Judged, outcome: np.ndarray) -> dict:
    """`design_rate` of a 0/1 outcome over the audited claims, under the audit's design."""
    audited = judged.audited
    return design_rate(
        outcome,
        judged.answer_ids[audited],
        judged.strata[audited],
        judged.sizes,
        weights=_gold_weights(judged),
        names=judged.names,
        census=judged.census is not None,
    )


def _fpc(judged: _Judged) -> bool:
    return fpc_on(judged.census is not None)


def _named(judged: _Judged, strata: np.ndarray):
    """Strata codes and sizes keyed by the strata's names, for the estimators' sentences."""
    return named_strata(strata, judged.sizes, judged.names)


def _identity(judge: Judge, verdicts: pd.DataFrame) -> dict:
    """Which instrument: the model, prompt version and backend of its newest verdict."""
    first = verdicts.iloc[-1] if len(verdicts) else None
    model = first["model"] if first is not None else judge.model
    prompt_version = first["prompt_version"] if first is not None else judge.prompt_version
    backend = first["backend"] if first is not None else judge.backend
    return {
        "name": judge.name,
        "backend": backend,
        "model": model,
        "prompt_version": prompt_version,
        "instrument": f"{judge.name} · {model or backend} · prompt {prompt_version}",
    }


def _sample(
    data: _Data, judged: _Judged, verdicts: pd.DataFrame, gold_sources: pd.Series, stale: int
) -> dict:
    """How many claims were judged and audited, and where the audit's gold came from."""
    audited_ids = data.claim_ids[judged.position][judged.audited]
    sources = gold_sources.reindex(audited_ids).value_counts()
    return {
        "n_judged": judged.n_judged,
        "n_audited": judged.n_audited,
        "unparseable": int((verdicts["verdict"] == "UNPARSEABLE").sum()),
        "stale_verdicts": stale,
        "gold_sources": {
            "unanimous": int(sources.get("unanimous", 0)),
            "adjudicated": int(sources.get("adjudicated", 0)),
        },
    }


def _agreement_warning(n_audited: int, agreement: float) -> str | None:
    if n_audited and agreement < AGREEMENT_WARNING_BELOW:
        return (
            f"Agreement with gold is {_pct(agreement)}, below 80%: the judge is not measuring "
            "this project's definition. Do not use its verdicts as figures without the "
            "corrections below, and consider revising the prompt."
        )
    return None


def _asymmetry(matrix: np.ndarray) -> dict:
    """The two ways the judge disagrees with gold, each over the gold claims it could happen to."""
    over = int(matrix[1:, 0].sum())
    under = int(matrix[0, 1:].sum())
    gold_pos, gold_neg = int(matrix[0].sum()), int(matrix[1:].sum())
    return {
        "judge_supported_gold_not": {
            "count": over,
            "rate": over / gold_neg if gold_neg else math.nan,
            "of": "gold not SUPPORTED",
            "of_n": gold_neg,
        },
        "gold_supported_judge_not": {
            "count": under,
            "rate": under / gold_pos if gold_pos else math.nan,
            "of": "gold SUPPORTED",
            "of_n": gold_pos,
        },
    }


def _asymmetry_weighted(counts: np.ndarray, shares: np.ndarray) -> dict:
    """`_asymmetry` with the counts as audited and the rates estimated under the design."""
    out = _asymmetry(counts)
    over, under = float(shares[1:, 0].sum()), float(shares[0, 1:].sum())
    neg, pos = float(shares[1:].sum()), float(shares[0].sum())
    out["judge_supported_gold_not"]["rate"] = over / neg if neg else math.nan
    out["gold_supported_judge_not"]["rate"] = under / pos if pos else math.nan
    return out


def _design_block(est: stats.DesignEstimate, **extra) -> dict:
    return {"value": est.value, "ci": est.ci, **extra, **estimate_fields(est)}


def _agreement(judged: _Judged, human_kappa: float) -> tuple[dict, dict]:
    """Confusion, agreement, kappa, asymmetry and sensitivity/specificity on the audited claims
    (agreement, sensitivity and specificity clustered by answer and stratified by the design);
    also the design estimates of sensitivity/specificity the debiasing needs."""
    names = np.asarray(VERDICTS, dtype=object)
    audited = judged.audited
    g_a, j_a = names[judged.gold_codes[audited]], names[judged.judge_codes[audited]]
    n_audited = judged.n_audited
    matrix = stats.confusion(g_a, j_a).to_numpy()
    ids, strata = judged.answer_ids[audited], judged.strata[audited]
    w = _gold_weights(judged)
    agree_each = judged.gold_codes[audited] == judged.judge_codes[audited]
    agreement_rate = _design_rate(judged, agree_each)
    agreement = agreement_rate["value"] if n_audited else math.nan
    gold01 = (judged.gold_codes[audited] == SUPPORTED).astype(float)
    judge01 = (judged.judge_codes[audited] == SUPPORTED).astype(float)
    named, sizes = _named(judged, strata)
    sesp = stats.design_sensitivity_specificity(
        gold01, judge01, ids, named, sizes, weights=w, fpc=_fpc(judged)
    )
    # Kappa, the table's shares and the asymmetry: clustered by answer; where audited claims
    # stand for different numbers of claims (strata sampled unequally, the active queue's π),
    # each weighted by its share of the project.
    e = _expansion(judged)
    kappa = stats.design_kappa(g_a, j_a, ids, weights=e) if n_audited >= 2 else None
    se, sp = sesp["sensitivity"], sesp["specificity"]
    confusion = {
        "labels": list(VERDICTS),
        "rows": "gold",
        "columns": "judge",
        "matrix": matrix.tolist(),
    }
    if e is None:
        kappa_value = stats.cohen_kappa(g_a, j_a) if n_audited else math.nan
        asymmetry = _asymmetry(matrix)
    else:
        shares = np.zeros(matrix.shape)
        codes_g, codes_j = judged.gold_codes[audited], judged.judge_codes[audited]
        np.add.at(shares, (codes_g, codes_j), e / e.sum())
        confusion["estimated_shares"] = shares.tolist()
        confusion["estimated_shares_method"] = (
            "cell shares of the project estimated under the audit's design (each audited claim "
            "weighted by its share of the project); the matrix above counts the audited claims "
            "as drawn"
        )
        kappa_value = kappa.value if kappa is not None else math.nan
        asymmetry = _asymmetry_weighted(matrix, shares)
    fields = {
        "confusion": confusion,
        "agreement": agreement,
        "agreement_ci": agreement_rate["ci"] if n_audited else (math.nan, math.nan),
        "agreement_design_effect": agreement_rate["design_effect"],
        "agreement_warning": _agreement_warning(n_audited, agreement),
        "kappa": kappa_value,
        "kappa_ci": kappa.ci if n_audited >= 2 else (math.nan, math.nan),
        "kappa_design_effect": kappa.design_effect if n_audited >= 2 else math.nan,
        "human_kappa_ceiling": human_kappa,
        "asymmetry": asymmetry,
        "sensitivity": _design_block(se, n=se.n),
        "specificity": _design_block(sp, n=sp.n),
        "youden_j": sesp["youden_j"],
    }
    return fields, sesp


def _faithfulness(judged: _Judged, sesp: dict) -> dict:
    """Naive, debiased, PPI++ and gold-only faithfulness, and which one is the headline; each
    clustered by answer and stratified by the audit's design (`metrics.stats.design`)."""
    n_judged, n_audited, audited = judged.n_judged, judged.n_audited, judged.audited
    judged_supported = int(np.sum(judged.judge_codes == SUPPORTED))
    gold01 = (judged.gold_codes[audited] == SUPPORTED).astype(float)
    judge01 = (judged.judge_codes == SUPPORTED).astype(float)
    ids_gold, strata_gold = judged.answer_ids[audited], judged.strata[audited]
    w = _gold_weights(judged)
    if n_judged and sesp["sensitivity"].n and sesp["specificity"].n:
        named, sizes = _named(judged, strata_gold)
        rg = stats.design_rogan_gladen(
            judge01,
            judged.answer_ids,
            gold01,
            judge01[audited],
            ids_gold,
            named,
            sizes,
            weights_gold=w,
            fpc=_fpc(judged),
        )
    else:
        rg = None
    debiased_value = (
        stats.rogan_gladen(
            judged_supported / n_judged, sesp["sensitivity"].value, sesp["specificity"].value
        )
        if n_judged
        else math.nan
    )
    debiased_ci = rg.ci if rg is not None and math.isfinite(debiased_value) else (math.nan,) * 2
    # The judge's P(SUPPORTED) where it gave one, else its 0/1 verdict.
    judge_score = np.where(np.isnan(judged.confidence), judge01, judged.confidence)
    ppi = _ppi(judged, gold01, judge_score)
    gold_only = _design_rate(judged, gold01)
    headline = stats.headline_estimate(
        {"value": gold_only["value"], "ci": gold_only["ci"]},
        {"value": debiased_value, "ci": debiased_ci},
        {"value": ppi.value, "ci": ppi.ci},
        youden_j=sesp["youden_j"],
    )
    lam = ppi.extra.get("lambda")
    debiased = {
        "value": debiased_value,
        "ci": debiased_ci,
        "method": "Rogan–Gladen, Lang–Reiczigel adjusted interval (95%)",
    }
    if rg is not None:
        debiased.update(estimate_fields(rg))
    out = {
        "naive_faithfulness": judged_supported / n_judged if n_judged else math.nan,
        "naive_faithfulness_detail": _proportion(judged_supported, n_judged),
        "debiased_faithfulness": debiased,
        "ppi_faithfulness": {
            "value": ppi.value,
            "ci": ppi.ci,
            "lambda": lam if not isinstance(lam, dict) else _stratum_lambdas(lam),
            "method": "PPI++ (power-tuned prediction-powered inference, 95%)",
            **estimate_fields(ppi),
        },
        "gold_only_faithfulness": {
            "value": gold_only["value"],
            "ci": gold_only["ci"],
            "n": n_audited,
            "method": "audit sample alone, Wilson interval (95%)",
            **{k: gold_only[k] for k in ("design_effect", "answers", "strata", "unseen_share")},
            "interval_method": gold_only["interval_method"],
        },
        "headline_estimate": HEADLINE_KEYS.get(headline["choice"]),
        "headline_reason": headline["reason"],
    }
    for key, n in (
        ("debiased_faithfulness", n_audited),
        ("ppi_faithfulness", n_audited),
        ("gold_only_faithfulness", n_audited),
    ):
        out[key]["method"] = _with_design(out[key]["method"], {"n": n, **out[key]})
    return out


def _ppi(judged: _Judged, gold01: np.ndarray, judge_score: np.ndarray) -> stats.DesignEstimate:
    """PPI++ under the audit's design: stratified and clustered (`design_ppi_mean`), or, when
    the labels were drawn by the active queue, active inference within the design strata with
    each label weighted by 1/π (`stratified_active_ppi_mean`)."""
    audited = judged.audited
    strata, _ = named_strata(judged.strata, None, judged.names)
    if judged.weights is None:
        return stats.design_ppi_mean(
            gold01,
            judge_score[audited],
            judge_score[~audited],
            judged.answer_ids[audited],
            judged.answer_ids[~audited],
            strata[audited],
            strata[~audited],
        )
    y = np.zeros(judged.n_judged)
    y[audited] = gold01
    return stats.stratified_active_ppi_mean(
        y,
        audited,
        judge_score,
        judged.weights,
        strata=strata,
        cluster=judged.answer_ids,
        census=judged.census,
    )


def _with_design(method: str, block: dict) -> str:
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


def _stratum_lambdas(lambdas: dict) -> float | dict:
    """One stratum: its λ, as before; several: λ per stratum code."""
    if len(lambdas) == 1:
        return next(iter(lambdas.values()))
    return {str(key): value for key, value in lambdas.items()}


def _calibration_fields(
    data: _Data, judged: _Judged, grounded_links: pd.DataFrame
) -> tuple[dict, dict]:
    audited = judged.audited
    calibration, crc_inputs = _calibration(
        confidence=judged.confidence[audited],
        supported=(judged.gold_codes[audited] == SUPPORTED).astype(float),
        answer_ids=judged.answer_ids[audited],
        claim_ids=data.claim_ids[judged.position][audited],
        all_confidence=judged.confidence,
        grounded_links=grounded_links,
        facts=data.facts,
    )
    fields = {
        "ece": calibration["ece"],
        "calibration": calibration["detail"],
        "frontier": calibration["frontier"],
        "frontier_not_computed": calibration["detail"]["not_computed"],
        "crc": calibration["crc"],
    }
    if audited.any() and audited_unequally(judged):
        _not_under_design(
            fields, NOT_UNDER_DESIGN if judged.weights is not None else NOT_UNDER_STRATA
        )
    return fields, crc_inputs


NOT_UNDER_DESIGN = (
    "not shown: the labels were drawn by the active queue with unequal probabilities, and this "
    "figure has no design-weighted version yet (unweighted, it would lean toward the claims the "
    "judge was unsure of, which the queue oversamples)"
)


NOT_UNDER_STRATA = (
    "not shown: the design strata were audited at different rates, and this figure has no "
    "design-weighted version yet (unweighted, it would over-represent the strata audited most)"
)


def _not_under_design(fields: dict, reason: str = NOT_UNDER_DESIGN) -> None:
    """Calibration, ECE, the frontier and conformal risk control under an active design, or
    strata audited at different rates: not shown, with the reason (issue 33) — each is an unweighted average over the audited claims,
    and CRC's guarantee needs them exchangeable with the rest, which unequal π breaks."""
    fields["ece"] = dict.fromkeys(fields["ece"], None)
    fields["calibration"] = {**fields["calibration"], "not_computed": reason}
    fields["frontier"] = []
    fields["frontier_not_computed"] = reason
    fields["crc"] = {**fields["crc"], "not_computed": reason}


def _failures(data: _Data, judged: _Judged) -> dict:
    """Agreement per claim tag and per risk category, worst first: each group's audited
    claims weighted by their share of the project under the design (`_expansion`; the plain
    share under a simple random sample), so a group the active queue oversampled where the
    judge is unsure is not made to look worse than it is."""
    position, audited = judged.position, judged.audited
    failures = {"by_tag": [], "by_risk_category": []}
    tag_masks = {tag: mask[position][audited] for tag, mask in data.tag_masks.items()}
    risk = data.claims["risk_category"].to_numpy()[position][audited]
    agree_each = judged.gold_codes[audited] == judged.judge_codes[audited]
    weights = _expansion(judged)
    for key, groups in (
        ("by_tag", tag_masks.items()),
        ("by_risk_category", ((cat, risk == cat) for cat in RiskCategory.values)),
    ):
        for name, mask in groups:
            n = int(mask.sum())
            if n:
                agreement = (
                    np.mean(agree_each[mask])
                    if weights is None
                    else np.average(agree_each[mask], weights=weights[mask])
                )
                failures[key].append({"group": name, "n": n, "agreement": float(agreement)})
        failures[key].sort(key=lambda row: (row["agreement"], -row["n"]))
    return failures


def _canary(canaries: pd.DataFrame, model, prompt_version) -> dict:
    """The share of the instrument's canaries (claims absent from their pile) it calls
    NOT_IN_PILE, newest parseable verdict per canary."""
    canary = canaries[(canaries["model"] == model) & (canaries["prompt_version"] == prompt_version)]
    canary = canary[canary["verdict"].isin(VERDICTS)].drop_duplicates("canary_id", keep="last")
    canary_pass = _proportion(int((canary["verdict"] == "NOT_IN_PILE").sum()), len(canary))
    return {"pass_rate": canary_pass, "canaries": len(canary)}


def _audit_method(block: dict, stale: int) -> str:
    method = (
        f"Audit of {block['instrument']} on {block['n_audited']} gold claims "
        f"({block['gold_sources']['unanimous']} unanimous, "
        f"{block['gold_sources']['adjudicated']} adjudicated) of {block['n_judged']} judged "
        f"claims; {_AUDIT_METHOD}"
    )
    sens = block["sensitivity"]
    if sens.get("answers") and (sens["answers"] != sens.get("n") or (sens.get("strata") or 1) > 1):
        strata = sens.get("strata") or 1
        method += (
            " Sensitivity, specificity and agreement are clustered by answer"
            + (f" and stratified by {strata} design strata" if strata > 1 else "")
            + "."
        )
    if block["calibration"]["not_computed"]:
        method = method.replace(
            _CALIBRATION_PHRASE,
            "Calibration, the frontier and conformal risk control: "
            + block["calibration"]["not_computed"]
            + ".",
        )
    splits = block["crc"].get("splits")
    if splits:
        method += " Conformal risk control: " + splits["method"]
    if stale:
        method += (
            f" {stale} verdict{'s' if stale != 1 else ''} made on a claim's previous text "
            "(edited, split or merged since) left out."
        )
    return method


def _instrument_block(
    *,
    data: _Data,
    judge: Judge,
    verdicts: pd.DataFrame,
    canaries: pd.DataFrame,
    grounded_links: pd.DataFrame,
    gold_sources: pd.Series,
    human_kappa: float,
    stale: int = 0,
) -> dict:
    """The audit of one instrument (judge + model + prompt version) against gold.

    `verdicts` holds no stale verdict (made on a claim's previous text); `stale` is how many
    were left out, for the method string.
    """
    identity = _identity(judge, verdicts)
    judged = _judged(data, verdicts)
    agreement, sesp = _agreement(judged, human_kappa)
    faithfulness = _faithfulness(judged, sesp)
    calibration, crc_inputs = _calibration_fields(data, judged, grounded_links)
    block = {
        **identity,
        **_sample(data, judged, verdicts, gold_sources, stale),
        **agreement,
        **faithfulness,
        **calibration,
        "failures": _failures(data, judged),
        "canary": _canary(canaries, identity["model"], identity["prompt_version"]),
        "_crc_inputs": crc_inputs,
        "_judged": judged,
    }
    block["method"] = _audit_method(block, stale)
    category_correction(block, data=data, judged=judged, headline_keys=HEADLINE_KEYS)
    return block
