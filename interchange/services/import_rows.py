"""One batch of imported answers written table by table: the answers and piles (by
`annotate.services.answers`), claims, then what hangs off the claims (citations, labels with their history and spans, gold, judge verdicts).

Each step works on the whole batch through one `RowsInserter` (COPY on PostgreSQL); the row
loops stay inline in each step, so the import's hot path makes no extra function call per
answer, claim or passage (a label's evidence check, itself a call per label, is the one
step per label)."""

from collections.abc import Callable
from types import SimpleNamespace as _Row

from annotate.bulk_insert import RowsInserter
from annotate.models import (
    Claim,
    EvidenceSpan,
    Gold,
    Label,
    LabelHistory,
    Project,
    Verdict,
)
from annotate.queue_order import claim_queue_fields
from annotate.services.label_checks import label_evidence_check, label_spans_check
from annotate.services.label_history import HISTORY_STATE_COLUMNS, LABEL_STATE_COLUMNS
from annotate.services.labels import LabelError
from interchange.importers import AnswerIn
from interchange.importers.issues import IssueLog
from interchange.services.import_judges import ImportedJudges
from judges.models import JudgeVerdict

# The columns each batch writes, in the order the writers below build their row tuples; the
# others get their model defaults.
CLAIM_COLUMNS = (
    "project_id",
    "answer_id",
    "text",
    "position",
    "origin",
    "tags",
    "stratum",
    "span_start",
    "span_end",
    "queue_key",
    "labels_required",
)
# A label is a mapped member's (annotator_id) or an imported annotator's: one of the two.
LABEL_COLUMNS = (
    "claim_id",
    "annotator_id",
    "imported_annotator_id",
    *LABEL_STATE_COLUMNS,
    "changed_after_reveal",
)
# A label's history row: its id and action, then the label's own columns.
LABEL_HISTORY_COLUMNS = (
    "label_id_at_time",
    "action",
    "claim_id",
    "annotator_id",
    "imported_annotator_id",
    *HISTORY_STATE_COLUMNS,
    "changed_after_reveal",
)
EVIDENCE_SPAN_COLUMNS = ("label_id", "number", "passage_id", "start", "end", "quote")
GOLD_COLUMNS = (
    "claim_id",
    "verdict",
    "source",
    "reason",
    "decided_by_id",
    "imported_decided_by_id",
)
JUDGE_VERDICT_COLUMNS = ("run_id", "claim_id", "verdict", "confidence", "raw_response")

Who = Callable[[str], tuple[int | None, int | None]]


def claims_write(
    rows: RowsInserter, project: Project, batch: list[AnswerIn], answer_ids: list[int]
) -> list[int]:
    """Insert the batch's claims with their queue key and labels required; their ids."""
    seed, per_claim, double = (
        project.queue_seed,
        project.analysts_per_claim,
        project.double_labelled_share,
    )
    by_answer = project.queue_order == Project.QueueOrder.ANSWER
    claim_rows = []
    for answer_id, answer in zip(answer_ids, batch, strict=True):
        for claim in answer.claims:
            key, required = claim_queue_fields(
                seed=seed,
                answer_external_id=answer.external_id,
                position=claim.position,
                text=claim.text,
                by_answer=by_answer,
                analysts_per_claim=per_claim,
                double_share=double,
            )
            claim_rows.append(
                (
                    project.pk,
                    answer_id,
                    claim.text,
                    claim.position,
                    claim.origin,
                    claim.tags,
                    claim.stratum,
                    claim.span[0] if claim.span else None,
                    claim.span[1] if claim.span else None,
                    key,
                    required,
                )
            )
    return rows.insert(Claim, CLAIM_COLUMNS, claim_rows, ids=True)


def citations_and_labels(
    batch: list[AnswerIn],
    answer_ids: list[int],
    piles: list[list[int]],
    claim_ids: list[int],
    *,
    who: Who,
    issues: IssueLog,
) -> tuple[list[tuple], list[tuple]]:
    """The batch's citation and label rows; a label that fails its evidence check or
    doubles a member's label on a claim becomes an issue instead."""
    citations, labels = [], []
    next_claim_id = iter(claim_ids)
    for answer_id, pile, answer in zip(answer_ids, piles, batch, strict=True):
        for claim in answer.claims:
            claim_id = next(next_claim_id)
            citations += [(claim_id, pile[i]) for i in claim.citations]
            mapped_here: dict[int, str] = {}  # member's user id -> the name mapped to them
            for label in claim.labels:
                user_id, imported_id = who(label.annotator)
                if user_id is not None:
                    if user_id in mapped_here:
                        issues.add(
                            answer.location,
                            f"{label.field}.annotator",
                            f"{label.annotator!r} is mapped to the member that "
                            f"{mapped_here[user_id]!r} is mapped to, who already labelled "
                            "this claim (one label per analyst and claim)",
                        )
                        continue
                    mapped_here[user_id] = label.annotator
                problem = _label_evidence_problem(label, answer, answer_id)
                if problem is not None:
                    issues.add(answer.location, *problem)
                    continue
                labels.append(_label_row(label, claim_id, user_id, imported_id, pile))
    return citations, labels


def _label_evidence_problem(label, answer: AnswerIn, answer_id: int) -> tuple[str, str] | None:
    """(field, message) when the label's quotes fail the labelling screen's evidence checks
    (each quote found in its passage, spans not overlapping), else None."""
    quote = label.quote
    spans = [
        {
            "passage": _Row(
                answer_id=answer_id,
                text=answer.pile[span.passage_index].text,
                pk=span.passage_index,
                rank=span.passage_index + 1,
            ),
            "start": span.start,
            "end": span.end,
            "quote": span.text,
        }
        for span in ([quote, *label.more_quotes] if quote else ())
    ]
    first = spans[0] if spans else {"passage": None, "start": None, "end": None, "quote": ""}
    try:
        if label.more_quotes and label.verdict == Verdict.NOT_IN_PILE:
            raise LabelError("a NOT_IN_PILE label takes no quote")
        if spans[1:]:
            label_spans_check(claim=_Row(answer_id=answer_id), first=first, more=spans[1:])
        else:
            label_evidence_check(claim=_Row(answer_id=answer_id), **first)
    except LabelError as error:
        where = "more_quotes" if label.more_quotes else "quote"
        return f"{label.field}.{where}", str(error)
    return None


def _label_row(label, claim_id: int, user_id, imported_id, pile: list[int]) -> tuple:
    """A label's LABEL_COLUMNS, then its spans after the first (for `dependents_write`, not
    a column)."""
    quote = label.quote
    return (
        claim_id,
        user_id,
        imported_id,
        label.verdict,
        pile[quote.passage_index] if quote else None,
        quote.start if quote else None,
        quote.end if quote else None,
        quote.text if quote else "",
        label.note,
        label.correct,
        label.changed_after_reveal,
        [(pile[span.passage_index], span.start, span.end, span.text) for span in label.more_quotes],
    )


def gold_and_verdicts(
    batch: list[AnswerIn], claim_ids: list[int], *, who: Who, judges: ImportedJudges
) -> tuple[list[tuple], list[tuple]]:
    """The batch's gold and judge verdict rows (making the imported judge runs they
    belong to, and counting each run's verdicts)."""
    golds, verdicts = [], []
    next_claim_id = iter(claim_ids)
    for answer in batch:
        for claim in answer.claims:
            claim_id = next(next_claim_id)
            if claim.gold:
                decided = claim.gold.decided_by
                golds.append(
                    (
                        claim_id,
                        claim.gold.verdict,
                        claim.gold.source,
                        claim.gold.reason,
                        *(who(decided) if decided else (None, None)),
                    )
                )
            for verdict in claim.judges:
                run = judges.run(
                    verdict.name,
                    verdict.prompt_version,
                    verdict.kind,
                    verdict.run,
                    verdict.model,
                )
                judges.run_counts[run.pk][verdict.verdict] += 1
                verdicts.append(
                    (
                        run.pk,
                        claim_id,
                        verdict.verdict,
                        verdict.confidence,
                        verdict.raw_response,
                    )
                )
    return golds, verdicts


def dependents_write(
    rows: RowsInserter,
    citations: list[tuple],
    labels: list[tuple],
    golds: list[tuple],
    verdicts: list,
) -> None:
    """Insert what hangs off the claims: citations, labels with their created history
    rows, gold and judge verdicts."""
    rows.insert(Claim.cited_passages.through, ("claim_id", "passage_id"), citations)
    more = [label[-1] for label in labels]
    labels = [label[:-1] for label in labels]
    label_ids = rows.insert(Label, LABEL_COLUMNS, labels, ids=True)
    rows.insert(
        LabelHistory,
        (*LABEL_HISTORY_COLUMNS, "more_spans"),
        [
            (
                label_id,
                LabelHistory.Action.CREATED.value,
                *label,
                [
                    {"passage_id": passage, "start": start, "end": end, "quote": text}
                    for passage, start, end, text in spans
                ]
                or None,
            )
            for label_id, label, spans in zip(label_ids, labels, more, strict=True)
        ],
    )
    rows.insert(
        EvidenceSpan,
        EVIDENCE_SPAN_COLUMNS,
        [
            (label_id, number, *span)
            for label_id, spans in zip(label_ids, more, strict=True)
            for number, span in enumerate(spans, start=2)
        ],
    )
    rows.insert(Gold, GOLD_COLUMNS, golds)
    rows.insert(JudgeVerdict, JUDGE_VERDICT_COLUMNS, verdicts)
