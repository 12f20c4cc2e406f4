"""The API's own reads: the rows its operations list or look up that no app's selectors
already give (those are called where they are: `annotate.selectors`, `judges.selectors`,
`metrics.selectors`)."""

from django.db.models import Prefetch, QuerySet
from django.http import Http404

from annotate.models import Answer, Claim, EvidenceSpan, Gold, Label, Membership, Project
from judges.models import Judge, JudgeRun

# A label's spans after the first, with the passage each quotes (its rank is shown).
_SPANS = Prefetch("more_spans", queryset=EvidenceSpan.objects.select_related("passage"))
_LABEL_RELATED = ("annotator", "imported_annotator", "evidence_passage")


def roles_for_user(*, user) -> dict[int, str]:
    """The user's role in each project they are a member of, by project id."""
    return dict(Membership.objects.filter(user=user).values_list("project_id", "role"))


def project_slug_taken(*, slug: str) -> bool:
    return Project.objects.filter(slug=slug).exists()


def members_for_project(*, project: Project) -> QuerySet[Membership]:
    return (
        Membership.objects.filter(project=project).select_related("user").order_by("user__username")
    )


def membership_get_by_username(*, project: Project, username: str) -> Membership | None:
    return Membership.objects.filter(project=project, user__username=username).first()


def judge_name_taken(*, project: Project, name: str) -> bool:
    return Judge.objects.filter(project=project, name=name).exists()


def runs_for_judge(*, judge: Judge, limit: int = 100) -> QuerySet[JudgeRun]:
    """The judge's latest runs, newest first."""
    return (
        JudgeRun.objects.filter(judge=judge).select_related("judge").order_by("-created_at")[:limit]
    )


def answer_get_by_external_id(*, project: Project, external_id: str) -> Answer:
    answer = Answer.objects.filter(project=project, external_id=external_id).first()
    if answer is None:
        raise Http404("No such answer.")
    return answer


def claim_rows_for_project(*, project: Project) -> QuerySet:
    """The project's claims as `.values()` rows for a keyset page."""
    return Claim.objects.filter(project=project).values(
        "pk", "answer__external_id", "position", "text", "origin", "tags"
    )


def gold_rows_for_project(*, project: Project) -> QuerySet:
    """The project's gold as `.values()` rows for a keyset page."""
    return Gold.objects.filter(claim__project=project).values(
        "pk", "claim_id", "verdict", "source", "reason"
    )


def keyset_page(rows: QuerySet, after: int, limit: int, **renamed) -> dict:
    """One page of `rows` (a `.values()` queryset with "pk") in id order after the cursor
    `after`: each row as an item keyed by its field names, "pk" as "id", an item key given in
    `renamed` taken from that column (or computed by that callable); `next` the cursor of the
    page after, None on the last page."""
    page = rows.filter(pk__gt=after).order_by("pk")[:limit]
    sources = {source for source in renamed.values() if isinstance(source, str)}
    items = []
    for r in page:
        item = {"id": r["pk"]}
        item.update({k: v for k, v in r.items() if k != "pk" and k not in sources})
        for key, source in renamed.items():
            item[key] = source(r) if callable(source) else r[source]
        items.append(item)
    return {"items": items, "next": items[-1]["id"] if len(items) == limit else None}


def pile_for_answer(*, answer: Answer) -> QuerySet:
    return answer.passages.order_by("rank")


def passage_ids_by_rank(*, answer: Answer, ranks: list[int]) -> dict[int, int]:
    """The ids of the answer's passages of these ranks, by rank (a rank not in the pile is
    missing)."""
    return dict(answer.passages.filter(rank__in=ranks).values_list("rank", "pk"))


def _labels() -> QuerySet[Label]:
    return Label.objects.select_related(*_LABEL_RELATED).prefetch_related(_SPANS)


def label_of_user(*, claim: Claim, user) -> Label | None:
    """The user's own label on the claim, with what the API shows of it."""
    return _labels().filter(claim=claim, annotator=user).first()


def labels_for_claim(*, claim: Claim) -> QuerySet[Label]:
    """Every label on the claim in the order they were made."""
    return _labels().filter(claim=claim).order_by("created_at", "id")


def label_get(*, claim_id: int, user) -> Label:
    """The label the user has just saved on the claim."""
    return _labels().get(claim_id=claim_id, annotator=user)
