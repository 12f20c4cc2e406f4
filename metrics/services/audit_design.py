"""The audit's design as the report reads it: each claim's design stratum, which gold claims are
in the audit sample, and the design-based rate every gold figure is given by.

DESIGN.md "Sampling": answers are the sampling unit (every interval is clustered by answer) and
gold carries over to the project only through the design that chose it (every rate is
stratified, Σ_h N_h/N · rate_h). `metrics.stats.design` holds the arithmetic; this module turns
the project's rows into its inputs.

A claim's design stratum:
- the `stratum` a file gave the claim (`Claim.stratum`), if any;
- else, for a gold claim, the queue stratum its first label made inside the queue was saved
  under (`Label.stratum`, e.g. ``{"risk_category": "health"}``, or the stratified queue
  design's ``{"active_stratum": "SUPPORTED · conf 0.9–1 · health"}``, named "stratum …");
- else the queue stratum whose restriction the claim satisfies (so a stratum's N_h counts every
  claim a restricted queue could have served, labelled or not; the most specific first);
- else the project's single default stratum.

Labels saved outside the queue's random order (`outside_queue`, reached with j/k) are not a
random draw: a gold claim whose every label was made so is left out of the audit sample unless
the project counts them (`Project.count_outside_queue_labels`), and the report says how many.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from django.conf import settings

from metrics import format as fmt
from metrics import selectors, stats
from metrics.services.design_phases import DesignPhases, design_phases

DEFAULT_STRATUM = "whole project"


def _stratum_name(recorded: dict) -> str:
    """A queue stratum as the report names it ("" for the whole-project queue)."""
    parts = []
    if recorded.get("active_stratum"):
        # The stratified queue design's stratum (issue 14): judge verdict × band × risk.
        parts.append(f"stratum {recorded['active_stratum']}")
    if recorded.get("risk_category"):
        parts.append(f"risk category {recorded['risk_category']}")
    if recorded.get("judge_verdict"):
        run = f", run {recorded['judge_run']}" if recorded.get("judge_run") else ""
        parts.append(f"judge {recorded.get('judge')} verdict {recorded['judge_verdict']}{run}")
    return "; ".join(parts)


@dataclass
class AuditDesign:
    """Per report claim (the `_Data.claims` rows): the design stratum code; and the counts of
    what was left out. `names[code]` is the stratum's name."""

    stratum: np.ndarray
    names: list[str]
    outside_queue_labels: int = 0
    gold_left_out: int = 0
    counted_outside_queue: bool = False
    sources: dict[str, str] = field(default_factory=dict)  # name -> "file" / "queue" / "default"
    # Per report claim: its design weight 1/π (None: equal weights, every design but active).
    weight: np.ndarray | None = None
    # The design the labels were drawn under: "uniform", "stratified", "active", or phases
    # joined by ", then " ("uniform, then active"); `phases` says how each is counted.
    name: str = "uniform"
    phases: list[dict] = field(default_factory=list)
    census: np.ndarray | None = None  # per report claim: in a stratum known exactly
    active_left_out: int = 0  # gold drawn by the active queue with no recorded π

    def sizes(self, mask: np.ndarray | None = None) -> dict[int, float]:
        """N_h: the claims of each stratum (within `mask`), for every stratum that has any."""
        codes = self.stratum if mask is None else self.stratum[mask]
        counts = np.bincount(codes, minlength=len(self.names))
        return {code: float(n) for code, n in enumerate(counts) if n > 0}

    @property
    def n_strata(self) -> int:
        return int(np.count_nonzero(np.bincount(self.stratum, minlength=len(self.names))))


def _label_strata(project, claim_ids: np.ndarray) -> pd.DataFrame:
    """Per labelled claim with a non-empty label stratum: its first in-queue stratum name, and
    whether every such label was made outside the queue. JSON is parsed once per distinct text."""
    labels = selectors.label_stratum_columns(project=project)
    labels = labels[labels["claim_id"].isin(claim_ids)]
    if labels.empty:
        return pd.DataFrame({"claim_id": [], "name": [], "recorded": [], "outside": []}).astype(
            {"claim_id": np.int64, "outside": bool}
        )
    parsed = {text: json.loads(text) for text in labels["stratum"].unique()}
    outside = {text: bool(value.get("outside_queue")) for text, value in parsed.items()}
    names = {
        text: _stratum_name({k: v for k, v in value.items() if k != "outside_queue"})
        for text, value in parsed.items()
    }
    labels = labels.assign(
        outside=labels["stratum"].map(outside).astype(bool),
        name=labels["stratum"].map(names),
        recorded=labels["stratum"],
    )
    return labels


def _queue_condition(project, recorded: dict, data) -> np.ndarray:
    """Which report claims a queue restricted to `recorded` could serve."""
    mask = np.ones(data.claim_ids.size, dtype=bool)
    if recorded.get("active_stratum"):
        ids = selectors.active_stratum_claim_ids(project=project, name=recorded["active_stratum"])
        mask &= np.isin(data.claim_ids, ids)
    if recorded.get("risk_category"):
        mask &= data.claims["risk_category"].to_numpy() == recorded["risk_category"]
    if recorded.get("judge_verdict"):
        if not recorded.get("judge_run"):
            # No run recorded: which claims the queue could serve is unknown; only the claims
            # labelled under it are in the stratum (its N_h is then its gold n_h).
            return np.zeros(data.claim_ids.size, dtype=bool)
        ids = selectors.run_verdict_claim_ids(
            run_id=int(recorded["judge_run"]), verdict=recorded["judge_verdict"]
        )
        mask &= np.isin(data.claim_ids, ids)
    return mask


def audit_design_read(*, project, data) -> AuditDesign:
    """The design of `data`'s claims; sets the gold of claims left out of the audit to −1.

    `data` is a `metrics.services.inputs._Data` with `claims` (gold, risk_category, stratum)
    already read. Vectorised: one pass per distinct stratum, never per claim."""
    n = data.claim_ids.size
    gold = data.claims["gold"].to_numpy().copy()
    own = data.claims["stratum"].to_numpy(dtype=object) if "stratum" in data.claims else None
    names = np.full(n, "", dtype=object)
    sources: dict[str, str] = {}
    if own is not None:
        has_own = own != ""
        names[has_own] = own[has_own]
        sources.update(dict.fromkeys(pd.unique(own[has_own]), "file"))
    labels = _label_strata(project, data.claim_ids)
    counted = bool(project.count_outside_queue_labels)
    position = pd.Series(np.arange(n), index=data.claim_ids)
    outside_labels = 0
    left_out = 0
    if not labels.empty:
        inside = labels[~labels["outside"]]
        outside = labels[labels["outside"]]
        outside_labels = len(outside)
        # The first label made inside the queue gives a claim its stratum; with the setting on,
        # an outside-queue label's own recorded restriction counts too.
        pool = labels if counted else inside
        first = pool.drop_duplicates("claim_id", keep="first")
        at = position.loc[first["claim_id"].to_numpy()].to_numpy()
        free = (names[at] == "") & (gold[at] >= 0)
        names[at[free]] = first["name"].to_numpy(dtype=object)[free]
        if not counted and len(outside):
            # A claim is out of the audit only if every one of its labels was outside the queue
            # (labels with an empty stratum are whole-project queue labels, inside).
            only_outside = np.setdiff1d(outside["claim_id"].unique(), inside["claim_id"].unique())
            only_outside = np.setdiff1d(
                only_outside, selectors.claims_with_whole_queue_labels(claim_ids=only_outside)
            )
            at_out = position.loc[only_outside].to_numpy()
            at_out = at_out[gold[at_out] >= 0]
            left_out = int(at_out.size)
            gold[at_out] = -1
            outside_labels = int(outside["claim_id"].isin(only_outside).sum())
        # Every queue stratum in use also claims the unlabelled claims its restriction covers.
        used = {
            name: json.loads(text)
            for name, text in zip(pool["name"], pool["recorded"], strict=True)
            if name
        }
        for name, recorded in sorted(used.items(), key=lambda item: -len(item[1])):
            sources[name] = "queue"
            recorded = {k: v for k, v in recorded.items() if k != "outside_queue"}
            free = (names == "") & _queue_condition(project, recorded, data)
            names[free] = name
    names[names == ""] = DEFAULT_STRATUM
    phases = design_phases(selectors.label_design_columns(project=project), data.claim_ids, gold)
    design = assemble_design(
        names,
        gold,
        phases,
        sources=sources,
        outside_queue_labels=outside_labels,
        gold_left_out=left_out,
        counted_outside_queue=counted,
    )
    data.claims["gold"] = gold
    return design


def assemble_design(
    names: np.ndarray, gold: np.ndarray, phases: DesignPhases, **read
) -> AuditDesign:
    """The design from each claim's stratum name and the design phases (`design_phases`):
    the earlier phases' claims become the stratum known exactly, gold drawn by the active queue
    with no π leaves the audit (`gold` is changed in place to −1 there). `read`: the other
    `AuditDesign` fields as `audit_design_read` found them."""
    names = names.copy()
    sources = dict(read.pop("sources", {}))
    if phases.census is not None:
        names[phases.census] = phases.census_name
        sources[phases.census_name] = "design"
    gold[phases.left_out] = -1
    codes, uniques = pd.factorize(names)
    uniques = [str(u) for u in uniques]
    if DEFAULT_STRATUM in uniques:
        sources[DEFAULT_STRATUM] = "default"
    return AuditDesign(
        stratum=codes.astype(np.int64),
        names=uniques,
        sources=sources,
        weight=phases.weight,
        name=phases.name,
        phases=phases.phases,
        census=phases.census,
        active_left_out=int(phases.left_out.sum()),
        **read,
    )


def _estimate_fields(est: stats.DesignEstimate) -> dict:
    return {
        "design_effect": est.design_effect,
        "answers": est.n_clusters,
        "strata": est.n_strata,
        "unseen_share": est.unseen_share,
        "interval_method": est.method,
    }


def fpc_on(census: bool = False) -> bool:
    """Whether intervals carry the finite-population correction (the project's claims are the
    population; `FAITHAUDIT_FINITE_POPULATION_CORRECTION`, on by default; it changes a figure
    only where the audit holds 5% of the claims or more, `stats.design.FPC_MIN_FRACTION`).
    Always with `census` (a design whose earlier phases form a stratum audited whole): that
    stratum is known exactly, which only the correction says."""
    return census or bool(getattr(settings, "FAITHAUDIT_FINITE_POPULATION_CORRECTION", True))


def design_rate(
    outcome: np.ndarray,
    answer_ids: np.ndarray,
    strata: np.ndarray | None = None,
    sizes: dict | None = None,
    weights: np.ndarray | None = None,
    names: list[str] | None = None,
    census: bool = False,
) -> dict:
    """A 0/1 rate over claims with its interval clustered by answer and stratified.

    `outcome` and `answer_ids` (and `strata`, codes) are per sampled claim; `sizes` maps each
    stratum code to its claims in the population (N_h); `weights` the claims' design weights
    1/π (an active design); `names[code]` the strata's names for the method sentence. With
    sizes given the interval is finite-population corrected (`fpc_on`). With one stratum, one
    claim per answer and a small audit the value and interval are exactly `_proportion`'s
    (Wilson)."""
    outcome = np.asarray(outcome, dtype=float)
    n = int(outcome.size)
    k = int(outcome.sum())
    if n == 0:
        return {
            "value": math.nan,
            "ci": (math.nan, math.nan),
            "numerator": 0,
            "denominator": 0,
            "design_effect": math.nan,
            "answers": 0,
            "strata": 0,
            "unseen_share": 1.0 if sizes else 0.0,
            "interval_method": "No claims to estimate from.",
        }
    strata, sizes = named_strata(strata, sizes, names)
    est = stats.design_proportion(
        outcome,
        answer_ids,
        strata,
        sizes,
        weights=weights,
        fpc=sizes is not None and fpc_on(census),
    )
    return {
        "value": est.value,
        "ci": est.ci,
        "numerator": k,
        "denominator": n,
        **_estimate_fields(est),
    }


def named_strata(strata, sizes, names):
    """Stratum codes and their sizes keyed by the strata's names (so every method sentence
    names a stratum as the design block does); unchanged without names. The codes' order of
    appearance is kept, so every figure is the same to the last bit."""
    if names is None or strata is None:
        return strata, sizes
    lookup = np.asarray(names, dtype=object)
    strata = lookup[np.asarray(strata, dtype=np.int64)]
    if sizes is not None:
        sizes = {names[code]: value for code, value in sizes.items()}
    return strata, sizes


def estimate_fields(est: stats.DesignEstimate) -> dict:
    """The design fields of an estimate from `metrics.stats.design` (for the judge audit)."""
    return _estimate_fields(est)


def design_sentence(design: AuditDesign | None, answers: int, strata_used: int) -> str:
    """ "95% interval clustered by answer, 60 answers; stratified by …, 3 strata"."""
    text = f"95% interval clustered by answer, {answers} answer{'s' if answers != 1 else ''}"
    if strata_used > 1 and design is not None:
        text += (
            f"; stratified by design stratum (weights N_h/N of the project's claims), "
            f"{strata_used} strata"
        )
    return text


def outside_queue_sentence(design: AuditDesign | None) -> str:
    if design is None or not design.outside_queue_labels:
        return ""
    n = design.outside_queue_labels
    labels = f"{n} label{'s' if n != 1 else ''} made outside the queue"
    if design.counted_outside_queue:
        return f"{labels} {'are' if n != 1 else 'is'} counted in the audit (project setting)."
    return f"{labels} {'are' if n != 1 else 'is'} not in the audit."


# ------------------------------------------------------------------------------------------
# the report's "design" section


HEADLINE_DESIGN_EFFECTS = (
    ("faithfulness", ("faithfulness", "pooled"), "Faithfulness (gold)"),
    ("hallucination_rate", ("hallucination_rate",), "Hallucination rate (gold)"),
    ("coverage", ("coverage",), "Coverage"),
)
# After the estimators' own (`metrics.services.estimators`, passed in by the report).
JUDGE_DESIGN_EFFECTS = (
    ("sensitivity", "Judge sensitivity"),
    ("specificity", "Judge specificity"),
    ("agreement", "Judge agreement with gold"),
    ("kappa", "Judge kappa"),
)


def _dig(block: dict, path: tuple) -> dict:
    for key in path:
        block = block.get(key, {}) if isinstance(block, dict) else {}
    return block


def design_section(data, figures: Mapping, estimator_effects: tuple = ()) -> dict:
    """Strata with N_h, gold n_h and weight; what the audit cannot see; labels left out; each
    headline's design effect (its variance over the independent-claims variance).
    `figures`: the report's sections it reads (`faithfulness`, `hallucination_rate`,
    `coverage`, and `judge` if any).
    `estimator_effects`: (report key, label) of each estimator of the true faithfulness, in
    the order shown, listed before the judge's other figures."""
    design: AuditDesign = data.design
    gold = data.claims["gold"].to_numpy() >= 0
    big_n = np.bincount(design.stratum, minlength=len(design.names))
    small_n = np.bincount(design.stratum[gold], minlength=len(design.names))
    total = int(big_n.sum())
    seen_total = int(big_n[small_n > 0].sum())
    strata = [
        {
            "name": name,
            "source": design.sources.get(name, "queue"),
            "claims": int(big_n[code]),
            "gold": int(small_n[code]),
            "weight": float(big_n[code] / seen_total) if small_n[code] and seen_total else 0.0,
            "share_of_project": float(big_n[code] / total) if total else 0.0,
        }
        for code, name in enumerate(design.names)
        if big_n[code]
    ]
    effects = [
        {"key": name, "figure": label, "design_effect": _dig(figures, path).get("design_effect")}
        for name, path, label in HEADLINE_DESIGN_EFFECTS
    ]
    judge = figures.get("judge")
    if judge:
        headline = judge.get("headline_estimate")
        effects.extend(
            {
                "key": f"judge_{key}",
                "figure": label + (" (headline)" if key == headline else ""),
                "design_effect": judge[key].get("design_effect")
                if isinstance(judge.get(key), dict)
                else judge.get(f"{key}_design_effect"),
            }
            for key, label in (*estimator_effects, *JUDGE_DESIGN_EFFECTS)
        )
    answers = int(np.unique(data.answer_ids()[gold]).size)
    pooled = figures["faithfulness"]["pooled"]
    return {
        "design": design.name,
        "weighted": design.weight is not None,
        "phases": design.phases,
        "active_gold_left_out": design.active_left_out,
        "strata": strata,
        "n_strata": len(strata),
        "answers_audited": answers,
        "gold_claims": int(gold.sum()),
        "claims_per_audited_answer": float(gold.sum() / answers) if answers else math.nan,
        "unseen_share": float(1 - seen_total / total) if total else 0.0,
        "outside_queue": {
            "labels": design.outside_queue_labels,
            "gold_claims_left_out": design.gold_left_out,
            "counted": design.counted_outside_queue,
            "text": outside_queue_sentence(design),
        },
        "design_effects": effects,
        "method": design_method(design, pooled, strata),
    }


def design_method(design: AuditDesign, pooled: dict, strata: list[dict]) -> str:
    """The method sentence every gold figure shares."""
    used = sum(1 for s in strata if s["gold"])
    text = design_sentence(design, int(pooled.get("answers") or 0), used)
    names = [s["name"] for s in strata if s["gold"]]
    if used > 1:
        text = text.replace("by design stratum", "by design stratum (" + ", ".join(names) + ")")
    unseen = [s for s in strata if not s["gold"]]
    if unseen and any(s["gold"] for s in strata):
        share = sum(s["share_of_project"] for s in unseen)
        text += (
            f"; {fmt.percent(share)} of the project's claims are in strata with no gold ("
            + ", ".join(s["name"] for s in unseen)
            + ") and are not estimated"
        )
    text += "."
    named = design_name_sentence(design).strip()
    text = f"{named} {text}" if named else text
    outside = outside_queue_sentence(design)
    return f"{text} {outside}" if outside else text


def design_name_sentence(design: AuditDesign) -> str:
    """Which design the labels were drawn under and how the figures weight them."""
    if design.phases:
        parts = "; ".join(
            f"{p['design']} ({p['gold_claims']} gold, {p['counted']})" for p in design.phases
        )
        text = f"Labels drawn in {len(design.phases)} phases: {parts}."
    elif design.weight is not None:
        text = (
            "Labels drawn by the active queue: every gold figure weights each label by 1/π, the "
            "inverse of the probability it was drawn with (Hájek)."
        )
    else:
        # uniform and stratified: the sentence that follows already says how they weigh
        text = ""
    if design.active_left_out:
        n = design.active_left_out
        text += (
            f" {n} gold claim{'s' if n != 1 else ''} drawn by the active queue with no recorded "
            "inclusion probability left out."
        )
    return text


def audited_unequally(judged) -> bool:
    """Whether the audited claims stand for unequal numbers of the project's claims: labels
    drawn with unequal π (the active queue), or design strata audited at different rates
    (n_h/N_h differ). The figures with no design-weighted version (calibration, ECE, the
    frontier, CRC, the per-category corrections) are then not shown as the headline's."""
    if judged.weights is not None:
        return True
    strata = judged.strata[judged.audited]
    codes, counts = np.unique(strata, return_counts=True)
    if codes.size <= 1:
        return False
    rates = counts / np.array([judged.sizes[code] for code in codes], dtype=float)
    return bool(np.ptp(rates) > 1e-12 * rates.max())
