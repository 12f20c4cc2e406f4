"""Writing answers with their pile: the one place an Answer and its Passages are made, by the
import and by the system under test's run (both a batch at a time, `answers_with_piles_insert`,
COPY on PostgreSQL).

An answer goes after the project's last (`position`), its pile in rank order from 1.
"""

from collections.abc import Sequence

from django.db.models import Max

from annotate.bulk_insert import RowsInserter
from annotate.models import Answer, Passage

# The columns an answer row holds, in the order `answers_with_piles_insert` builds them; the
# others get their model defaults.
ANSWER_COLUMNS = (
    "project_id",
    "external_id",
    "position",
    "question",
    "text",
    "risk_category",
    "answerable",
    "abstention",
    "reference",
    "metadata",
    "system_id",
    "question_id",
)
PASSAGE_COLUMNS = ("answer_id", "rank", "source_id", "title", "text")


def answer_next_position(*, project_id: int) -> int:
    """The position after the project's last answer (0 in an empty project)."""
    top = Answer.objects.filter(project_id=project_id).aggregate(top=Max("position"))["top"]
    return 0 if top is None else top + 1


def answers_with_piles_insert(
    rows: RowsInserter,
    *,
    project_id: int,
    answers: Sequence,
    first_position: int,
    system_ids: Sequence[int | None],
) -> tuple[list[int], list[list[int]]]:
    """Insert `answers` at `first_position` on, then every answer's pile; (their ids in
    order, per answer its passage ids in rank order).

    Each answer has `external_id`, `question`, `text`, `risk_category`, `answerable`,
    `abstention`, `reference`, `metadata`, `question_id` and `pile` (passages with
    `source_id`, `title`, `text`), already checked; `system_ids` holds each answer's system
    (or None), in the same order. Call inside the caller's transaction. The row loops stay
    inline: no function call per answer or passage on the import's hot path."""
    answer_ids = rows.insert(
        Answer,
        ANSWER_COLUMNS,
        [
            (
                project_id,
                answer.external_id,
                first_position + index,
                answer.question,
                answer.text,
                answer.risk_category,
                answer.answerable,
                answer.abstention,
                answer.reference,
                answer.metadata,
                system_id,
                answer.question_id,
            )
            for index, (answer, system_id) in enumerate(zip(answers, system_ids, strict=True))
        ],
        ids=True,
    )
    passage_ids = iter(
        rows.insert(
            Passage,
            PASSAGE_COLUMNS,
            [
                (answer_id, rank, p.source_id, p.title, p.text)
                for answer_id, answer in zip(answer_ids, answers, strict=True)
                for rank, p in enumerate(answer.pile, 1)
            ],
            ids=True,
        )
    )
    return answer_ids, [[next(passage_ids) for _ in answer.pile] for answer in answers]
