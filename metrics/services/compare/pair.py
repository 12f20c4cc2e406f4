"""The two systems' answers and claims on their shared questions, as aligned unit arrays, and
the audit's design over them (strata, 1/π weights, gold left out)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from annotate.models import Project, System
from annotate.vocabulary import VERDICT_VALUES, Verdict
from judges.models import Judge
from metrics import selectors
from metrics.services.active_audit import design_in_use
from metrics.services.audit_design import audit_design_read
from metrics.services.common import _codes, _newest_per_claim
from metrics.services.instruments import _instrument_keys


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
