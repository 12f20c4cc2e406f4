"""How the project's gold claims were drawn (issue 33): the phases of queue designs their first
labels were drawn under, and the weights and census the estimators must use for them. The
audit-design section that reads them is `metrics.services.audit_design`."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd


@dataclass
class DesignPhases:
    name: str
    phases: list[dict]
    weight: np.ndarray | None
    census: np.ndarray | None
    census_name: str
    left_out: np.ndarray


DESIGN_WORDS = {
    "uniform": "uniform",
    "active": "active",
    "stratified": "stratified",
    "": "unrecorded",
}
PHASE_WORDS = {
    "uniform": "under the uniform design",
    "stratified": "under the stratified design",
    "active": "by the active queue",
    "": "outside the queue (gold with no recorded design)",
}


def no_phases(n: int) -> DesignPhases:
    """A design with no label drawn by the active queue: equal weights, one phase."""
    return DesignPhases("uniform", [], None, None, "", np.zeros(n, bool))


def design_phases(labels: pd.DataFrame, claim_ids: np.ndarray, gold: np.ndarray) -> DesignPhases:
    """How the gold claims were drawn, as the estimators must weight them (issue 33).

    `labels`: claim_id, design, inclusion_probability of every label drawn under a queue
    design, oldest first (`selectors.label_design_columns`).

    Each gold claim is drawn under the design of its first label saved through the queue
    (`Label.design`, with the π it recorded); a gold claim with none (imported gold, labels
    from before designs were recorded) is taken as chosen before the active queue drew, outside
    it: with the earlier phases, a stratum known exactly.

    - No gold drawn by the active queue: equal weights (uniform or stratified — today's figures
      exactly; strata are `audit_design_read`'s).
    - All of it drawn by the active queue: each claim weighted by 1/π (Hájek).
    - Mixed (e.g. uniform, then active): the design phases in the order they began. The claims
      labelled in the earlier phases are a fixed, fully audited set by the time the last phase
      draws from the rest, so they form a stratum of their own known exactly (N_h = n_h), and
      the last phase's labels estimate the rest of the project under the last design (1/π if it
      is active). Conditionally on the earlier phases every figure is then design-unbiased, so
      it is unconditionally too — whatever chose the earlier claims (a conditional, per-phase
      estimate; Kalton & Anderson 1986 discuss it beside the multiple-frame estimators). It uses
      the earlier labels for what they certainly tell — their own claims — and nothing more.
    """
    n = claim_ids.size
    none = no_phases(n)
    if labels.empty or not (labels["design"] == "active").any():
        drawn = labels["design"].unique().tolist() if not labels.empty else []
        return DesignPhases(
            "stratified" if "stratified" in drawn else "uniform" if drawn else "unrecorded",
            [],
            None,
            None,
            "",
            np.zeros(n, bool),
        )
    labels = labels[labels["claim_id"].isin(claim_ids)]
    first = labels.drop_duplicates("claim_id", keep="first")
    position = pd.Series(np.arange(n), index=claim_ids)
    at = position.loc[first["claim_id"].to_numpy()].to_numpy()
    has_gold = gold[at] >= 0
    at, first = at[has_gold], first[has_gold]
    if not len(first) or not (first["design"] == "active").any():
        return none
    design = np.full(n, "", dtype=object)
    design[at] = first["design"].to_numpy(dtype=object)
    pi = np.full(n, np.nan)
    pi[at] = first["inclusion_probability"].to_numpy(dtype=float)
    is_gold = gold >= 0
    # phases in the order they began (the first label drawn under each); gold with no recorded
    # design first, as chosen outside the queue
    order = list(dict.fromkeys(first["design"].tolist()))
    if (is_gold & (design == "")).any():
        order = ["", *[d for d in order if d != ""]]
    last = order[-1]
    active = is_gold & (design == "active")
    left_out = active & ~(np.isfinite(pi) & (pi > 0))
    weight = np.ones(n)
    if last == "active":
        weight[active & ~left_out] = 1.0 / pi[active & ~left_out]
        census = is_gold & ~active
    else:
        census = active & ~left_out
    census_words = ", then ".join(PHASE_WORDS.get(d, d) for d in order[:-1])
    census_name = (
        f"labelled {census_words} before the {DESIGN_WORDS.get(last, last)} queue (every claim "
        "audited)"
    )
    phases = [
        {
            "design": DESIGN_WORDS.get(d, d) if d else "no recorded design",
            "gold_claims": int((is_gold & (design == d)).sum()),
            "counted": (
                "as the last phase: its labels estimate the claims not labelled before it"
                + (", each weighted by 1/π (Hájek)" if d == "active" else "")
                if d == last
                else "as a stratum of its own, every claim of it audited (known exactly)"
            ),
        }
        for d in order
    ]
    has_census = bool(census.any())
    return DesignPhases(
        name=(
            ", then ".join(DESIGN_WORDS.get(d, d) if d else "outside the queue" for d in order)
            if has_census
            else "active"
        ),
        phases=phases if has_census else [],
        weight=weight if last == "active" else None,
        census=census if has_census else None,
        census_name=census_name,
        left_out=left_out,
    )


# ------------------------------------------------------------------------------------------
# a design-based rate, as the report's blocks show it
