"""Answers of an import batch that are already in the project: an issue naming the id, or,
for an idempotent import (the API's), left alone when the stored answer and pile are the same
(counted as existing) and an issue naming the first field that differs otherwise."""

from annotate.models import Answer, Passage, Project
from interchange.importers import AnswerIn
from interchange.importers.issues import IssueLog
from interchange.services.import_judges import ImportedJudges


def answers_not_stored(
    batch: list[AnswerIn],
    *,
    project: Project,
    idempotent: bool,
    issues: IssueLog,
    judges: ImportedJudges,
) -> tuple[list[AnswerIn], int]:
    """The batch's answers to write, their judges' names checked (an answer already stored,
    with an issue added for it, stays in: the import then fails), and how many were left
    alone as existing."""
    ids = [answer.external_id for answer in batch]
    if idempotent:
        stored = _stored_answers(project=project, external_ids=ids)
    else:
        stored = dict.fromkeys(
            Answer.objects.filter(project=project, external_id__in=ids).values_list(
                "external_id", flat=True
            )
        )
    new, existing = [], 0
    for answer in batch:
        if answer.external_id in stored:
            if idempotent:
                changed = _answer_difference(answer, stored[answer.external_id])
                if changed is None:
                    existing += 1
                    continue
                issues.add(
                    answer.location,
                    changed,
                    f"answer id {answer.external_id!r} already exists in this project "
                    f"with a different {changed}: an answer cannot be changed by sending "
                    "it again (send it under a new id)",
                )
                continue
            issues.add(
                answer.location,
                "id",
                f"duplicate id: answer id {answer.external_id!r} already exists in this project",
            )
        for claim in answer.claims:
            for verdict in claim.judges:
                judges.check(answer, verdict.name, verdict.field)
        new.append(answer)
    return new, existing


# What `idempotent` compares of an answer already stored: its columns, then its pile.
_COMPARED = ("question", "text", "reference", "risk_category", "answerable", "abstention")


def _stored_answers(*, project: Project, external_ids: list[str]) -> dict[str, dict]:
    rows = {
        row["external_id"]: {**row, "pile": []}
        for row in Answer.objects.filter(project=project, external_id__in=external_ids).values(
            "id", "external_id", "metadata", *_COMPARED
        )
    }
    if rows:
        by_id = {row["id"]: row for row in rows.values()}
        for answer_id, source_id, title, text in (
            Passage.objects.filter(answer_id__in=by_id)
            .order_by("answer_id", "rank")
            .values_list("answer_id", "source_id", "title", "text")
        ):
            by_id[answer_id]["pile"].append((source_id, title, text))
    return rows


def _answer_difference(answer: AnswerIn, stored: dict) -> str | None:
    """The first field in which `answer` differs from the stored one, or None."""
    names = {"text": "answer"}
    for column in _COMPARED:
        if getattr(answer, column) != stored[column]:
            return names.get(column, column)
    if answer.metadata != (stored["metadata"] or {}):
        return "metadata"
    if len(answer.pile) != len(stored["pile"]):
        return "pile"
    for rank, (passage, (source_id, title, text)) in enumerate(
        zip(answer.pile, stored["pile"], strict=True)
    ):
        if (passage.source_id, passage.title, passage.text) != (source_id, title, text):
            return f"pile[{rank}]"
    return None
