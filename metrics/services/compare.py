"""Paired comparison of two systems of a project on the questions both answered.

select (`metrics.selectors.system_answer_columns`, `system_claim_columns`, the judge's verify
verdicts) → per-unit arrays (claims, answers) → `metrics.stats.paired` → a JSON-safe dict:
each rate's B − A from gold alone and, when the judge covers both systems, PPI++ on the
per-question differences, the headline chosen as the report chooses its own (the narrowest
valid interval), by risk category, the questions where B got worse first, and the finding in
words. `compare_gate` is what `manage.py compare --fail-if-worse` decides on.

What counts (as the report, DESIGN.md "Metrics: definitions"): claim rates are over claims of
answers that are not abstentions; a per-answer rate needs the verdict of every claim of the
answer (gold: an answer all of whose claims have gold); the abstention rate is over all answers
and needs no verdict. Gold carries over through the audit's design, as in the report: each
claim's design stratum (`metrics.services.audit_design`, weights N_h/N of each system's claims)
and, under the active design, its inclusion probability π (each gold claim weighted 1/π), in
`metrics.stats.paired.paired_design_difference`; gold claims whose labels were all made outside
the queue are left out, as the report leaves them out. With one stratum and no π (a simple
random sample) the estimators are today's, figure for figure.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from django.utils import timezone

from annotate.models import Answer, Claim, Project, System
from annotate.vocabulary import UNPARSEABLE, VERDICT_VALUES, Verdict
from judges.models import Judge
from metrics import format as fmt
from metrics import selectors
from metrics.services.active_audit import design_in_use
from metrics.services.audit_design import audit_design_read
from metrics.services.common import _codes, _newest_per_claim, json_safe
from metrics.services.compare_pairwise_human import pairwise_human_block, sign_test_words
from metrics.services.instruments import _instrument_keys
from metrics.stats.agreement import sensitivity_specificity
from metrics.stats.paired import (
    PairedEstimate,
    paired_design_difference,
    paired_gold_difference,
    paired_ppi_difference,
    proportions_equal,
)
from metrics.stats.pairwise import pairwise_both_orders
from metrics.stats.prevalence import headline_estimate

__all__ = [
    "COMPARE_WORST_LISTED",
    "model_family",
    "RATES",
    "SystemNotFound",
    "compare_gate",
    "system_label",
    "system_resolve",
    "systems_compare",
]

COMPARE_WORST_LISTED = 50


@dataclass(frozen=True)
class Rate:
    key: str
    title: str
    unit: str  # "claim" or "answer"
    higher_is_better: bool
    judged: bool = True  # False: known for every unit without a verdict (abstention)


RATES = (
    Rate("faithfulness", "faithfulness (pooled over claims)", "claim", True),
    Rate("faithfulness_per_answer", "faithfulness (mean per answer)", "answer", True),
    Rate("contradiction_rate", "contradiction rate", "claim", False),
    Rate("unsupported_answer_share", "answers with an unsupported claim", "answer", False),
    Rate("abstention_rate", "abstention rate", "answer", False, judged=False),
)


class SystemNotFound(LookupError):
    """A system reference that names no system (or several) of the project; says which exist."""


def system_label(system: System) -> str:
    return f"{system.name}@{system.version}" if system.version else system.name


def system_resolve(*, project: Project, ref: str) -> System:
    """The project's system named `ref`: "NAME@VERSION", or a NAME only one version has."""
    name, _, version = str(ref).strip().partition("@")
    systems = System.objects.filter(project=project, name=name.strip())
    if version:
        systems = systems.filter(version=version.strip())
    found = list(systems[:2])
    if len(found) == 1:
        return found[0]
    known = ", ".join(system_label(s) for s in System.objects.filter(project=project)) or "none"
    if found:
        raise SystemNotFound(
            f"{ref!r} names several versions of {name!r}: write NAME@VERSION "
            f"(systems of this project: {known})."
        )
    raise SystemNotFound(f"No system {ref!r} in this project (systems: {known}).")


# -- reading ------------------------------------------------------------------------------------


def _no_verdicts() -> pd.DataFrame:
    # Integer ids, as the claims' (an untyped empty column is float, and pandas refuses to
    # merge it with the claims' ids).
    return pd.DataFrame({"claim_id": pd.Series([], dtype="int64"), "judge": []})


def _judge_verdicts(judge: Judge | None) -> tuple[pd.DataFrame, str, str]:
    """The newest instrument's newest parseable verdict per claim (claim_id, judge), its name
    and its model."""
    if judge is None:
        return _no_verdicts(), "", ""
    verdicts = selectors.judge_verify_columns(judge=judge)
    keys = _instrument_keys(verdicts)
    if not keys:
        return _no_verdicts(), judge.name, judge.model
    model, prompt_version = keys[0]
    part = verdicts[(verdicts["model"] == model) & (verdicts["prompt_version"] == prompt_version)]
    newest = _newest_per_claim(part)[["claim_id", "verdict"]].rename(columns={"verdict": "judge"})
    name = f"{judge.name} ({model or 'no model'}, prompt {prompt_version})"
    return newest, name, model or judge.model


class _Pair:
    """The two systems' answers on shared questions and their claims, as aligned columns."""

    def __init__(self, *, project: Project, a: System, b: System, judge: Judge | None):
        answers = selectors.system_answer_columns(project=project, system_ids=[a.pk, b.pk])
        answers["side"] = np.where(answers["system_id"] == b.pk, 1, 0)
        sides = answers.groupby("question_key")["side"].nunique()
        self.questions_a = int((answers["side"] == 0).sum())
        self.questions_b = int((answers["side"] == 1).sum())
        shared = sides.index[sides == 2]
        answers = answers[answers["question_key"].isin(shared)].reset_index(drop=True)
        # A question's risk category is its A answer's (the two agree in any sane import).
        risk = answers[answers["side"] == 0].drop_duplicates("question_key")
        self.risk_of = risk.set_index("question_key")["risk_category"]
        claims = selectors.system_claim_columns(project=project, system_ids=[a.pk, b.pk])
        claims = claims.merge(
            answers[["answer_id", "side", "question_key", "abstention", "risk_category"]],
            on="answer_id",
        )
        verdicts, self.judge_name, self.judge_model = _judge_verdicts(judge)
        claims = claims.merge(verdicts, on="claim_id", how="left")
        claims["judge"] = claims["judge"].astype(object).fillna("").astype(str)
        claims["gold"] = claims["gold"].where(claims["gold"].isin(VERDICT_VALUES), "")
        self.answers = answers
        self.claims = claims[~claims["abstention"]].reset_index(drop=True)
        self.n_questions = int(len(shared))
        self.design = _read_design(project, self.claims)

    def claim_design(self) -> tuple[np.ndarray | None, np.ndarray | None]:
        """(stratum, weight) per claim unit; (None, None) for a simple random sample."""
        if self.design["kind"] == "simple":
            return None, None
        return self.design["stratum"], self.design["weight"]

    # Unit arrays: (gold value or nan, judge value or nan, side, question key) per unit.

    def claim_units(self, verdict: str) -> tuple[np.ndarray, ...]:
        c = self.claims
        gold = np.where(c["gold"] != "", (c["gold"] == verdict).astype(float), np.nan)
        judge = np.where(c["judge"] != "", (c["judge"] == verdict).astype(float), np.nan)
        return gold, judge, c["side"].to_numpy(), c["question_key"].to_numpy()

    def answer_units(self, rate: str) -> tuple[np.ndarray, ...]:
        answers = self.answers
        if rate == "abstention_rate":
            value = answers["abstention"].to_numpy(dtype=float)
            return value, value, answers["side"].to_numpy(), answers["question_key"].to_numpy()
        c = self.claims
        per = pd.DataFrame(
            {
                "answer_id": c["answer_id"],
                "gold_s": c["gold"] == Verdict.SUPPORTED,
                "gold_has": c["gold"] != "",
                "judge_s": c["judge"] == Verdict.SUPPORTED,
                "judge_has": c["judge"] != "",
            }
        ).groupby("answer_id")
        table = per.agg(
            n=("gold_s", "size"),
            gold_s=("gold_s", "sum"),
            gold_has=("gold_has", "sum"),
            judge_s=("judge_s", "sum"),
            judge_has=("judge_has", "sum"),
        )
        table = table.join(answers.set_index("answer_id")[["side", "question_key"]])
        n = table["n"].to_numpy(dtype=float)
        if rate == "faithfulness_per_answer":
            gold = table["gold_s"].to_numpy() / n
            judge = table["judge_s"].to_numpy() / n
        else:  # unsupported_answer_share
            gold = (table["gold_s"].to_numpy() < n).astype(float)
            judge = (table["judge_s"].to_numpy() < n).astype(float)
        gold = np.where(table["gold_has"].to_numpy() == n, gold, np.nan)
        judge = np.where(table["judge_has"].to_numpy() == n, judge, np.nan)
        return gold, judge, table["side"].to_numpy(), table["question_key"].to_numpy()

    def answer_design(self) -> tuple[np.ndarray | None, np.ndarray | None]:
        """(stratum, weight) per answer unit, in `answer_units`' order (by answer id): an
        answer's stratum is its first claim's, its weight the mean of its claims' (exact in the
        answer-at-a-time order, where an answer's claims share one π)."""
        if self.design["kind"] == "simple":
            return None, None
        per = pd.DataFrame(
            {
                "answer_id": self.claims["answer_id"],
                "stratum": self.design["stratum"],
                "weight": self.design["weight"],
            }
        ).groupby("answer_id")
        table = per.agg(stratum=("stratum", "first"), weight=("weight", "mean"))
        return table["stratum"].to_numpy(), table["weight"].to_numpy()


def _read_design(project: Project, claims: pd.DataFrame) -> dict[str, Any]:
    """The audit's design over the pair's claims (modifies `claims["gold"]`: gold left out of
    the audit becomes ""). kind "simple" (one stratum, no π), "stratified" or "weighted"."""
    frame = claims[["claim_id", "answer_id", "gold", "stratum"]].copy()
    frame["risk_category"] = claims["risk_category"].to_numpy(dtype=object)
    frame["gold"] = _codes(frame["gold"].where(frame["gold"] != ""))
    had_gold = frame["gold"].to_numpy() >= 0
    data = _DesignData(frame)
    design = audit_design_read(project=project, data=data)  # replaces data.claims["gold"]
    left_out_audit = int((had_gold & (data.claims["gold"].to_numpy() < 0)).sum())
    gold = claims["gold"].where(data.claims["gold"].to_numpy() >= 0, "")
    labels = selectors.label_design_columns(project=project)
    labels = labels[labels["claim_id"].isin(claims["claim_id"])]
    drawn = design_in_use(project, labels["design"].tolist())
    weight = np.ones(len(claims))
    left_out_pi = 0
    if drawn == "active":
        gold, weight, left_out_pi = _active_weights(claims, labels, gold, weight)
    claims["gold"] = gold
    names = np.asarray(design.names, dtype=object)[design.stratum] if len(claims) else []
    has_gold = (gold != "").to_numpy()
    varied = bool(has_gold.any() and np.ptp(weight[has_gold]) > 0)
    n_strata = int(pd.unique(np.asarray(names, dtype=object)).size)
    kind = "stratified" if n_strata > 1 else "weighted" if varied else "simple"
    strata = []
    if n_strata > 1:
        counts = pd.DataFrame({"name": names, "gold": has_gold, "side": claims["side"]})
        for name, rows in counts.groupby("name", sort=False):
            strata.append(
                {
                    "name": str(name),
                    "claims": [int((rows["side"] == side).sum()) for side in (0, 1)],
                    "gold": [int((rows["gold"] & (rows["side"] == side)).sum()) for side in (0, 1)],
                }
            )
    return {
        "kind": kind,
        "queue_design": drawn,
        "stratum": np.asarray(names, dtype=object),
        "weight": weight,
        "strata": strata,
        "gold_left_out": left_out_audit + left_out_pi,
        "text": _design_text(kind, n_strata, varied, left_out_pi, left_out_audit),
    }


def _active_weights(claims: pd.DataFrame, labels: pd.DataFrame, gold: pd.Series, weight):
    """Under the active design: (gold, weight 1/π per claim, gold claims left out for having
    no recorded π)."""
    left_out_pi = 0
    active = labels[labels["design"] == "active"].dropna(subset=["inclusion_probability"])
    active = active[active["inclusion_probability"] > 0]
    pi = (
        active.drop_duplicates("claim_id")
        .set_index("claim_id")["inclusion_probability"]
        .reindex(claims["claim_id"])
        .to_numpy(dtype=float)
    )
    has_pi = np.isfinite(pi)
    if (has_pi & (gold != "").to_numpy()).any():
        # Only labels drawn under the design have a known π: the others are left out
        # (as the report's active headline leaves them out); no gold claim with a π
        # (gold imported, or labelled before the design) leaves the gold unweighted.
        no_pi = (gold != "").to_numpy() & ~has_pi
        left_out_pi = int(no_pi.sum())
        gold = gold.where(~no_pi, "")
        weight = np.where(has_pi, 1.0 / np.where(has_pi, pi, 1.0), 1.0)
    return gold, weight, left_out_pi


def _design_text(kind: str, n_strata: int, varied: bool, left_out_pi: int, left_out_audit: int):
    """The comparison's sentence on how the audit's design weighs the gold."""
    if kind == "simple":
        text = (
            "The audit's gold is a simple random sample here (one design stratum, no inclusion "
            "probabilities): each gold claim counts once."
        )
    else:
        parts = []
        if n_strata > 1:
            parts.append(
                f"stratified over {n_strata} design strata, each weighted by its share of each "
                "system's claims (N_h/N), variance by stratum"
            )
        if varied:
            parts.append(
                "each gold claim weighted by 1/π, the inclusion probability the active design "
                "drew it with"
            )
        text = "Gold is weighted by the audit's design: " + "; ".join(parts) + "."
    if left_out_pi:
        text += (
            f" {left_out_pi} gold claim{'s' if left_out_pi != 1 else ''} with no recorded "
            "inclusion probability (labelled under another design) left out."
        )
    if left_out_audit:
        text += (
            f" {left_out_audit} gold claim{'s' if left_out_audit != 1 else ''} labelled only "
            "outside the queue left out, as in the report."
        )
    return text


class _DesignData:
    """What `audit_design_read` reads of the report's `_Data`, for the pair's claims."""

    def __init__(self, frame: pd.DataFrame) -> None:
        self.claims = frame
        self.claim_ids = frame["claim_id"].to_numpy(dtype=np.int64)


# -- estimating ---------------------------------------------------------------------------------


def _estimates(
    gold, judge, side, question, *, judged: bool, stratum=None, weight=None
) -> dict[str, Any]:
    """`stratum` and `weight` (per unit): the audit's design; None for a simple random
    sample (today's estimators)."""
    has_gold = ~np.isnan(gold)
    designed = stratum is not None
    if designed:
        gold_only = paired_design_difference(gold, side, question, stratum=stratum, weight=weight)
    else:
        gold_only = paired_gold_difference(gold[has_gold], side[has_gold], question[has_gold])
    ppi: PairedEstimate | None = None
    if judged:
        has_judge = ~np.isnan(judge)
        covers_both = has_judge.any() and {0, 1} <= set(side[has_judge].tolist())
        if covers_both and designed:
            ppi = paired_design_difference(
                gold[has_judge],
                side[has_judge],
                question[has_judge],
                judge=judge[has_judge],
                stratum=stratum[has_judge],
                weight=weight[has_judge],
            )
        elif covers_both:
            ppi = paired_ppi_difference(
                gold[has_judge], judge[has_judge], side[has_judge], question[has_judge]
            )
    head = headline_estimate(
        gold_only.as_dict() if math.isfinite(gold_only.value) else None,
        None,
        ppi.as_dict() if ppi is not None and math.isfinite(ppi.value) else None,
    )
    return {
        "gold_only": gold_only.as_dict(),
        "ppi": ppi.as_dict() if ppi is not None else None,
        "headline": {
            "choice": head["choice"],
            "value": head["value"],
            "ci": list(head["ci"]),
            "reason": head["reason"],
        },
    }


def _rate_block(pair: _Pair, rate: Rate) -> dict[str, Any]:
    if rate.unit == "claim":
        verdict = Verdict.CONTRADICTED if rate.key == "contradiction_rate" else Verdict.SUPPORTED
        units = pair.claim_units(verdict)
        stratum, weight = pair.claim_design()
    else:
        units = pair.answer_units(rate.key)
        stratum, weight = pair.answer_design()
    if not rate.judged:
        # Observed on every answer: no judge, no sample, no design; "gold" is the answer's
        # own flag.
        gold, _judge, side, question = units
        block = _estimates(gold, gold, side, question, judged=False)
    else:
        block = _estimates(*units, judged=True, stratum=stratum, weight=weight)
    block.update(title=rate.title, unit=rate.unit, higher_is_better=rate.higher_is_better)
    return block


def _by_risk_category(pair: _Pair) -> list[dict[str, Any]]:
    """Faithfulness (pooled) B − A per risk category of the shared questions."""
    gold, judge, side, question = pair.claim_units(Verdict.SUPPORTED)
    stratum, weight = pair.claim_design()
    risk = pd.Series(question).map(pair.risk_of).fillna("none").to_numpy()
    rows = []
    for category in sorted(set(pair.risk_of.tolist())):
        mask = risk == category
        block = _estimates(
            gold[mask],
            judge[mask],
            side[mask],
            question[mask],
            judged=True,
            stratum=None if stratum is None else stratum[mask],
            weight=None if weight is None else weight[mask],
        )
        rows.append(
            {
                "risk_category": category,
                "questions": int((pair.risk_of == category).sum()),
                **block,
            }
        )
    return rows


# -- the judge, per system -----------------------------------------------------------------------

# Model families by the start of a model's name (the provider's prefix, org/ path removed).
MODEL_FAMILIES = (
    ("gpt", "openai"),
    ("o1", "openai"),
    ("o3", "openai"),
    ("o4", "openai"),
    ("chatgpt", "openai"),
    ("claude", "anthropic"),
    ("llama", "llama"),
    ("meta-llama", "llama"),
    ("mistral", "mistral"),
    ("mixtral", "mistral"),
    ("gemini", "gemini"),
    ("gemma", "gemini"),
    ("qwen", "qwen"),
    ("deepseek", "deepseek"),
    ("phi", "phi"),
    ("command", "cohere"),
)


def model_family(model: str) -> str:
    """The family a model's name belongs to ("gpt-4o-mini" → "openai", "meta-llama/Llama-3.1"
    → "llama"); else the name's first word; "" for no name."""
    name = str(model or "").strip().lower()
    name = name.rsplit("/", 1)[-1] if "/" in name else name
    for prefix, family in MODEL_FAMILIES:
        if name.startswith(prefix):
            return family
    for separator in "-:_. ":
        name = name.split(separator, 1)[0]
    return name


def _judge_by_system(pair: _Pair, systems: tuple[System, System]) -> dict[str, Any] | None:
    """The judge audited on each system's gold claims: sensitivity and specificity with Wilson
    intervals, Fisher's exact test of their equality, and a self-preference warning where the
    judge's model family is a system's generator's (its metadata's generator_model)."""
    if not pair.judge_name:
        return None
    claims = pair.claims[(pair.claims["gold"] != "") & (pair.claims["judge"] != "")]
    per_system = []
    for side, system in enumerate(systems):
        mine = claims[claims["side"] == side]
        audit = sensitivity_specificity(mine["gold"].tolist(), mine["judge"].tolist())
        per_system.append({"system": system_label(system), "n_audited": int(len(mine)), **audit})
    tests = {}
    for key in ("sensitivity", "specificity"):
        a, b = per_system[0][key], per_system[1][key]
        tests[key] = proportions_equal(a["successes"], a["n"], b["successes"], b["n"])
    differ = [key for key, p in tests.items() if math.isfinite(p) and p < 0.05]
    if differ:
        equality = (
            f"The judge's {' and '.join(differ)} differ between the systems (Fisher's exact "
            "test, p < 0.05): its errors are not the same on both, so a comparison of its "
            "raw rates is biased; PPI++ above rectifies each system by its own gold."
        )
    else:
        equality = (
            "No evidence that the judge's sensitivity or specificity differ between the "
            "systems (Fisher's exact test, p ≥ 0.05); PPI++ rectifies each system by its own "
            "gold regardless."
        )
    judge_family = model_family(pair.judge_model)
    warnings = []
    for system in systems:
        generator = (system.metadata or {}).get("generator_model", "")
        if judge_family and generator and model_family(generator) == judge_family:
            warnings.append(
                f"Self-preference: the judge's model ({pair.judge_model}) is of the "
                f"{judge_family} family, as {system_label(system)}'s generator ({generator}): "
                "judges rate their own family's outputs higher. Audit it on this system's gold "
                "(above) or use a judge of another family."
            )
    return {
        "per_system": per_system,
        "equality_p": tests,
        "equality": equality,
        "self_preference": warnings,
        "model": pair.judge_model,
        "family": judge_family,
    }


# -- the questions B got worse on ---------------------------------------------------------------


def _best_verdicts(claims: pd.DataFrame) -> pd.Series:
    """Each claim's gold verdict, else its judge verdict, else "" (unjudged)."""
    return claims["gold"].where(claims["gold"] != "", claims["judge"])


def _worst_questions(pair: _Pair, limit: int) -> list[dict[str, Any]]:
    """Shared questions by B − A of their faithfulness (gold where there is gold, else the
    judge), the ones B got worse on first, each with both answers and their claims."""
    claims = pair.claims.assign(best=_best_verdicts(pair.claims))
    known = claims[claims["best"] != ""]
    if known.empty:
        return []
    rates = (
        known.assign(s=known["best"] == Verdict.SUPPORTED)
        .groupby(["question_key", "side"])["s"]
        .mean()
        .unstack("side")
    )
    rates = rates.dropna()
    if rates.empty:
        return []
    rates["delta"] = rates[1] - rates[0]
    rates = rates.sort_values(["delta"], kind="stable").head(limit)
    answer_ids = pair.answers[pair.answers["question_key"].isin(rates.index)]
    texts = {
        row["pk"]: row
        for row in Answer.objects.filter(pk__in=answer_ids["answer_id"].tolist()).values(
            "pk", "external_id", "question", "text", "abstention"
        )
    }
    claim_texts = dict(Claim.objects.filter(answer_id__in=list(texts)).values_list("id", "text"))
    rows = []
    for question_key, row in rates.iterrows():
        sides = []
        for side in (0, 1):
            mine = answer_ids[
                (answer_ids["question_key"] == question_key) & (answer_ids["side"] == side)
            ]
            answers = []
            for answer_id in mine["answer_id"].tolist():
                answer = texts[answer_id]
                answer_claims = claims[claims["answer_id"] == answer_id]
                answers.append(
                    {
                        "answer_id": answer["external_id"],
                        "text": answer["text"],
                        "claims": [
                            {
                                "text": claim_texts.get(claim_id, ""),
                                "gold": gold or None,
                                "judge": judge or None,
                            }
                            for claim_id, gold, judge in answer_claims[
                                ["claim_id", "gold", "judge"]
                            ].itertuples(index=False)
                        ],
                    }
                )
            sides.append({"faithfulness": float(row[side]), "answers": answers})
        first = texts[int(answer_ids[answer_ids["question_key"] == question_key].iloc[0, 0])]
        rows.append(
            {
                "question_key": question_key,
                "question": first["question"],
                "risk_category": pair.risk_of.get(question_key, "none"),
                "delta": float(row["delta"]),
                "a": sides[0],
                "b": sides[1],
            }
        )
    return rows


# -- words --------------------------------------------------------------------------------------


# -- pairwise judging ---------------------------------------------------------------------------


def _pct(value: float | None) -> str:
    return fmt.percent(value, missing="n/a")


def _pct_ci(ci) -> str:
    low, high = ci
    if low is None or high is None or not (math.isfinite(low) and math.isfinite(high)):
        return "[no interval]"
    return f"[{fmt.whole_percent(low)}, {fmt.whole_percent(high)}]"


def _flip(estimate: dict) -> dict:
    """1 − an estimate (value and interval)."""
    low, high = estimate["ci"]
    return {**estimate, "value": 1.0 - estimate["value"], "ci": (1.0 - high, 1.0 - low)}


def _pairwise_block(
    *, a: System, b: System, judge: Judge | None, a_label: str, b_label: str
) -> dict[str, Any] | None:
    """The pairwise judge's verdicts on A and B, both orders (judges.PairwiseVerdict), through
    `pairwise_both_orders`; None when no such verdicts exist. A pair counts when both its
    orders have a parsed verdict; UNPARSEABLE replies are counted apart, never as a verdict."""
    found = selectors.pairwise_verdict_rows(a=a, b=b, judge=judge)
    if found["run"] is None and judge is not None:  # the chosen judge judged no pairs: any
        found = selectors.pairwise_verdict_rows(a=a, b=b)
    run = found["run"]
    if run is None:
        return None
    swap = {"a_first": "b_first", "b_first": "a_first"} if found["swapped"] else {}
    by_pair: dict[str, dict[str, str]] = {}
    unparseable = 0
    for question, order, verdict in found["rows"]:
        if verdict == UNPARSEABLE:
            unparseable += 1
            continue
        by_pair.setdefault(question, {})[swap.get(order, order)] = verdict
    complete = sorted(q for q, orders in by_pair.items() if len(orders) == 2)
    b_first = [by_pair[q]["b_first"] for q in complete]
    a_first = [by_pair[q]["a_first"] for q in complete]
    block: dict[str, Any] = {
        "judge": run.judge.name,
        "run_id": run.pk,
        "model": run.model,
        "prompt_version": run.prompt_version,
        "n_pairs": len(complete),
        "incomplete_pairs": len(by_pair) - len(complete),
        "unparseable": unparseable,
    }
    if len(complete) < 2:
        block.update(
            preference_b=None,
            position_bias=None,
            first_position_share=None,
            single_order={"b_first": None, "a_first": None},
            finding=(
                f"Pairwise judge {run.judge.name}: {len(complete)} pair(s) judged in both "
                "orders so far; at least 2 are needed for an interval."
            ),
            method="asked in both orders and averaged; too few complete pairs to estimate",
        )
        return block
    both = pairwise_both_orders(b_first, a_first)
    # The same verdicts with the orders' roles exchanged: its single order is "A first".
    exchanged = pairwise_both_orders(a_first, b_first)
    bias = both["position_bias"]
    share = {**bias, "value": bias["value"] + 0.5, "ci": tuple(c + 0.5 for c in bias["ci"])}
    preference = both["preference_b"]
    block.update(
        preference_b=preference,
        position_bias=bias,
        first_position_share=share,
        single_order={
            "b_first": both["single_order_preference_b"],
            "a_first": _flip(exchanged["single_order_preference_b"]),
        },
    )
    block["finding"] = (
        f"The judge {run.judge.name} prefers whichever answer comes first in "
        f"{_pct(share['value'])} {_pct_ci(share['ci'])} of pairs; averaged over both orders, "
        f"{b_label} (B) is preferred to {a_label} (A) in {_pct(preference['value'])} "
        f"{_pct_ci(preference['ci'])} of {len(complete)} pairs (ties count half)."
    )
    block["method"] = (
        "asked in both orders and averaged; position bias = share of first-position wins "
        "− 50%, over both orders of every pair; t intervals over pairs, 95%; "
        f"{unparseable} unparseable repl{'y' if unparseable == 1 else 'ies'} counted apart "
        "and a pair counts only when both its orders have a verdict; ties count half."
    )
    return block


def _points(value: float) -> str:
    return f"{100 * value:.1f}"


def _finding(result: dict, a_label: str, b_label: str) -> str:
    rate = result["rates"]["faithfulness"]
    head = rate["headline"]
    n = result["shared_questions"]
    if head["choice"] is None:
        return (
            f"No comparison of faithfulness yet: {n} shared questions, and neither system has "
            "enough gold on them (label claims of both systems' answers to the same questions)."
        )
    value, (low, high) = head["value"], head["ci"]
    estimate = rate[head["choice"]]
    gold_questions = rate["gold_only"]["n_questions"]
    if head["choice"] == "ppi":
        how = f"paired, PPI++ with judge {result['judge'] or '—'}, gold on {gold_questions} of them"
    else:
        how = f"paired, gold on {estimate['n_questions']} of them"
    ci = f"[{_points(low)}, {_points(high)}]"
    if low > 0:
        lead = f"{b_label} (B) is more faithful than {a_label} (A) by {_points(value)} points {ci}"
    elif high < 0:
        lead = (
            f"{b_label} (B) is less faithful than {a_label} (A) by {_points(-value)} points "
            f"[{_points(-high)}, {_points(-low)}]"
        )
    else:
        lead = (
            f"No clear difference in faithfulness between {b_label} (B) and {a_label} (A): "
            f"B − A = {'+' if value >= 0 else ''}{_points(value)} points {ci}"
        )
    return f"{lead} on {n} shared questions; {how}."


def _preference_finding(result: dict, b_label: str) -> str:
    """Which answer people prefer, from the analysts' marks when there are any, else from the
    pairwise judge (saying so); "" when neither exists."""
    human = result["pairwise_human"]
    decided = human.get("decided_b")
    if human["n_preferences"] and decided and decided["n_decided"]:
        test = sign_test_words(decided["sign_test"]["p_value"])
        return (
            f"People prefer {b_label} (B) on {_pct(decided['value'])} {_pct_ci(decided['ci'])} "
            f"of {decided['n_decided']} decided marks ({human['n_pairs']} pairs, "
            f"{decided['n_ties']} tie{'' if decided['n_ties'] == 1 else 's'} set aside; {test})."
        )
    if human["n_preferences"]:
        return f"People's {human['n_preferences']} pairwise marks are all ties."
    judged = result.get("pairwise")
    if judged and judged.get("preference_b"):
        preference = judged["preference_b"]
        return (
            f"The pairwise judge {judged['judge']} prefers {b_label} (B) on "
            f"{_pct(preference['value'])} {_pct_ci(preference['ci'])} of {judged['n_pairs']} "
            "pairs (both orders, ties half); no person has marked these pairs yet."
        )
    return ""


def systems_compare(
    *,
    project: Project,
    a: System,
    b: System,
    judge: Judge | None = None,
    worst: int = COMPARE_WORST_LISTED,
) -> dict[str, Any]:
    """B − A on the questions both systems answered, as a JSON-safe dict (see the module)."""
    if a.project_id != project.pk or b.project_id != project.pk:
        raise ValueError("both systems must belong to the project")
    if a.pk == b.pk:
        raise ValueError("compare two different systems")
    pair = _Pair(project=project, a=a, b=b, judge=judge)
    a_label, b_label = system_label(a), system_label(b)
    result: dict[str, Any] = {
        "project": {"slug": project.slug, "name": project.name},
        "computed_at": timezone.now().isoformat(),
        "a": {"name": a.name, "version": a.version, "label": a_label, "metadata": a.metadata},
        "b": {"name": b.name, "version": b.version, "label": b_label, "metadata": b.metadata},
        "judge": pair.judge_name,
        "answers": {"a": pair.questions_a, "b": pair.questions_b},
        "shared_questions": pair.n_questions,
        "rates": {rate.key: _rate_block(pair, rate) for rate in RATES},
        "by_risk_category": _by_risk_category(pair),
        "worst_questions": _worst_questions(pair, worst),
        "judge_by_system": _judge_by_system(pair, (a, b)),
        "design": {
            key: pair.design[key]
            for key in ("kind", "queue_design", "strata", "gold_left_out", "text")
        },
    }
    pairwise = _pairwise_block(a=a, b=b, judge=judge, a_label=a_label, b_label=b_label)
    if pairwise is not None:
        result["pairwise"] = pairwise
    result["pairwise_human"] = pairwise_human_block(
        a=a, b=b, judge=judge, a_label=a_label, b_label=b_label
    )
    result["finding"] = " ".join(
        part
        for part in (_finding(result, a_label, b_label), _preference_finding(result, b_label))
        if part
    )
    result["method"] = (
        "Paired by question: only questions both systems answered count; every interval is "
        "clustered by question (a question's claims and answers, of both systems, are one "
        "cluster), 95%. Gold only: the claims (answers) with gold. PPI++: the judge's verdicts "
        "on every claim of both systems, rectified by its errors on the gold claims, power-tuned "
        "for the difference. Headline: the narrowest valid interval. " + pair.design["text"]
    )
    return json_safe(result)


def compare_gate(result: dict, *, margin: float = 0.02) -> tuple[bool, str]:
    """(B is worse, the sentence): worse when the upper end of the headline B − A faithfulness
    interval lies below −margin, i.e. B is worse than A by more than `margin` with 95%
    confidence. No valid interval is not "worse"."""
    head = result["rates"]["faithfulness"]["headline"]
    high = head["ci"][1] if head["choice"] else None
    if high is None:
        return False, "Not worse: no valid interval for B − A yet. " + result["finding"]
    worse = high < -margin
    verdict = (
        f"B is worse than A: the upper end of B − A ({_points(high)} points) is below "
        f"−{_points(margin)}."
        if worse
        else f"Not worse: the upper end of B − A ({_points(high)} points) is not below "
        f"−{_points(margin)}."
    )
    return worse, f"{verdict} {result['finding']}"
