"""The queue-design page's preview (issue 32 item 7): before a lead applies a design, how many
labels each design would need for the target half-width, from the labels so far, computed with
nothing written.

Each design's forecast is `stats.labels_needed` on the inputs that design would have once
applied, the same inputs the report's forecast reads (`metrics.services.active_audit`):

- every claim outside abstentions, clustered by answer, with the finite-population correction
  as the report has it (`fpc_on`);
- the judge's prediction as the report takes it (`_prediction` there): the run's confidence,
  its 0/1 verdict where it gave none, 0.5 on a claim it did not judge;
- **uniform**: PPI++ with that prediction (gold-only without a run);
- **stratified**: the strata `active_design_apply` would store (verdict × confidence band ×
  risk category, `active_strata_names`), each label weighted by its stratum's sampling
  fraction n_h/N_h;
- **active**: the π the budget would set (`active_probabilities`).

The labels so far are taken as drawn with equal probability; under an active or stratified
queue already in use the page says the preview of the other designs ignores the π they were
drawn with (the report's own forecast for the design in use does not).
Then `forecast_within_claims`: past the claims present, "import about N more answers".
"""

import numpy as np
import pandas as pd

from annotate.models import Claim, Gold, Project, Verdict
from judges.models import JudgeRun
from metrics import stats
from metrics.services.active_design import (
    active_probabilities,
    active_strata_names,
    claim_support_probabilities,
)
from metrics.services.audit_design import fpc_on
from metrics.stats.active_forecast import forecast_within_claims

DESIGN_NAMES = {
    "uniform": "Uniform random order",
    "stratified": "Stratified",
    "active": "Active",
}


def _gold_y(project: Project, claim_ids: np.ndarray) -> np.ndarray:
    """1 SUPPORTED, 0 otherwise, -1 without gold, in `claim_ids`' order."""
    at = {claim_id: i for i, claim_id in enumerate(claim_ids.tolist())}
    y = np.full(claim_ids.size, -1, dtype=np.int64)
    rows = Gold.objects.filter(claim__project=project).values_list("claim_id", "verdict")
    for claim_id, verdict in rows.iterator(chunk_size=10000):
        i = at.get(claim_id)
        if i is not None:
            y[i] = 1 if verdict == Verdict.SUPPORTED else 0
    return y


def _prediction(support: dict) -> np.ndarray:
    """The report's prediction: confidence, else the 0/1 verdict, 0.5 where unjudged."""
    judged = support["verdict"] != ""
    verdict01 = (support["verdict"] == Verdict.SUPPORTED).astype(float)
    score = np.where(np.isnan(support["confidence"]), verdict01, support["confidence"])
    return np.where(judged, score, 0.5)


def _entry(result, claims: int, answers: int) -> dict:
    bound = forecast_within_claims(result, claims=claims, answers=answers)
    return {
        "labels_total": None if result.labels_total is None else int(result.labels_total),
        "labels_more": bound.labels_more,
        "half_width_now": result.half_width_now,
        "within_claims": bound.reachable,
        "answers_more": bound.answers_more,
        "claims": bound.claims,
        "estimator": result.design,
    }


def design_preview(
    *, project: Project, run: JudgeRun | None, budget: int | None, target: float
) -> dict:
    """{"target", "labelled", "claims", "rows": [{"design", "name", …forecast}], "note"} for
    every design the inputs allow: uniform always; stratified and active with a finished run
    (active with a budget too)."""
    abstaining = set(
        Claim.objects.filter(project=project, answer__abstention=True).values_list("id", flat=True)
    )
    if run is not None:
        support = claim_support_probabilities(project=project, run=run)
    else:
        rows = list(
            Claim.objects.filter(project=project).order_by("id").values_list("id", "answer_id")
        )
        support = {
            "claim_id": np.array([r[0] for r in rows], dtype=np.int64),
            "answer_id": np.array([r[1] for r in rows], dtype=np.int64),
        }
    keep = np.array([c not in abstaining for c in support["claim_id"].tolist()], dtype=bool)
    claim_ids = support["claim_id"][keep]
    answers = support["answer_id"][keep]
    y01 = _gold_y(project, claim_ids)
    labelled = y01 >= 0
    y = np.where(labelled, y01, 0).astype(float)
    n_claims, n_answers = int(keep.sum()), int(pd.unique(answers).size)
    common = {"y": y, "labelled": labelled, "cluster": answers, "fpc": fpc_on()}
    out = {
        "target": target,
        "labelled": int(labelled.sum()),
        "claims": n_claims,
        "rows": [],
        "drawn_unequally": project.queue_design != Project.QueueDesign.UNIFORM,
    }
    if n_claims == 0:
        return _named(out, project)
    prediction = _prediction(support)[keep] if run is not None else None
    uniform = stats.labels_needed(
        target, "uniform_ppi" if prediction is not None else "uniform_gold",
        prediction=prediction, **common,
    )  # fmt: skip
    out["rows"].append({"design": "uniform", **_entry(uniform, n_claims, n_answers)})
    if run is None:
        return _named(out, project)
    strata = active_strata_names(support)[keep]
    codes, _ = pd.factorize(strata)
    big = np.bincount(codes).astype(float)
    small = np.bincount(codes[labelled], minlength=big.size).astype(float)
    pi = np.where(small > 0, small / big, 1.0)[codes]  # each stratum's sampling fraction
    stratified = stats.labels_needed(target, "stratified", pi=pi, strata=strata, **common)
    out["rows"].append({"design": "stratified", **_entry(stratified, n_claims, n_answers)})
    if budget:
        design_pi = active_probabilities(project=project, support=support, budget=budget)[keep]
        active = stats.labels_needed(
            target, "active", prediction=prediction, design_pi=design_pi, **common
        )
        out["rows"].append({"design": "active", **_entry(active, n_claims, n_answers)})
    return _named(out, project)


def _named(out: dict, project: Project) -> dict:
    for row in out["rows"]:
        row["name"] = DESIGN_NAMES[row["design"]]
        row["in_use"] = row["design"] == project.queue_design
    return out
