"""Reads for comparing two systems: their answers and claims on shared questions, and the
pairwise verdicts and preferences on them.
"""

import pandas as pd
from django.db.models import Q, QuerySet

from annotate.models import (
    Answer,
    Claim,
    PairwisePreference,
    Project,
    System,
)
from judges.models import Judge, JudgeRun, PairwiseVerdict
from metrics.selectors.frames import _boolean, _frame, _text


def system_answer_columns(*, project: Project, system_ids: list[int]) -> pd.DataFrame:
    """answer_id, system_id, question key (the answer's question_id, else its question text),
    risk_category, abstention of the answers of `system_ids`, by answer id."""
    frame = _frame(
        Answer.objects.filter(project=project, system_id__in=system_ids).order_by("id"),
        {
            "id": "answer_id",
            "system_id": "system_id",
            "question_id": "question_id",
            "question": "question",
            "risk_category": "risk_category",
            "abstention": "abstention",
        },
        quoted=("question_id", "question"),
    )
    frame["abstention"] = _boolean(frame["abstention"]).fillna(False).astype(bool)
    frame = _text(frame, "question_id", "question", "risk_category")
    frame["question_key"] = frame["question_id"].where(
        frame["question_id"] != "", frame["question"]
    )
    return frame.drop(columns=["question_id", "question"])


def system_claim_columns(*, project: Project, system_ids: list[int]) -> pd.DataFrame:
    """claim_id, answer_id, the gold verdict ("" without gold) and the design stratum a file
    gave the claim ("" if none) of the claims of the answers of `system_ids`, by claim id."""
    frame = _frame(
        Claim.objects.filter(project=project, answer__system_id__in=system_ids).order_by("id"),
        {"id": "claim_id", "answer_id": "answer_id", "gold__verdict": "gold", "stratum": "stratum"},
        quoted=("stratum",),
    )
    # Integer ids even when there is no claim (an empty column is untyped), so merges on
    # them work for systems with answers but no claims yet.
    frame = frame.astype({"claim_id": "int64", "answer_id": "int64"})
    # Object columns: all empty on PostgreSQL they are read as float NaN.
    frame = frame.astype({"gold": object, "stratum": object})
    return _text(frame, "gold", "stratum")


def systems_for_project(*, project: Project) -> QuerySet:
    return System.objects.filter(project=project).order_by("id")


def pairwise_verdict_rows(*, a: System, b: System, judge: Judge | None = None) -> dict:
    """The newest pairwise run on systems `a` and `b` (in either orientation; of `judge` when
    given): {"run": run or None, "swapped": the run's A is `b`, "rows": [(question_id, order,
    verdict)]}."""
    runs = JudgeRun.objects.filter(kind=JudgeRun.Kind.PAIRWISE, pairwise_verdicts__isnull=False)
    runs = runs.filter(
        Q(parameters__system_a=a.pk, parameters__system_b=b.pk)
        | Q(parameters__system_a=b.pk, parameters__system_b=a.pk)
    )
    if judge is not None:
        runs = runs.filter(judge=judge)
    run = runs.select_related("judge").order_by("-created_at", "-id").first()
    if run is None:
        return {"run": None, "swapped": False, "rows": []}
    rows = list(
        PairwiseVerdict.objects.filter(run=run)
        .order_by("question_id", "order")
        .values_list("question_id", "order", "verdict")
    )
    return {"run": run, "swapped": int(run.parameters.get("system_a")) == b.pk, "rows": rows}


def pairwise_preference_rows(*, a: System, b: System) -> list[tuple[str, str, str, int | None]]:
    """The people's pairwise preferences between systems `a` and `b`, from the blind screen
    and from files: [(question key, who, "B" | "A" | "tie", strength)], B and A as named here
    whichever system has the lower id. `who` is "analyst:<id>" or "imported:<name>" (one
    person, whichever path the mark came by); `strength` the file's grade (0–2) or None."""
    low, high = sorted((a.pk, b.pk))
    rows = PairwisePreference.objects.filter(system_1_id=low, system_2_id=high).values_list(
        "question_key", "analyst_id", "imported_annotator__name", "preferred_system_id", "strength"
    )
    side = {b.pk: "B", a.pk: "A", None: "tie"}
    return [
        (
            key,
            f"analyst:{analyst}" if analyst is not None else f"imported:{imported}",
            side[preferred],
            strength,
        )
        for key, analyst, imported, preferred, strength in rows.order_by("id")
    ]
