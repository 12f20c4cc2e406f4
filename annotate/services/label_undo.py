"""Undo: the analyst's most recent save taken back, the label (and its spans, counters and
gold) restored to what it was before, recorded in the history as UNDONE. The write it undoes
is `annotate.services.labels`."""

from django.db import transaction

from annotate import sql
from annotate.models import (
    Claim,
    ClaimSkip,
    EvidenceSpan,
    Label,
    LabelHistory,
    Passage,
    Project,
    Reveal,
    Verdict,
)
from annotate.services.label_checks import LabelError
from annotate.services.label_history import (
    _changed_after_reveal,
    _history_row,
    more_spans_record,
)
from annotate.services.labels import _counters_add
from annotate.services.review import gold_recompute_locked
from annotate.sql import StatementBatch

_SAVES = (LabelHistory.Action.CREATED, LabelHistory.Action.UPDATED)


def _last_save(*, user, project: Project) -> LabelHistory | None:
    """The user's latest save in the project not yet undone (undo works as a stack)."""
    pending_undos = 0
    rows = (
        LabelHistory.objects.filter(annotator=user, claim__project=project)
        .exclude(action=LabelHistory.Action.FLAGGED)
        .order_by("-id")
    )
    for row in rows.iterator(chunk_size=50):
        if row.action == LabelHistory.Action.UNDONE:
            pending_undos += 1
        elif pending_undos:
            pending_undos -= 1
        else:
            return row
    return None


def label_last_save(*, user, project: Project) -> LabelHistory | None:
    """The save `label_undo` would revert now (the label's state after it), or None."""
    return _last_save(user=user, project=project)


def undo_target(*, user, project: Project) -> LabelHistory | ClaimSkip | None:
    """What undo takes back now: `user`'s most recent action in `project` not yet undone,
    their last save (`label_undo`) or their last standing skip (`claim_skip_undo`),
    whichever came later; None when there is neither."""
    save = _last_save(user=user, project=project)
    skip = (
        ClaimSkip.objects.filter(user=user, claim__project=project)
        .select_related("claim")
        .order_by("-created_at", "-id")
        .first()
    )
    if skip is not None and (save is None or skip.created_at > save.changed_at):
        return skip
    return save


@transaction.atomic
def label_undo(*, user, project: Project) -> Claim | None:
    """Revert `user`'s last save in `project`; return its claim, or None if nothing to undo.

    A save that created the label deletes it; one that changed it restores the state before.
    An UNDONE history row records the state after the undo (empty verdict: no label), so the
    history stays complete and in order; undoing again reverts the save before that one.
    """
    target = _last_save(user=user, project=project)
    if target is None:
        return None
    claim = Claim.objects.select_for_update().get(pk=target.claim_id)
    label = Label.objects.filter(claim=claim, annotator=user).first()
    if label is None:
        raise LabelError("That label is already gone; there is nothing to undo.")
    undone = LabelHistory(
        label_id_at_time=label.pk, claim=claim, annotator=user, action=LabelHistory.Action.UNDONE
    )
    if target.action == LabelHistory.Action.CREATED:
        only_label = claim.label_count == 1
        label.delete()
        counters = StatementBatch()
        complete_delta = _counters_add(counters, claim=claim, annotator=user, step=-1)
        counters.run()
        undone.save()
        gold_recompute_locked(claim=claim)
        last = StatementBatch()
        if claim.active_stratum and only_label:
            sql.active_stratum_move(
                last,
                project_id=claim.project_id,
                name=claim.active_stratum,
                labelled=-1,
                supported=-1 if label.verdict == Verdict.SUPPORTED else 0,
            )
        sql.project_claims_complete_move(last, project_id=claim.project_id, delta=complete_delta)
        last.run()
        return claim
    before = (
        LabelHistory.objects.filter(claim=claim, annotator=user, id__lt=target.id)
        .order_by("-id")
        .first()
    )
    if before is None or not before.verdict:
        raise LabelError("The label's earlier state is not in its history; it cannot be undone.")
    passage = Passage.objects.filter(
        pk=before.evidence_passage_id_at_time, answer_id=claim.answer_id
    ).first()
    label.verdict = before.verdict
    label.evidence_passage = passage
    label.evidence_start = before.evidence_start if passage else None
    label.evidence_end = before.evidence_end if passage else None
    label.evidence_quote = before.evidence_quote if passage else ""
    label.note = before.note
    label.correct = before.correct
    label.changed_after_reveal = _changed_after_reveal(
        revealed=Reveal.objects.filter(claim=claim, user=user)
        .values_list("verdict", flat=True)
        .first(),
        verdict=label.verdict,
    )
    label.save()
    restored = _more_spans_restore(label, before.more_spans if passage else None)
    _history_row(label, LabelHistory.Action.UNDONE, more_spans_record(restored)).save()
    gold_recompute_locked(claim=claim)
    return claim


def _more_spans_restore(label: Label, recorded: list[dict] | None) -> list[EvidenceSpan]:
    """Put back the spans after the first that a history row recorded (`more_spans`), those
    whose passage is still in the claim's pile, numbered 2, 3 … again."""
    EvidenceSpan.objects.filter(label=label).delete()
    recorded = recorded or []
    present = set(
        Passage.objects.filter(
            pk__in=[span["passage_id"] for span in recorded], answer_id=label.claim.answer_id
        ).values_list("pk", flat=True)
    )
    spans = [
        EvidenceSpan(
            label=label,
            number=number,
            passage_id=span["passage_id"],
            start=span["start"],
            end=span["end"],
            quote=span["quote"],
        )
        for number, span in enumerate(
            (span for span in recorded if span["passage_id"] in present), start=2
        )
    ]
    return EvidenceSpan.objects.bulk_create(spans)
