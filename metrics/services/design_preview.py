"""The queue-design page's preview (issue 32 item 7): before a lead applies a design, how many
labels each design would need for the target half-width, from the labels so far, computed with
nothing written.

It is the report's own forecast (`metrics.services.active_audit`), run once per design on the
inputs that design would have: the report's claims (`_Data`: abstentions out, gold as the
design read leaves it), the judge's prediction as the report takes it, and the labels so far
weighted by the design they were drawn under (`design_in_use`: the stratified queue's n_h/N_h,
the active queue's recorded π with the gold it cannot weight left out), never as raw gold. What
changes per design is only what applying it would set:

- **stratified**: the strata `active_design_apply` would store from the run (verdict ×
  confidence band × risk category); with labels drawn uniformly, each label is weighted by its
  new stratum's sampling fraction n_h/N_h, as the report does once the design is applied;
- **active**: the π the budget would set (`active_probabilities`).
"""

import numpy as np
import pandas as pd

from annotate.models import Project
from annotate.vocabulary import Verdict
from judges.models import JudgeRun
from metrics import selectors
from metrics.services.active_audit import (
    active_labelled,
    claim_design_inputs,
    design_forecasts,
    design_in_use,
    forecast_inputs,
    judge_prediction,
)
from metrics.services.active_design import (
    active_probabilities,
    active_strata_names,
    claim_support_probabilities,
)
from metrics.services.inputs import _Data
from metrics.services.judged import judged_of

DESIGN_NAMES = {
    "uniform": "Uniform random order",
    "stratified": "Stratified",
    "active": "Active",
}


def _silent(fraction: float, stage: str = "") -> None:
    """No progress bar: the preview answers the request that asked for it."""


def design_preview(
    *, project: Project, run: JudgeRun | None, budget: int | None, target: float
) -> dict:
    """{"target", "labelled", "claims", "drawn", "rows": [{"design", "name", "in_use",
    …the report's forecast entry}]} for every design the inputs allow: uniform always;
    stratified and active with a finished run (active with a budget too)."""
    data = _Data(project=project, progress=_silent)
    inputs = claim_design_inputs(project, data)
    drawn = design_in_use(project, inputs["label_designs"])
    gold_codes = data.claims["gold"].to_numpy()
    gold = gold_codes >= 0
    out = {"target": target, "claims": int(gold.size), "drawn": drawn, "rows": []}
    judged = judged_of(data, selectors.judge_verify_columns(judge=run.judge)) if run else None
    prediction = judge_prediction(data, judged)
    weighted = forecast_inputs(
        design=drawn,
        gold=gold,
        prediction=prediction,
        strata=inputs["strata"],
        claim_pi=inputs["claim_pi"],
        active_inputs=_drawn_active(drawn, gold, inputs),
    )
    out["labelled"] = int(weighted["labelled"].sum())
    if gold.size == 0 or not gold.any():
        return _named(out, project)
    common = {
        "target": target,
        "y": (gold_codes == Verdict.SUPPORTED.code).astype(float),
        "answer_ids": data.answer_ids(),
    }
    candidates = {"uniform": (inputs["strata"], weighted)}
    if run is not None:
        support = claim_support_probabilities(project=project, run=run)
        at = pd.Series(np.arange(support["claim_id"].size), index=support["claim_id"])
        position = at.loc[data.claim_ids].to_numpy()
        strata = active_strata_names(support)[position]
        stratified = dict(weighted)
        if drawn == "uniform":  # post-stratified: the report's weights once it is applied
            stratified["pi"] = forecast_inputs(
                design="stratified", gold=gold, prediction=prediction, strata=strata,
                claim_pi=None, active_inputs=None,
            )["pi"]  # fmt: skip
        candidates["stratified"] = (strata, stratified)
        if budget:
            pi = active_probabilities(project=project, support=support, budget=budget)
            candidates["active"] = (inputs["strata"], {**weighted, "design_pi": pi[position]})
    for design, (strata, design_inputs) in candidates.items():
        entries, _ = design_forecasts(design=design, strata=strata, inputs=design_inputs, **common)
        out["rows"].append({"design": design, **entries[design]})
    return _named(out, project)


def _drawn_active(drawn: str, gold: np.ndarray, inputs: dict) -> dict | None:
    """Under an active queue, the gold it weights and their π (`active_labelled`)."""
    if drawn != "active":
        return None
    labelled, pi = active_labelled(gold, inputs["pi"], inputs["claim_pi"])
    return {"labelled": labelled, "pi": pi}


def _named(out: dict, project: Project) -> dict:
    for row in out["rows"]:
        row["name"] = DESIGN_NAMES[row["design"]]
        row["in_use"] = row["design"] == project.queue_design
    return out
