"""The active audit in the report (issue 14): the headline under the design the queue actually
used, the forecast "about N more labels to reach ±x (95%)" for that design and for uniform
sampling, the stop rule, the honest gain, whether the judge's confidence is informative, and
selective judging (which claims the judge may decide alone, with a guarantee); the lead's
routing write is `metrics.services.active_routing`.

The arithmetic is `metrics.stats.active` (and `metrics.stats.design` for the stratified
design); this module turns the project's rows into its inputs and its results into the report's
`active_audit` block.

The design actually used:
- "active": the queue drew claims by sequential Poisson sampling with inclusion probability π_i
  (`Claim.inclusion_probability`, recorded on each label made through the queue as
  `Label.inclusion_probability`). The headline is `active_ppi_mean` with each gold claim's
  π as its first label drawn under the active design recorded it, the judge's prediction on
  every claim, clustered by answer. Gold claims with no recorded π (labelled under another design) are left out of
  the active estimate, and the method says how many.
- "stratified": strata are the claims' `active_stratum` with N_h their claims in the project;
  the headline is the stratified PPI++ of `metrics.stats.design` (gold-only stratified without
  a judge).
- "uniform": the report's own headline (the judge's headline estimate, else gold-only pooled
  faithfulness); only the uniform forecast is given.
The design is the project's `queue_design`, or, with the project back on uniform, the design
most of the labels were drawn under (their figures stay valid only under that design).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping

import numpy as np
import pandas as pd

from annotate.models import Project
from annotate.vocabulary import Verdict
from metrics import format as fmt
from metrics import selectors, stats
from metrics.services.audit_design import fpc_on
from metrics.stats.active_forecast import forecast_within_claims

DEFAULT_TARGET_HALF_WIDTH = 0.10
DEFAULT_TARGET_AGREEMENT = 0.90
DEFAULT_DELTA = 0.10
DESIGNS = ("uniform", "active", "stratified")
NO_STRATUM = "(no stratum)"

GAIN_CAVEAT = "measured on this project's labels, not a promise"
UNINFORMATIVE_WARNING = (
    "The judge's confidence does not tell its errors apart (AUC {auc}, its 95% interval "
    "not above 0.5): "
    "active sampling is no better than uniform here."
)
ROUTED_TEXT = (
    "{n} claim{s} routed to the judge ({share} of the project's claims): the queue no longer "
    "serves them. How they are counted: they stay in every figure's population (N) and the "
    "gold they already had still counts, but labels drawn while routing is on come from the "
    "other claims only, so the audit sample under-represents routed claims from then on. For "
    "them read the judge's own verdicts{judge_share}, certified to agree with gold as the "
    "selective-judging line says; stop routing before quoting the headline as a whole-project "
    "audit."
)


def _half_width(ci) -> float | None:
    low, high = (float(v) if v is not None else math.nan for v in ci)
    if not (math.isfinite(low) and math.isfinite(high)):
        return None
    return (high - low) / 2.0


def _finite(value) -> float | None:
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def design_in_use(project: Project, label_designs: list[str]) -> str:
    """The project's queue design, or (back on uniform) the design most labels were drawn
    under."""
    if project.queue_design in ("active", "stratified"):
        return project.queue_design
    drawn = Counter(d for d in label_designs if d in ("active", "stratified"))
    return drawn.most_common(1)[0][0] if drawn else "uniform"


def _verdict_confidence(judge_codes: np.ndarray, p_supported: np.ndarray) -> np.ndarray:
    """The judge's confidence in its own verdict: P(SUPPORTED) for a SUPPORTED verdict,
    1 − P(SUPPORTED) for the others (NaN where it gave none)."""
    return np.where(judge_codes == Verdict.SUPPORTED.code, p_supported, 1.0 - p_supported)


# ------------------------------------------------------------------------------------------
# the headline under the design


def _uniform_headline(figures: Mapping) -> dict:
    """The uniform design's headline: the judge's headline estimate, else gold-only.
    `figures`: the report's `judge` (if any), `faithfulness` and `method`."""
    judge = figures.get("judge")
    if judge and judge.get("headline_estimate"):
        block = judge[judge["headline_estimate"]]
        return {
            "value": block["value"],
            "ci": block["ci"],
            "method": block["method"],
            "estimator": judge["headline_estimate"],
        }
    pooled = figures["faithfulness"]["pooled"]
    return {
        "value": pooled["value"],
        "ci": pooled["ci"],
        "method": figures["method"]["faithfulness"],
        "estimator": "gold_only_faithfulness",
    }


def _left_out_text(left_out: int) -> str:
    return (
        f" {left_out} gold claim{'s' if left_out != 1 else ''} with no recorded inclusion "
        "probability (labelled under another design) left out of this estimate."
    )


def active_labelled(gold, pi_label, claim_pi) -> tuple[np.ndarray, np.ndarray]:
    """(the gold claims an active-design figure weights: those with a recorded π, every
    claim's π): a labelled claim its label's π, another its claim's π, else the labels' mean
    π (so a constant design reads as constant)."""
    labelled = gold & np.isfinite(pi_label) & (pi_label > 0)
    pi = np.where(np.isfinite(claim_pi) & (claim_pi > 0), claim_pi, np.nan)
    pi[labelled] = pi_label[labelled]
    fill = float(np.mean(pi_label[labelled])) if labelled.any() else 1.0
    return labelled, np.where(np.isfinite(pi), pi, fill)


def _active_headline(
    y, gold, prediction, pi_label, claim_pi, answer_ids, also_left_out=0
) -> tuple[dict, dict]:
    """active_ppi_mean over all claims, with the labelled claims those that have gold AND a
    recorded π; returns (headline, inputs for the forecast). `also_left_out`: gold claims the
    report's design read already took out of `gold` (drawn by the active queue, no π).

    Only the labelled claims' π enter the Hájek estimate; the others get their claim's π (or
    the labels' mean π when they have none) so that a constant design reads as constant."""
    labelled, pi = active_labelled(gold, pi_label, claim_pi)
    left_out = int((gold & ~labelled).sum()) + int(also_left_out)
    if labelled.sum() < 2:
        method = "Fewer than 2 gold claims drawn under the active design: not estimated."
        if left_out:
            method += _left_out_text(left_out)
        headline = {"value": math.nan, "ci": (math.nan, math.nan), "method": method}
        return (
            {
                **headline,
                "estimator": "active_ppi",
                "design_effect": math.nan,
                "gold_left_out": left_out,
            },
            {"labelled": labelled, "pi": pi},
        )
    est = stats.active_ppi_mean(
        np.where(labelled, y, 0.0), labelled, prediction, pi, cluster=answer_ids
    )
    method = est.method
    if left_out:
        method += _left_out_text(left_out)
    return (
        {
            "value": est.value,
            "ci": est.ci,
            "method": method,
            "estimator": "active_ppi",
            "design_effect": est.design_effect,
            "gold_left_out": left_out,
        },
        {"labelled": labelled, "pi": pi},
    )


def _phased_headline(y, gold, prediction, design, answer_ids) -> dict:
    """The headline of a project whose labels were drawn first under another design, then by
    the active queue (`design_phases.design_phases`): the earlier labels' claims a stratum known
    exactly, the active labels (1/π) estimating the rest."""
    census = design.census
    drawn = gold & ~census
    if int(drawn.sum()) < 2:
        return {
            "value": math.nan,
            "ci": (math.nan, math.nan),
            "method": (
                f"Fewer than 2 gold claims drawn under the last design ({design.phases[-1]['design']}"
                "): not "
                f"estimated; {int((gold & census).sum())} claims labelled before it are known "
                "exactly."
            ),
            "estimator": "active_ppi",
            "design_effect": math.nan,
            "gold_left_out": int(design.active_left_out),
            "phases": design.phases,
        }
    weights = design.weight if design.weight is not None else np.ones(y.size)
    strata = np.where(census, "earlier design", "active")
    est = stats.stratified_active_ppi_mean(
        np.where(gold, y, 0.0),
        gold,
        prediction,
        np.where(gold, weights, 1.0),
        strata=strata,
        cluster=answer_ids,
        census=census,
    )
    return {
        "value": est.value,
        "ci": est.ci,
        "method": est.method,
        "estimator": "active_ppi",
        "design_effect": est.design_effect,
        "gold_left_out": int(design.active_left_out),
        "phases": design.phases,
    }


def _stratified_headline(y, gold, prediction, strata, answer_ids) -> dict:
    if prediction is None:
        sizes = dict(Counter(strata.tolist()))
        est = stats.design_proportion(y[gold], answer_ids[gold], strata[gold], sizes)
        estimator = "stratified_gold_only"
    else:
        est = stats.design_ppi_mean(
            y[gold],
            prediction[gold],
            prediction[~gold],
            answer_ids[gold],
            answer_ids[~gold],
            strata[gold],
            strata[~gold],
        )
        estimator = "stratified_ppi"
    return {
        "value": est.value,
        "ci": est.ci,
        "method": est.method,
        "estimator": estimator,
        "design_effect": est.design_effect,
    }


# ------------------------------------------------------------------------------------------
# forecast, stop rule, gain, confidence


def _forecast_entry(result, target: float, answer_ids: np.ndarray) -> dict:
    """One design's forecast as the report keeps it (`result`: a `stats.Forecast`), held
    against the claims and answers the report covers (`forecast_within_claims`)."""
    bound = forecast_within_claims(
        result, claims=answer_ids.size, answers=int(pd.unique(answer_ids).size)
    )
    return {
        "labels_total": None if result.labels_total is None else int(result.labels_total),
        "labels_more": None if result.labels_more is None else int(result.labels_more),
        "half_width_now": _finite(result.half_width_now),
        "target_half_width": float(target),
        "estimator": result.design,
        "method": result.method,
        "claims": bound.claims,
        "claims_unlabelled": bound.unlabelled,
        "within_claims": bound.reachable,
        "answers_more": bound.answers_more,
    }


def forecast_inputs(*, design, gold, prediction, strata, claim_pi, active_inputs) -> dict:
    """The labels, the probabilities they were drawn with and the prediction each design's
    forecast reads (`stats.labels_needed`)."""
    if design == "active":
        finite = np.isfinite(claim_pi) & (claim_pi > 0)
        fill = float(np.mean(claim_pi[finite])) if finite.any() else 1.0
        return {
            "labelled": active_inputs["labelled"],
            "pi": active_inputs["pi"],
            "design_pi": np.where(finite, claim_pi, fill),
            # no judge in this report: a constant prediction makes the active variance the
            # inverse-probability (gold-only) one under π
            "prediction": prediction if prediction is not None else np.full(gold.size, 0.5),
        }
    pi = None
    if design == "stratified":
        codes, _ = pd.factorize(strata)
        big = np.bincount(codes).astype(float)
        small = np.bincount(codes[gold], minlength=big.size).astype(float)
        share = np.where(small > 0, small / big, 1.0)
        pi = share[codes]  # each stratum's sampling fraction n_h/N_h
    return {"labelled": gold, "pi": pi, "design_pi": None, "prediction": prediction}


def design_forecasts(*, design, target, y, answer_ids, strata, inputs) -> tuple[dict, dict]:
    """(the report's forecast entries {"uniform", design}, the raw `stats.Forecast`s, with
    "gold_only" for the gain)."""
    common = {
        "y": y,
        "labelled": inputs["labelled"],
        "pi": inputs["pi"],
        "cluster": answer_ids,
        "fpc": fpc_on(),
    }
    uniform_name = "uniform_ppi" if inputs["prediction"] is not None else "uniform_gold"
    raw = {
        "uniform": stats.labels_needed(
            target, uniform_name, prediction=inputs["prediction"], **common
        ),
        "gold_only": stats.labels_needed(target, "uniform_gold", **common),
    }
    if design == "active":
        raw["active"] = stats.labels_needed(
            target,
            "active",
            prediction=inputs["prediction"],
            design_pi=inputs["design_pi"],
            **common,
        )
    elif design == "stratified":
        raw["stratified"] = stats.labels_needed(target, "stratified", strata=strata, **common)
    entries = {name: _forecast_entry(raw[name], target, answer_ids) for name in ("uniform", design)}
    return entries, raw


def _gain(design: str, raw: dict) -> dict | None:
    """Labels the design in use saved against uniform gold-only at the width it reached
    (`stats.labels_saved`); None when the design in use is uniform gold-only itself."""
    chosen = raw[design]
    if chosen.design == "uniform_gold":
        return None
    saved = stats.labels_saved(chosen, raw["gold_only"])
    return {
        "design": chosen.design,
        "labels_design": int(saved.labels_used),
        "labels_uniform_gold_only": saved.labels_gold_only,
        "labels_saved": saved.saved,
        "ratio": _finite(saved.ratio),
        "text": saved.method,
        "caveat": GAIN_CAVEAT,
    }


def _progress(entry: dict, labels_now: int) -> float | None:
    """Share of the labels the design needs that are done: labels now / labels total, below 1
    until the headline's own interval reaches the target (the caller sets 1 then)."""
    total = entry["labels_total"]
    if total is None:
        return None
    if total <= 0:
        return 0.99
    return float(min(0.99, labels_now / total))


def _confidence_block(confidence: np.ndarray, error: np.ndarray) -> dict | None:
    """How well the judge's confidence tells its errors apart (`stats.confidence_informative`);
    None without both errors and correct verdicts among the audited claims."""
    ok = np.isfinite(confidence)
    if ok.sum() < 2 or error[ok].all() or not error[ok].any():
        return None
    auc, informative = stats.confidence_informative(confidence[ok], error[ok])
    return {
        "auc": _finite(auc),
        "informative": bool(informative),
        "warning": None
        if informative
        else UNINFORMATIVE_WARNING.format(auc=f"{auc:.2f}" if math.isfinite(auc) else "—"),
        "explanation": "AUC: how often the judge is less confident in a verdict it gets wrong "
        "than in one it gets right (0.5 = no better than chance).",
    }


def _selective_block(
    *, conf_audited, agree, conf_all, target: float, delta: float, routed: int
) -> dict | None:
    """Selective judging: the confidence threshold above which the judge may decide alone."""
    ok = np.isfinite(conf_audited)
    if not ok.any():
        return None
    result = stats.selective_threshold(conf_audited[ok], agree[ok], target=target, delta=delta)
    threshold = _finite(result.threshold)
    finite_all = conf_all[np.isfinite(conf_all)]
    share_all = (
        float(np.mean(conf_all >= threshold)) if threshold is not None and conf_all.size else 0.0
    )
    return {
        "target_agreement": float(target),
        "delta": float(delta),
        "level": 1.0 - float(delta),
        "threshold": threshold,
        "share_audited": _finite(result.accepted_share),
        "share_of_claims": share_all,
        "claims_at_or_above": int((finite_all >= threshold).sum()) if threshold is not None else 0,
        "lower_bound": _finite(result.lower_bound),
        "method": result.method,
        "routed_claims": routed,
        "explanation": "The judge's confidence in its own verdict; above the threshold its "
        "verdicts agree with gold at least at the target, with the stated probability.",
    }


# ------------------------------------------------------------------------------------------
# the report's block


def claim_design_inputs(project: Project, data) -> dict:
    """Per report claim: the π its first label drawn under the active design recorded (NaN if
    none: a claim labelled under another design, outside the queue, or not at all), its active
    stratum, whether it is routed; and the designs the labels were drawn under."""
    labels = selectors.label_design_columns(project=project)
    labels = labels[labels["claim_id"].isin(data.claim_ids)]
    if (
        project.queue_design == Project.QueueDesign.UNIFORM
        and not project.selective_judging
        and not labels["design"].isin(["active", "stratified"]).any()
    ):
        # Never an active or stratified design nor routing here (most projects): every claim
        # has no π, no active stratum and is not routed, so the report's hot path skips reading
        # three more columns of every claim (about a second at 1M claims).
        claims = pd.DataFrame(
            {
                "inclusion_probability": np.nan,
                "active_stratum": "",
                "routed_to_judge": False,
            },
            index=pd.Index(data.claim_ids, name="claim_id"),
        )
    else:
        claims = selectors.active_claim_columns(project=project).set_index("claim_id")
        claims = claims.reindex(data.claim_ids)
    active = labels[labels["design"] == "active"].dropna(subset=["inclusion_probability"])
    recorded = active.drop_duplicates("claim_id").set_index("claim_id")["inclusion_probability"]
    pi = recorded.reindex(data.claim_ids).to_numpy(dtype=float)
    strata = claims["active_stratum"].fillna("").to_numpy(dtype=object)
    strata[strata == ""] = NO_STRATUM
    return {
        "pi": pi,
        "claim_pi": claims["inclusion_probability"].to_numpy(dtype=float),
        "strata": strata,
        "routed": claims["routed_to_judge"].fillna(False).to_numpy(dtype=bool),
        "label_designs": labels["design"].tolist(),
    }


def judge_prediction(data, judged) -> np.ndarray | None:
    """The judge's P(SUPPORTED) (its 0/1 verdict where it gave none) on every report claim;
    claims it did not judge get 0.5 (any fixed prediction keeps the rectified estimate
    unbiased; it only costs precision)."""
    if judged is None or not judged.n_judged:
        return None
    judge01 = (judged.judge_codes == Verdict.SUPPORTED.code).astype(float)
    score = np.where(np.isnan(judged.confidence), judge01, judged.confidence)
    prediction = np.full(data.claim_ids.size, 0.5)
    prediction[judged.position] = score
    return prediction


def active_audit_block(*, project: Project, data, figures: Mapping, judged=None) -> dict | None:
    """The report's `active_audit` block, or None when the project has no gold.

    `data` is the report's `_Data`; `judged` the headline instrument's `_Judged` (None without
    a judge); `figures` the report's sections the uniform headline reads (`judge`,
    `faithfulness`, `method`: see `_uniform_headline`). Keys other pages read: `design`, `forecast` ({"uniform": …, "<design>": …}, each
    labels_total, labels_more, half_width_now, target_half_width), `progress`, `reached`.
    """
    gold_codes = data.claims["gold"].to_numpy()
    gold = gold_codes >= 0
    if not gold.any():
        return None
    inputs = claim_design_inputs(project, data)
    design = design_in_use(project, inputs["label_designs"])
    target_set = project.target_half_width is not None
    target = float(project.target_half_width) if target_set else DEFAULT_TARGET_HALF_WIDTH
    y = (gold_codes == Verdict.SUPPORTED.code).astype(float)
    answer_ids = data.answer_ids()
    prediction = judge_prediction(data, judged)
    uniform = _uniform_headline(figures)
    labels_now = int(gold.sum())
    block: dict = {"design": design, "target_half_width": target, "target_set": target_set}
    active_inputs = None
    phased = data.design
    if design == "active":
        headline, active_inputs = _active_headline(
            y,
            gold,
            prediction,
            inputs["pi"],
            inputs["claim_pi"],
            answer_ids,
            also_left_out=phased.active_left_out,
        )
        labels_now = int(active_inputs["labelled"].sum())
        if phased.census is not None:
            headline = _phased_headline(y, gold, prediction, phased, answer_ids)
    elif design == "stratified":
        headline = _stratified_headline(y, gold, prediction, inputs["strata"], answer_ids)
    else:
        headline = uniform
    headline["half_width"] = _half_width(headline["ci"])
    block["headline"] = headline
    block["labels_now"] = labels_now
    drawn_inputs = forecast_inputs(
        design=design,
        gold=gold,
        prediction=prediction,
        strata=inputs["strata"],
        claim_pi=inputs["claim_pi"],
        active_inputs=active_inputs,
    )
    entries, raw = design_forecasts(
        design=design,
        target=target,
        y=y,
        answer_ids=answer_ids,
        strata=inputs["strata"],
        inputs=drawn_inputs,
    )
    block["forecast"] = entries
    # The stop rule reads the interval the lead would quote: the headline's own.
    now = headline["half_width"]
    block["reached"] = bool(now is not None and now <= target)
    block["progress"] = 1.0 if block["reached"] else _progress(entries[design], labels_now)
    block["gain"] = _gain(design, raw)
    block["confidence"] = None
    block["selective"] = None
    block["routing"] = _routing_block(project, inputs["routed"], judged)
    if judged is not None and judged.n_audited:
        audited = judged.audited
        conf_verdict = _verdict_confidence(judged.judge_codes, judged.confidence)
        agree = judged.gold_codes[audited] == judged.judge_codes[audited]
        wrong = (judged.judge_codes[audited] == Verdict.SUPPORTED.code) != (
            judged.gold_codes[audited] == Verdict.SUPPORTED.code
        )
        block["confidence"] = _confidence_block(conf_verdict[audited], wrong)
        block["selective"] = _selective_block(
            conf_audited=conf_verdict[audited],
            agree=agree,
            conf_all=conf_verdict,
            target=DEFAULT_TARGET_AGREEMENT,
            delta=DEFAULT_DELTA,
            routed=block["routing"]["routed_claims"],
        )
    block["method"] = _block_method(block)
    return block


def _routing_block(project: Project, routed_mask: np.ndarray, judged) -> dict:
    """How many claims are routed to the judge, the judge's SUPPORTED share on them, and the
    sentence saying how the report counts them."""
    routed = int(routed_mask.sum())
    share = None
    if routed and judged is not None and judged.n_judged:
        on_routed = routed_mask[judged.position]
        if on_routed.any():
            share = float(np.mean(judged.judge_codes[on_routed] == Verdict.SUPPORTED.code))
    total = int(routed_mask.size)
    text = ""
    if routed:
        text = ROUTED_TEXT.format(
            n=routed,
            s="s" if routed != 1 else "",
            share=fmt.percent(routed / total) if total else "0%",
            judge_share=f" ({fmt.percent(share)} SUPPORTED)" if share is not None else "",
        )
    return {
        "on": bool(project.selective_judging),
        "routed_claims": routed,
        "judge_supported_share": share,
        "text": text,
    }


def _block_method(block: dict) -> str:
    """What the block's figures are and how routed claims are counted."""
    design = block["design"]
    target = block["target_half_width"]
    text = {
        "active": "Headline under the active design: ",
        "stratified": "Headline under the stratified design: ",
        "uniform": "Headline under uniform sampling: ",
    }[design] + (block["headline"].get("method") or "")
    text += (
        f" Forecast: labels needed for a 95% half-width of ±{target:.3f}"
        f"{' (the lead’s target)' if block['target_set'] else ' (default target, none set)'}"
        ", from the current variance estimates (n = V₁·t²/(x² − t²·V∞): V₁ the variance one "
        "label adds, V∞ what the judge's own error leaves however many labels); uniform "
        "sampling shown beside it. Progress = labels so far / labels needed; the target is "
        "reached when the headline's own 95% interval is within it."
    )
    if block["gain"] and block["gain"].get("text"):
        text += " " + block["gain"]["text"]
    routing = block["routing"]
    if routing["routed_claims"]:
        text += " " + routing["text"]
    return text
