"""Reads of a project's judges and their verdicts: the verify, citation, canary and bits
columns of the report, and the permission-checked judge fetches of the pages.
"""

import pandas as pd
from django.db.models import Count, Q, QuerySet
from django.http import Http404

from annotate.models import (
    Project,
)
from judges.models import Judge, JudgeRun, JudgeVerdict
from metrics.selectors.frames import _frame, _text

# Runs whose verdicts count: finished, or still writing (their verdicts so far are real).
COUNTED_RUN_STATUSES = (JudgeRun.Status.DONE, JudgeRun.Status.RUNNING)


def _verdict_frame(queryset: QuerySet) -> pd.DataFrame:
    """Verdict rows, oldest first, with their run's instrument joined from a small run table."""
    verdicts = _frame(
        queryset.order_by("id"),
        {
            "id": "verdict_id",
            "claim_id": "claim_id",
            "verdict": "verdict",
            "confidence": "confidence",
            "run_id": "run_id",
        },
    )
    runs = pd.DataFrame.from_records(
        list(
            JudgeRun.objects.filter(pk__in=verdicts["run_id"].unique().tolist()).values_list(
                "id", "model", "prompt_version", "backend"
            )
        ),
        columns=["run_id", "model", "prompt_version", "backend"],
    )
    verdicts = _text(verdicts, "verdict").sort_values("verdict_id", kind="stable")
    verdicts["confidence"] = verdicts["confidence"].astype(float)
    if verdicts.empty:
        return verdicts.assign(model="", prompt_version="", backend="")
    runs["run_id"] = runs["run_id"].astype(verdicts["run_id"].dtype)
    return verdicts.merge(runs, on="run_id", how="left", sort=False)


def _verify_verdicts(judge: Judge) -> QuerySet:
    """The judge's claim verdicts from its verify runs (done or running)."""
    return JudgeVerdict.objects.filter(
        run__judge=judge,
        run__kind=JudgeRun.Kind.VERIFY,
        run__status__in=COUNTED_RUN_STATUSES,
        claim__isnull=False,
    )


def judge_verify_columns(*, judge: Judge) -> pd.DataFrame:
    """The judge's claim verdicts from its verify runs (done or running), oldest first; never
    one made on a claim's previous text (`stale`: a lead changed the claim since)."""
    return _verdict_frame(_verify_verdicts(judge).filter(stale=False))


def judge_stale_counts(*, judge: Judge) -> dict[tuple[str, str], int]:
    """(model, prompt version) → how many of the judge's verify verdicts were made on a claim's
    previous text and are left out (a small partial index, not a scan of the verdicts)."""
    rows = (
        _verify_verdicts(judge)
        .filter(stale=True)
        .values("run__model", "run__prompt_version")
        .annotate(n=Count("id"))
        .order_by()
    )
    return {(row["run__model"], row["run__prompt_version"]): row["n"] for row in rows}


def citation_columns(*, project: Project, judge: Judge | None = None) -> pd.DataFrame:
    """Verdicts of citation runs (claim against its cited passages alone), oldest first; not
    those made on a claim's previous text."""
    runs = Q(run__project=project, run__kind=JudgeRun.Kind.CITATION)
    if judge is not None:
        runs &= Q(run__judge=judge)
    return _verdict_frame(
        JudgeVerdict.objects.filter(
            runs, run__status__in=COUNTED_RUN_STATUSES, claim__isnull=False, stale=False
        )
    )


def canary_columns(*, judge: Judge) -> pd.DataFrame:
    """The judge's verdicts on canaries (statements absent from the pile), oldest first."""
    return (
        _frame(
            JudgeVerdict.objects.filter(
                run__judge=judge,
                run__kind=JudgeRun.Kind.CANARY,
                run__status__in=COUNTED_RUN_STATUSES,
                canary__isnull=False,
            ).order_by("id"),
            {
                "id": "verdict_id",
                "canary_id": "canary_id",
                "verdict": "verdict",
                "run__model": "model",
                "run__prompt_version": "prompt_version",
            },
        )
        .pipe(_text, "verdict", "model", "prompt_version")
        .sort_values("verdict_id", kind="stable")
    )


def judges_for_project(*, project: Project) -> QuerySet[Judge]:
    return Judge.objects.filter(project=project).order_by("name")


def judge_get_for_project(*, project: Project, judge_id) -> Judge:
    try:
        judge_id = int(judge_id)
    except (TypeError, ValueError):
        raise Http404("No such judge.") from None
    judge = Judge.objects.filter(project=project, pk=judge_id).first()
    if judge is None:
        raise Http404("No such judge.")
    return judge


def judge_get_by_name(*, project: Project, name: str) -> Judge | None:
    return Judge.objects.filter(project=project, name=name).first()


def judge_default_for_project(*, project: Project) -> Judge | None:
    """The judge whose verify run is newest: what a lead most likely wants to read."""
    run = (
        JudgeRun.objects.filter(project=project, kind=JudgeRun.Kind.VERIFY)
        .select_related("judge")
        .order_by("-created_at", "-id")
        .first()
    )
    if run is not None:
        return run.judge
    return judges_for_project(project=project).first()


def judge_bits_columns(*, judge: Judge) -> pd.DataFrame:
    """Grounding bits of the judge's verify runs (done or running), oldest first: claim, bits,
    the stored confidence and the run's instrument; never a stale verdict, never one without
    bits (UNPARSEABLE)."""
    frame = _frame(
        _verify_verdicts(judge).filter(stale=False, bits__isnull=False).order_by("id"),
        {
            "id": "verdict_id",
            "claim_id": "claim_id",
            "verdict": "verdict",
            "bits": "bits",
            "confidence": "confidence",
            "run__model": "model",
            "run__prompt_version": "prompt_version",
        },
    )
    frame = _text(frame, "verdict", "model", "prompt_version")
    frame["bits"] = frame["bits"].astype(float)
    frame["confidence"] = frame["confidence"].astype(float)
    return frame.sort_values("verdict_id", kind="stable")


def judge_bits_threshold(*, judge: Judge, model: str, prompt_version: str) -> float:
    """The threshold of the instrument's newest run (0 when it set none)."""
    run = (
        JudgeRun.objects.filter(judge=judge, model=model, prompt_version=prompt_version)
        .order_by("-pk")
        .values_list("parameters", flat=True)
        .first()
    )
    return float((run or {}).get("bits_threshold") or 0.0)
