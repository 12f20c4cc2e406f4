"""Splitting answers into claims as a job: by LLM, the endpoint is called by a worker (or by
the operator's shell, `split_claims --method llm`), never inside a web request; by rule
(`split_job_start_by_rule`), annotate's rule splitter runs over the answers list's filtered
set on the same worker, with the same progress page, so a lead splits in bulk from the UI
with no LLM endpoint declared.

The judges side calls the endpoint and hands annotate the claim texts through annotate's own
claims service (`claims_split(method="llm", texts=..., origin=...)`), which aligns them to the
answer and writes them under its rules (labels kept, never moved silently). Annotate knows
nothing of judges.

One answer at a time, each written in its own transaction, with the job's counters updated
after each: the claims page polls them. A redelivered task carries on after the answers
already behind (`done + failed`); an answer whose split was written but not counted is
refused the second time ("already has claims") unless the job re-splits on purpose.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Count, F
from django.db.models.functions import Coalesce
from django.utils import timezone
from kombu.exceptions import OperationalError as BrokerUnreachable

from annotate.models import Answer, Project
from annotate.services.claims import ORIGIN_RULE, ClaimsError, claims_split
from judges.backends import JudgeCallFailed, JudgeConfigError, backend_for_spec
from judges.backends.registry import backend_kind
from judges.models import Judge, SplitJob, prompt_version
from judges.services import judge_endpoint_problem, judge_spec, task

logger = logging.getLogger(__name__)

MAX_FAILURES_KEPT = 200
NOTHING_LEFT = (
    "Every answer listed already has claims: nothing to split (tick “split again” to "
    "re-split them on purpose)."
)
QUEUE_DOWN_SPLIT = (
    "The task queue (Redis) could not be reached, so the split was not started and nothing "
    "was split. Start it again once the queue is back."
)


def _answers_to_split(
    *, project_id: int, answer: Answer | None, force: bool, among=None
) -> list[int]:
    if answer is not None:
        return [answer.pk]
    answers = Answer.objects.filter(project_id=project_id)
    if among is not None:
        answers = answers.filter(pk__in=among)
    if not force:
        answers = answers.annotate(n=Count("claims")).filter(n=0)
    return list(answers.order_by("position", "id").values_list("pk", flat=True))


@transaction.atomic
def split_job_start(
    *,
    judge: Judge,
    user=None,
    answer: Answer | None = None,
    force: bool = False,
    enqueue: bool = True,
    among=None,
    among_described: str = "",
) -> SplitJob:
    """Queue an LLM split of `answer` (or of the project's answers without claims; all of
    them with `force`; `among`, a queryset or list of answer ids, narrows them to the answers
    list's filtered set, described in words by `among_described`) through `judge`'s
    decompose prompt. Refused before anything is queued
    when the judge cannot call an endpoint, or the one answer already has claims and `force`
    is not given. `enqueue=False`: the caller runs it (`split_job_execute`)."""
    if not backend_kind(judge.backend).can_split:
        raise ValidationError(
            {
                "judge": f"Judge {judge.name} is the offline baseline, not an LLM: split by "
                "rule instead."
            }
        )
    problem = judge_endpoint_problem(judge)
    if problem:
        raise ValidationError({"judge": f"Judge {judge.name}: {problem}"})
    if answer is not None:
        if answer.project_id != judge.project_id:
            raise ValidationError({"answer": "That answer belongs to another project."})
        count = answer.claims.count()
        if count and not force:
            raise ValidationError(
                {
                    "force": f"Answer {answer.external_id} already has {count} claims; "
                    "re-split it only on purpose (tick “split again”)."
                }
            )
    answer_ids = _answers_to_split(
        project_id=judge.project_id, answer=answer, force=force, among=among
    )
    if answer is None and among is not None and not answer_ids:
        raise ValidationError({"force": NOTHING_LEFT})
    spec = judge_spec(judge)
    job = SplitJob.objects.create(
        project_id=judge.project_id,
        method=SplitJob.Method.LLM,
        judge=judge,
        answer=answer,
        answer_ids=answer_ids,
        answers_filter=among_described[:500] if answer is None and among is not None else "",
        force=force,
        origin=f"llm:{prompt_version(spec['decompose_prompt'])}",
        total=len(answer_ids),
        created_by=user if user is not None and user.is_authenticated else None,
    )
    if enqueue:
        transaction.on_commit(lambda: _send(job.pk))
    return job


@transaction.atomic
def split_job_start_by_rule(
    *,
    project: Project,
    user=None,
    force: bool = False,
    enqueue: bool = True,
    among=None,
    among_described: str = "",
) -> SplitJob:
    """Queue a split by rule of the project's answers without claims (all of them with
    `force`: claims with labels are kept, flagged when the rule does not reproduce them), or
    of those among `among` (the answers list's filtered set, a queryset or list of answer
    ids, described in words by `among_described`). Each answer is split in its own
    transaction by annotate's `claims_split(method="rule")`, as `split_claims --method rule`
    does. Refused, with nothing queued, when no answer is left to split. `enqueue=False`: the
    caller runs it (`split_job_execute`)."""
    answer_ids = _answers_to_split(project_id=project.pk, answer=None, force=force, among=among)
    if not answer_ids:
        raise ValidationError({"force": NOTHING_LEFT})
    job = SplitJob.objects.create(
        project=project,
        method=SplitJob.Method.RULE,
        answer_ids=answer_ids,
        answers_filter=among_described[:500] if among is not None else "",
        force=force,
        origin=ORIGIN_RULE,
        total=len(answer_ids),
        created_by=user if user is not None and user.is_authenticated else None,
    )
    if enqueue:
        transaction.on_commit(lambda: _send(job.pk))
    return job


def _send(job_id: int) -> None:

    try:
        task("split_claims").delay(job_id)  # by name: judges.tasks imports this module
    except BrokerUnreachable:
        logger.exception("could not enqueue split job %s", job_id)
        SplitJob.objects.filter(pk=job_id, status=SplitJob.Status.PENDING).update(
            status=SplitJob.Status.FAILED,
            finished_at=timezone.now(),
            error=QUEUE_DOWN_SPLIT,
        )


def _finish(job_id: int, status: str, error: str = "") -> None:
    SplitJob.objects.filter(pk=job_id).update(
        status=status, error=error[:1000], finished_at=timezone.now()
    )


def split_job_execute(
    job_id: int, *, progress: Callable[[SplitJob, str], None] | None = None
) -> str:
    """Split the job's remaining answers; returns "done", "failed" or "finished" (nothing
    left to do). `progress(job, line)` is called after each answer (the command prints it)."""
    job = SplitJob.objects.select_related("judge", "created_by").filter(pk=job_id).first()
    if job is None or job.finished:
        return "finished"
    now = timezone.now()
    SplitJob.objects.filter(pk=job_id).update(
        status=SplitJob.Status.RUNNING, started_at=Coalesce(F("started_at"), now)
    )
    if job.method == SplitJob.Method.RULE:
        split_one = _by_rule(job)
    else:
        try:
            split_one = _by_llm(job, backend_for_spec(judge_spec(job.judge)))
        except JudgeConfigError as exc:
            _finish(job_id, SplitJob.Status.FAILED, str(exc))
            return "failed"
    for answer_id in job.answer_ids[job.done + job.failed :]:
        answer = Answer.objects.filter(pk=answer_id).first()
        label = answer.external_id if answer is not None else f"#{answer_id}"
        created, error = 0, ""
        try:
            if answer is None:
                raise ClaimsError("the answer was deleted")
            created = len(split_one(answer))
        except JudgeConfigError as exc:  # no answer can split: stop here, say why
            _finish(job_id, SplitJob.Status.FAILED, str(exc))
            return "failed"
        except (JudgeCallFailed, ClaimsError) as exc:
            error = str(exc)
        job = _count(job, label=label, created=created, error=error)
        if progress is not None:
            progress(job, f"answer {label}: {error or f'{created} claims'}")
    _finish(job_id, SplitJob.Status.DONE)
    return "done"


def _by_rule(job: SplitJob) -> Callable[[Answer], list]:
    def split_one(answer: Answer) -> list:
        # claims_split writes each answer in its own transaction, under the answer's lock.
        return claims_split(answer=answer, method="rule", user=job.created_by, force=job.force)

    return split_one


def _by_llm(job: SplitJob, backend) -> Callable[[Answer], list]:
    def split_one(answer: Answer) -> list:
        return claims_split(
            answer=answer,
            method="llm",
            texts=backend.decompose(answer.text),
            origin=job.origin,
            user=job.created_by,
            force=job.force,
        )

    return split_one


def _count(job: SplitJob, *, label: str, created: int, error: str) -> SplitJob:
    with transaction.atomic():
        locked = SplitJob.objects.select_for_update().get(pk=job.pk)
        if error:
            locked.failed += 1
            if len(locked.failures) < MAX_FAILURES_KEPT:
                locked.failures = [*locked.failures, {"answer": label, "error": error[:300]}]
        else:
            locked.done += 1
            locked.claims_created += created
        locked.save(update_fields=["done", "failed", "claims_created", "failures"])
    locked.judge = job.judge
    locked.created_by = job.created_by
    return locked
