"""judges' answers to annotate's hooks (annotate/hooks.py): annotate asks, judges knows.

Registered in JudgesConfig.ready, so annotate never imports judges.
"""

from django.db.models import OuterRef, QuerySet

from annotate import hooks
from judges.models import JudgeRun, JudgeVerdict


def claim_judge_verdicts(*, claim) -> list[JudgeVerdict]:
    return list(
        JudgeVerdict.objects.filter(claim=claim, stale=False)  # not those on its old text
        .select_related("run__judge")
        .order_by("-run__created_at", "-id")
    )


def claim_verdicts_retire(*, claim_id: int, old_text: str) -> int:
    return JudgeVerdict.objects.filter(claim_id=claim_id, stale=False).update(
        stale=True, stale_claim_text=old_text
    )


def claims_verdicts_counting(*, claim_ids: list[int]) -> int:
    return JudgeVerdict.objects.filter(claim_id__in=claim_ids, stale=False).count()


def judge_verdict_stratum(
    *, project, judge_id: int, verdict: str, run_id: int | None
) -> tuple[int | None, QuerySet[JudgeVerdict]]:
    run_id = run_id or (
        JudgeRun.objects.filter(
            judge_id=judge_id,
            project=project,
            kind=JudgeRun.Kind.VERIFY,
            status=JudgeRun.Status.DONE,
        )
        .order_by("-created_at", "-id")
        .values_list("id", flat=True)
        .first()
    )
    # Not a verdict on a claim's previous text (`stale`): it says nothing of the claim now.
    verdicts = JudgeVerdict.objects.filter(
        claim=OuterRef("pk"), run_id=run_id, verdict=verdict, stale=False
    )
    return run_id, verdicts


def answers_with_judge_verdict(*, project, verdict: str) -> QuerySet:
    return (
        JudgeVerdict.objects.filter(claim__project=project, verdict=verdict, stale=False)
        .values_list("claim__answer_id", flat=True)
        .distinct()
    )


def register() -> None:
    hooks.claim_judge_verdicts.register(claim_judge_verdicts)
    hooks.claim_verdicts_retire.register(claim_verdicts_retire)
    hooks.claims_verdicts_counting.register(claims_verdicts_counting)
    hooks.judge_verdict_stratum.register(judge_verdict_stratum)
    hooks.answers_with_judge_verdict.register(answers_with_judge_verdict)
