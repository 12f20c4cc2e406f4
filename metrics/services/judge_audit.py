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
    )


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


def _agreement(judged: _Judged, human_kappa: float) -> tuple[dict, dict]:
    """Confusion, agreement, kappa, asymmetry and sensitivity/specificity on the audited claims;
    also the raw sensitivity/specificity counts the debiasing needs."""
    names = np.asarray(VERDICTS, dtype=object)
    audited = judged.audited
    g_a, j_a = names[judged.gold_codes[audited]], names[judged.judge_codes[audited]]
    n_audited = judged.n_audited
    matrix = stats.confusion(g_a, j_a).to_numpy()
    agree = int(np.trace(matrix))
    agreement = agree / n_audited if n_audited else math.nan
    sesp = stats.sensitivity_specificity(g_a, j_a)
    se, sp = sesp["sensitivity"], sesp["specificity"]
    fields = {
        "confusion": {
            "labels": list(VERDICTS),
            "rows": "gold",
            "columns": "judge",
            "matrix": matrix.tolist(),
        },
        "agreement": agreement,
        "agreement_ci": stats.wilson_interval(agree, n_audited)
        if n_audited
        else (math.nan, math.nan),
        "agreement_warning": _agreement_warning(n_audited, agreement),
        "kappa": stats.cohen_kappa(g_a, j_a) if n_audited else math.nan,
        "human_kappa_ceiling": human_kappa,
        "asymmetry": _asymmetry(matrix),
        "sensitivity": {"value": se["value"], "ci": se["ci"], "n": se["n"]},
        "specificity": {"value": sp["value"], "ci": sp["ci"], "n": sp["n"]},
        "youden_j": sesp["youden_j"],
    }
    return fields, sesp


def _debiased(judged_supported: int, n_judged: int, sesp: dict) -> tuple[float, tuple]:
    """Rogan–Gladen faithfulness with its Lang–Reiczigel interval (nan where undefined)."""
    se, sp = sesp["sensitivity"], sesp["specificity"]
    p_obs = judged_supported / n_judged if n_judged else math.nan
    value = stats.rogan_gladen(p_obs, se["value"], sp["value"]) if n_judged else math.nan
    if n_judged and se["n"] and sp["n"]:
        ci = stats.rogan_gladen_interval(
            judged_supported,
            n_judged,
            se["successes"],
            se["n"],
            sp["successes"],
            sp["n"],
            method="lang-reiczigel",
        )
    else:
        ci = (math.nan, math.nan)
    if not math.isfinite(value):
        ci = (math.nan, math.nan)
    return value, ci


def _faithfulness(judged: _Judged, sesp: dict) -> dict:
    """Naive, debiased, PPI++ and gold-only faithfulness, and which one is the headline."""
    n_judged, n_audited, audited = judged.n_judged, judged.n_audited, judged.audited
    judged_supported = int(np.sum(judged.judge_codes == SUPPORTED))
    debiased_value, debiased_ci = _debiased(judged_supported, n_judged, sesp)
    gold01 = (judged.gold_codes[audited] == SUPPORTED).astype(float)
    judge01 = (judged.judge_codes == SUPPORTED).astype(float)
    # The judge's P(SUPPORTED) where it gave one, else its 0/1 verdict.
    judge_score = np.where(np.isnan(judged.confidence), judge01, judged.confidence)
    ppi = stats.ppi_mean_interval(gold01, judge_score[audited], judge_score[~audited])
    gold_only = _proportion(int(gold01.sum()), n_audited)
    headline = stats.headline_estimate(
        {"value": gold_only["value"], "ci": gold_only["ci"]},
        {"value": debiased_value, "ci": debiased_ci},
        {"value": ppi["value"], "ci": ppi["ci"]},
        youden_j=sesp["youden_j"],
    )
    return {
        "naive_faithfulness": judged_supported / n_judged if n_judged else math.nan,
        "naive_faithfulness_detail": _proportion(judged_supported, n_judged),
        "debiased_faithfulness": {
            "value": debiased_value,
            "ci": debiased_ci,
            "method": "Rogan–Gladen, Lang–Reiczigel adjusted interval (95%)",
        },
        "ppi_faithfulness": {
            "value": ppi["value"],
            "ci": ppi["ci"],
            "lambda": ppi["lambda"],
            "method": "PPI++ (power-tuned prediction-powered inference, 95%)",
        },
        "gold_only_faithfulness": {
            "value": gold_only["value"],
            "ci": gold_only["ci"],
            "n": n_audited,
            "method": "audit sample alone, Wilson interval (95%)",
        },
        "headline_estimate": HEADLINE_KEYS.get(headline["choice"]),
        "headline_reason": headline["reason"],
    }


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
    return fields, crc_inputs


def _failures(data: _Data, judged: _Judged) -> dict:
    """Agreement per claim tag and per risk category, worst first."""
    position, audited = judged.position, judged.audited
    failures = {"by_tag": [], "by_risk_category": []}
    tag_masks = {tag: mask[position][audited] for tag, mask in data.tag_masks.items()}
    risk = data.claims["risk_category"].to_numpy()[position][audited]
    agree_each = judged.gold_codes[audited] == judged.judge_codes[audited]
    for key, groups in (
        ("by_tag", tag_masks.items()),
        ("by_risk_category", ((cat, risk == cat) for cat in RiskCategory.values)),
    ):
        for name, mask in groups:
            n = int(mask.sum())
            if n:
                failures[key].append(
                    {"group": name, "n": n, "agreement": float(np.mean(agree_each[mask]))}
                )
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
    }
    block["method"] = _audit_method(block, stale)
    category_correction(block, data=data, judged=judged, headline_keys=HEADLINE_KEYS)
    return block
