"""Reads shared by judges' views, tasks and commands."""

from __future__ import annotations

from collections import defaultdict

from django.db.models import Exists, F, OuterRef, QuerySet
from django.http import Http404

from annotate.models import Claim, Label, Passage, Project
from judges.backends.registry import backend_kind, backend_names
from judges.models import (
    Canary,
    Judge,
    JudgeFailure,
    JudgeRun,
    JudgeVerdict,
    JudgeVerdictChoice,
    SplitJob,
)


def judge_list_for_project(*, project: Project) -> QuerySet[Judge]:
    return Judge.objects.filter(project=project).order_by("name")


def judge_get_for_project(*, project: Project, judge_id: int) -> Judge:
    judge = Judge.objects.filter(project=project, pk=judge_id).first()
    if judge is None:
        raise Http404("No such judge.")
    return judge


def judge_latest_canary_run(*, judge: Judge) -> JudgeRun | None:
    """The judge's latest finished canary run: its pass rate is shown beside the audit."""
    return (
        judge.runs.filter(kind=JudgeRun.Kind.CANARY, status=JudgeRun.Status.DONE)
        .exclude(canary_pass_rate__isnull=True)
        .order_by("-finished_at", "-pk")
        .first()
    )


def judge_run_get_for_project(*, project: Project, run_id: int) -> JudgeRun:
    run = JudgeRun.objects.select_related("judge").filter(project=project, pk=run_id).first()
    if run is None:
        raise Http404("No such judge run.")
    return run


def claims_in_scope(
    *,
    project_id: int,
    kind: str,
    scope: str,
    judge_id: int,
    before_run_id=None,
    answer_ids: list[int] | None = None,
):
    """The claims a run of this kind and scope covers (not yet limited to the frozen id bound),
    of the answers `answer_ids` only when given (a run started on the answers list's filtered
    set).

    "unjudged": claims without a parseable verdict of this judge and kind on their current
    text: a claim whose text a lead changed since (its verdicts `stale`) is unjudged again.
    """
    claims = Claim.objects.filter(project_id=project_id)
    if answer_ids is not None:
        claims = claims.filter(answer_id__in=answer_ids)
    if kind == JudgeRun.Kind.CITATION:
        through = Claim.cited_passages.through
        claims = claims.filter(Exists(through.objects.filter(claim_id=OuterRef("pk"))))
    if scope == JudgeRun.Scope.GOLD:
        claims = claims.filter(gold__isnull=False)
    elif scope == JudgeRun.Scope.UNJUDGED:
        earlier = JudgeVerdict.objects.filter(
            claim_id=OuterRef("pk"), run__judge_id=judge_id, run__kind=kind, stale=False
        ).exclude(verdict=JudgeVerdictChoice.UNPARSEABLE)
        if before_run_id is not None:
            earlier = earlier.filter(run_id__lt=before_run_id)
        claims = claims.filter(~Exists(earlier))
    return claims


def run_items_remaining(*, run: JudgeRun, after_id: int, limit: int) -> list[tuple[int, str, int]]:
    """(item id, text, pile answer id) of the next items of `run` with neither a verdict nor a
    recorded failure, in id order after `after_id`. Items are claims, or canaries for a canary
    run. This is what makes a run resumable: done items are never handed out again."""
    bound = run.parameters.get("items_up_to_id") or 0
    if run.kind == JudgeRun.Kind.CANARY:
        items = Canary.objects.filter(project_id=run.project_id, pk__lte=bound, pk__gt=after_id)
        done = JudgeVerdict.objects.filter(run_id=run.pk, canary_id=OuterRef("pk"))
        failed = JudgeFailure.objects.filter(run_id=run.pk, canary_id=OuterRef("pk"))
        fields = ("pk", "text", "pile_answer_id")
    else:
        items = claims_in_scope(
            project_id=run.project_id,
            kind=run.kind,
            scope=run.scope,
            judge_id=run.judge_id,
            before_run_id=run.pk,
            answer_ids=run.answer_ids,
        ).filter(pk__lte=bound, pk__gt=after_id)
        done = JudgeVerdict.objects.filter(run_id=run.pk, claim_id=OuterRef("pk"))
        failed = JudgeFailure.objects.filter(run_id=run.pk, claim_id=OuterRef("pk"))
        fields = ("pk", "text", "answer_id")
    items = items.filter(~Exists(done), ~Exists(failed)).order_by("pk")
    return list(items.values_list(*fields)[:limit])


def piles_for_items(*, run: JudgeRun, items) -> dict[int, list[Passage]]:
    """Item id -> passages to judge it against, in one query: the whole pile of its answer, or
    for a citation run only the passages the claim cites."""
    if run.kind == JudgeRun.Kind.CITATION:
        through = Claim.cited_passages.through
        rows = (
            through.objects.filter(claim_id__in=[item_id for item_id, _, _ in items])
            .select_related("passage")
            .order_by("passage__rank")
        )
        with_question = backend_kind(run.backend).needs_question
        if with_question:
            rows = rows.annotate(answer_question=F("passage__answer__question"))
        piles = defaultdict(list)
        for row in rows:
            if with_question:
                row.passage.answer_question = row.answer_question
            piles[row.claim_id].append(row.passage)
        return piles
    answer_ids = {answer_id for _, _, answer_id in items}
    by_answer = defaultdict(list)
    passages = Passage.objects.filter(answer_id__in=answer_ids).order_by("answer_id", "rank")
    if backend_kind(run.backend).needs_question:  # e.g. grounding bits: under the question
        passages = passages.annotate(answer_question=F("answer__question"))
    for passage in passages:
        by_answer[passage.answer_id].append(passage)
    return {item_id: by_answer[answer_id] for item_id, _, answer_id in items}


def run_unparseable(*, run: JudgeRun, limit: int = 200) -> QuerySet[JudgeVerdict]:
    return (
        run.verdicts.filter(verdict=JudgeVerdictChoice.UNPARSEABLE)
        .select_related("claim", "canary")
        .order_by("id")[:limit]
    )


def run_failures(*, run: JudgeRun, limit: int = 200) -> QuerySet[JudgeFailure]:
    return run.failures.select_related("claim", "canary").order_by("id")[:limit]


def run_gold_pairs(*, run: JudgeRun) -> tuple[list[str], list[str], int]:
    """(gold verdicts, judge verdicts) on claims of a verify run that have both, and how many
    gold claims the judge left UNPARSEABLE (excluded from the pairs). Verdicts made on a
    claim's previous text (`stale`) are not paired: gold judges the current text."""
    rows = run.verdicts.filter(claim__gold__isnull=False, stale=False).values_list(
        "claim__gold__verdict", "verdict"
    )
    gold, judged, unparseable = [], [], 0
    for gold_verdict, verdict in rows.iterator(chunk_size=5000):
        if verdict == JudgeVerdictChoice.UNPARSEABLE:
            unparseable += 1
            continue
        gold.append(gold_verdict)
        judged.append(verdict)
    return gold, judged, unparseable


def run_gold_drawn_unequally(*, run: JudgeRun) -> bool:
    """Whether a label behind the gold this run pairs with was drawn by the active or the
    stratified queue: its gold claims then stand for unequal numbers of the project's claims,
    and a plain share over them is not the project's figure."""
    paired = run.verdicts.filter(claim__gold__isnull=False, stale=False).values("claim_id")
    return Label.objects.filter(claim_id__in=paired, design__in=["active", "stratified"]).exists()


def run_gold_claims_count(*, run: JudgeRun) -> int:
    """How many claims with gold the run could pair with: the project's claims that have gold
    (of the run's answers only, for a run started on a filtered answers list)."""
    claims = Claim.objects.filter(project_id=run.project_id, gold__isnull=False)
    if run.answer_ids is not None:
        claims = claims.filter(answer_id__in=run.answer_ids)
    return claims.count()


def run_stale_count(*, run: JudgeRun) -> int:
    """How many of the run's verdicts were made on text a lead has since changed."""
    return run.verdicts.filter(stale=True).count()


def canary_list_for_project(*, project: Project) -> QuerySet[Canary]:
    return Canary.objects.filter(project=project).select_related("pile_answer").order_by("-id")


def split_job_get_for_project(*, project: Project, job_id: int) -> SplitJob:
    job = (
        SplitJob.objects.select_related("judge", "answer", "created_by")
        .filter(project=project, pk=job_id)
        .first()
    )
    if job is None:
        raise Http404("No such split job.")
    return job


def split_jobs_bulk_for_project(*, project: Project, limit: int = 5) -> list[SplitJob]:
    """The project's latest split jobs over many answers (by rule or by LLM), newest first."""
    return list(
        SplitJob.objects.filter(project=project, answer__isnull=True)
        .select_related("judge")
        .order_by("-created_at", "-id")[:limit]
    )


def split_job_latest_for_answer(*, answer) -> SplitJob | None:
    """The latest split job of this one answer, or None."""
    return SplitJob.objects.filter(answer=answer).select_related("judge", "created_by").first()


def split_judges_for_project(*, project: Project) -> QuerySet[Judge]:
    """The judges that can split by LLM (their backend declares `can_split`)."""
    return Judge.objects.filter(
        project=project, backend__in=backend_names(can_split=True)
    ).order_by("name")
