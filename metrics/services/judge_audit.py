"""The judge audit: each instrument (judge + model + prompt version) against gold — agreement,
kappa, sensitivity/specificity, naive, debiased (Rogan–Gladen) and PPI++ faithfulness, the
headline estimate, calibration and CRC, where it fails, and its canary pass rate."""

import math

import numpy as np
import pandas as pd

from annotate.models import RiskCategory
from annotate.vocabulary import UNPARSEABLE, VERDICT_VALUES, Verdict
from judges.models import Judge
from metrics import stats
from metrics.services import estimators
from metrics.services.audit_design import (
    audited_unequally,
    estimate_fields,
)
from metrics.services.by_category import category_correction
from metrics.services.calibration import _calibration, confidence_counts
from metrics.services.common import _pct, _proportion
from metrics.services.inputs import _Data
from metrics.services.judge_heldout import heldout_audit
from metrics.services.judged import (
    Judged,
    expansion,
    fpc,
    gold_weights,
    judged_of,
    judged_rate,
    named,
    with_design,
)

AGREEMENT_WARNING_BELOW = 0.80


_AUDIT_METHOD = (
    "positive = SUPPORTED; Wilson intervals for sensitivity and specificity; naive rate = "
    "share of the judge's parseable verdicts that are SUPPORTED; debiased by Rogan–Gladen "
    "(Lang–Reiczigel interval carrying the audit's uncertainty); PPI++ uses the judge's "
    "P(SUPPORTED), or its 0/1 verdict where it gave none; UNPARSEABLE responses are never "
    "counted as verdicts; calibration out of fold (5 folds grouped by answer)."
)
_CALIBRATION_PHRASE = "calibration out of fold (5 folds grouped by answer)."


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
    data: _Data, judged: Judged, verdicts: pd.DataFrame, gold_sources: pd.Series, stale: int
) -> dict:
    """How many claims were judged and audited, and where the audit's gold came from."""
    audited_ids = data.claim_ids[judged.position][judged.audited]
    sources = gold_sources.reindex(audited_ids).value_counts()
    return {
        "n_judged": judged.n_judged,
        "n_audited": judged.n_audited,
        "unparseable": int((verdicts["verdict"] == UNPARSEABLE).sum()),
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


def _agreement(judged: Judged, human_kappa: float) -> tuple[dict, dict]:
    """Confusion, agreement, kappa, asymmetry and sensitivity/specificity on the audited claims
    (agreement, sensitivity and specificity clustered by answer and stratified by the design);
    also the design estimates of sensitivity/specificity the debiasing needs."""
    names = np.asarray(VERDICT_VALUES, dtype=object)
    audited = judged.audited
    g_a, j_a = names[judged.gold_codes[audited]], names[judged.judge_codes[audited]]
    n_audited = judged.n_audited
    matrix = stats.confusion(g_a, j_a).to_numpy()
    ids, strata = judged.answer_ids[audited], judged.strata[audited]
    w = gold_weights(judged)
    agree_each = judged.gold_codes[audited] == judged.judge_codes[audited]
    agreement_rate = judged_rate(judged, agree_each)
    agreement = agreement_rate["value"] if n_audited else math.nan
    gold01 = (judged.gold_codes[audited] == Verdict.SUPPORTED.code).astype(float)
    judge01 = (judged.judge_codes[audited] == Verdict.SUPPORTED.code).astype(float)
    strata_named, sizes = named(judged, strata)
    sesp = stats.design_sensitivity_specificity(
        gold01, judge01, ids, strata_named, sizes, weights=w, fpc=fpc(judged)
    )
    # Kappa, the table's shares and the asymmetry: clustered by answer; where audited claims
    # stand for different numbers of claims (strata sampled unequally, the active queue's π),
    # each weighted by its share of the project.
    e = expansion(judged)
    kappa = stats.design_kappa(g_a, j_a, ids, weights=e) if n_audited >= 2 else None
    se, sp = sesp["sensitivity"], sesp["specificity"]
    confusion = {
        "labels": list(VERDICT_VALUES),
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


def _faithfulness(judged: Judged, sesp: dict) -> dict:
    """Naive faithfulness, every registered estimator of the true faithfulness
    (`metrics.services.estimators`: gold only, Rogan–Gladen, PPI++ …) and which one is the
    headline; each clustered by answer and stratified by the audit's design."""
    n_judged, n_audited, audited = judged.n_judged, judged.n_audited, judged.audited
    judged_supported = int(np.sum(judged.judge_codes == Verdict.SUPPORTED.code))
    judge01 = (judged.judge_codes == Verdict.SUPPORTED.code).astype(float)
    inputs = estimators.EstimatorInputs(
        judged=judged,
        sesp=sesp,
        gold01=(judged.gold_codes[audited] == Verdict.SUPPORTED.code).astype(float),
        judge01=judge01,
        # The judge's P(SUPPORTED) where it gave one, else its 0/1 verdict.
        judge_score=np.where(np.isnan(judged.confidence), judge01, judged.confidence),
    )
    blocks = {entry.key: entry.compute(inputs) for entry in estimators.registered()}
    headline, reason = estimators.headline_choose(blocks, sesp["youden_j"])
    for block in blocks.values():
        block["method"] = with_design(block["method"], {"n": n_audited, **block})
    return {
        "naive_faithfulness": judged_supported / n_judged if n_judged else math.nan,
        "naive_faithfulness_detail": _proportion(judged_supported, n_judged),
        **blocks,
        "headline_estimate": headline,
        "headline_reason": reason,
    }


def _calibration_fields(
    data: _Data, judged: Judged, grounded_links: pd.DataFrame
) -> tuple[dict, dict]:
    audited = judged.audited
    calibration, crc_inputs = _calibration(
        confidence=judged.confidence[audited],
        supported=(judged.gold_codes[audited] == Verdict.SUPPORTED.code).astype(float),
        answer_ids=judged.answer_ids[audited],
        claim_ids=data.claim_ids[judged.position][audited],
        judged_confidence=confidence_counts(judged.confidence),
        grounded_links=grounded_links,
        facts=data.facts,
    )
    return calibration_fields(calibration, judged), crc_inputs


def calibration_fields(calibration: dict, judged) -> dict:
    """`_calibration`'s block as the report shows it: not shown, with the reason, when the
    audited claims of `judged` (weights, strata, audited, sizes) stand for unequal numbers of
    the project's claims. The rollups' calibration goes through here too."""
    fields = {
        "ece": calibration["ece"],
        "calibration": calibration["detail"],
        "frontier": calibration["frontier"],
        "frontier_not_computed": calibration["detail"]["not_computed"],
        "crc": calibration["crc"],
    }
    if judged.audited.any() and audited_unequally(judged):
        _not_under_design(
            fields, NOT_UNDER_DESIGN if judged.weights is not None else NOT_UNDER_STRATA
        )
    return fields


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


def _failures(data: _Data, judged: Judged) -> dict:
    """Agreement per claim tag and per risk category, worst first: each group's audited
    claims weighted by their share of the project under the design (`_expansion`; the plain
    share under a simple random sample), so a group the active queue oversampled where the
    judge is unsure is not made to look worse than it is."""
    position, audited = judged.position, judged.audited
    failures = {"by_tag": [], "by_risk_category": []}
    tag_masks = {tag: mask[position][audited] for tag, mask in data.tag_masks.items()}
    risk = data.claims["risk_category"].to_numpy()[position][audited]
    agree_each = judged.gold_codes[audited] == judged.judge_codes[audited]
    weights = expansion(judged)
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
    canary = canary[canary["verdict"].isin(VERDICT_VALUES)].drop_duplicates(
        "canary_id", keep="last"
    )
    canary_pass = _proportion(int((canary["verdict"] == Verdict.NOT_IN_PILE).sum()), len(canary))
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
) -> tuple[dict, dict, Judged]:
    """The audit of one instrument (judge + model + prompt version) against gold: its block,
    its compact CRC inputs (for the α form) and its judged claims (for the active audit) —
    the last two beside the block, never in it.

    `verdicts` holds no stale verdict (made on a claim's previous text); `stale` is how many
    were left out, for the method string.
    """
    identity = _identity(judge, verdicts)
    judged, version_fields = heldout_audit(judge=judge, judged=judged_of(data, verdicts))
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
    }
    block["method"] = _audit_method(block, stale) + version_fields.pop("method_note", "")
    block.update(version_fields)
    if judge.drifted_on:
        # Monitoring saw this judge move on its human anchors (issue 29): its judge-assisted
        # figures lean on the judge as audited, so the block says so until a lead clears it.
        block["judge_drift"] = {
            "since": judge.drifted_on.isoformat(),
            "sentence": judge.drift_sentence,
        }
    category_correction(block, data=data, judged=judged)
    return block, crc_inputs, judged
