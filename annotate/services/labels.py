"""Writing labels: the one path by which an analyst's verdict reaches the database."""

from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone

from annotate.models import (
    Claim,
    Label,
    LabelHistory,
    Membership,
    Passage,
    Project,
    Reservation,
    Verdict,
)
from annotate.quotes import QuoteError, quote_locate, quote_verify, utf16_to_codepoint_offset


class LabelError(ValueError):
    """A label that cannot be saved as given; the message is for the analyst."""


def _history_row(label: Label, action: str) -> LabelHistory:
    return LabelHistory(
        label_id_at_time=label.pk,
        claim_id=label.claim_id,
        annotator_id=label.annotator_id,
        action=action,
        verdict=label.verdict,
        evidence_passage_id_at_time=label.evidence_passage_id,
        evidence_start=label.evidence_start,
        evidence_end=label.evidence_end,
        evidence_quote=label.evidence_quote,
        note=label.note,
        correct=label.correct,
    )


def label_evidence_check(
    *, claim: Claim, passage: Passage | None, start: int | None, end: int | None, quote: str
) -> None:
    """Raise LabelError unless the evidence is absent or verified in the claim's own pile."""
    if passage is None:
        if start is not None or end is not None or quote:
            raise LabelError("A quote needs the passage it comes from.")
        return
    if passage.answer_id != claim.answer_id:
        raise LabelError("The quoted passage is not in this answer's pile.")
    if start is None or end is None:
        raise LabelError("A quote needs its start and end in the passage.")
    try:
        quote_verify(passage_text=passage.text, start=start, end=end, quote=quote)
    except QuoteError as error:
        raise LabelError(str(error)) from error


def label_evidence_from_browser(
    *,
    claim: Claim,
    passage_id: int | None,
    start_utf16: int | None,
    end_utf16: int | None,
    quote: str,
) -> dict:
    """Turn a browser selection into `label_save`'s evidence arguments (code points).

    The browser sends UTF-16 offsets (JavaScript strings); they are converted against the
    passage text. Without offsets (a quote typed or pasted with JavaScript off) the quote is
    looked up in the passage. No passage and no quote: no evidence.
    """
    if passage_id is None and not quote:
        return {"passage": None, "start": None, "end": None, "quote": ""}
    if passage_id is None:
        raise LabelError("Which passage is the quote from? Select it in the pile.")
    passage = Passage.objects.filter(pk=passage_id, answer_id=claim.answer_id).first()
    if passage is None:
        raise LabelError("The quoted passage is not in this answer's pile.")
    if not quote:
        raise LabelError("The quote is empty: select the sentence that decides the claim.")
    if start_utf16 is None or end_utf16 is None:
        span = quote_locate(passage_text=passage.text, quote=quote)
        if span is None:
            raise LabelError(f"Passage #{passage.rank} does not contain the quote {quote!r}.")
        start, end = span
    else:
        try:
            start = utf16_to_codepoint_offset(passage.text, start_utf16)
            end = utf16_to_codepoint_offset(passage.text, end_utf16)
        except QuoteError as error:
            raise LabelError(str(error)) from error
    return {"passage": passage, "start": start, "end": end, "quote": quote}


def _label_check(
    *,
    claim: Claim,
    verdict: str,
    passage: Passage | None,
    start: int | None,
    end: int | None,
    quote: str,
    require_quote: bool | None,
) -> None:
    if verdict not in Verdict.values:
        raise LabelError(
            f"Unknown verdict {verdict!r}: use SUPPORTED, CONTRADICTED or NOT_IN_PILE."
        )
    if require_quote is None:
        require_quote = claim.project.quote_required
    if require_quote and verdict != Verdict.NOT_IN_PILE and passage is None:
        raise LabelError(
            f"A {verdict} label needs a quote: select the sentence in the pile that decides it."
        )
    label_evidence_check(claim=claim, passage=passage, start=start, end=end, quote=quote)


@transaction.atomic
def label_save(
    *,
    claim: Claim,
    annotator,
    verdict: str,
    passage: Passage | None = None,
    start: int | None = None,
    end: int | None = None,
    quote: str = "",
    note: str = "",
    correct: str = "",
    stratum: dict | None = None,
    require_quote: bool | None = None,
) -> Label:
    """Create or replace `annotator`'s label on `claim`, verify the quote, keep the history.

    Offsets are in code points (convert browser UTF-16 offsets with
    `annotate.quotes.utf16_to_codepoint_offset` first). `require_quote` defaults to the
    project's setting: SUPPORTED and CONTRADICTED then need a quote, NOT_IN_PILE never does.
    """
    evidence = {"passage": passage, "start": start, "end": end, "quote": quote}
    _label_check(claim=claim, verdict=verdict, require_quote=require_quote, **evidence)
    # The claim's row lock serialises every writer of its labels and reservations, so the
    # quota check in _label_write is exact under concurrency (see annotate.services.queue).
    locked = Claim.objects.select_for_update().get(pk=claim.pk)
    Reservation.objects.filter(claim=locked, user=annotator).delete()
    label, complete_delta = _label_write(
        claim=locked,
        annotator=annotator,
        verdict=verdict,
        note=note,
        correct=correct,
        stratum=stratum or {},
        **evidence,
    )
    _project_complete_move(project_id=locked.project_id, delta=complete_delta)
    return label


@transaction.atomic
def label_save_and_next(
    *,
    project: Project,
    membership: Membership,
    annotator,
    claim_id: int,
    verdict: str,
    passage_id: int | None = None,
    start_utf16: int | None = None,
    end_utf16: int | None = None,
    quote: str = "",
    note: str = "",
    correct: str = "",
) -> tuple[Label, Claim | None]:
    """The labelling screen's save-and-next: save `annotator`'s label on claim `claim_id` (the
    browser's evidence, see `label_evidence_from_browser`) and reserve their next claim, in one
    transaction. Returns the label and the next claim (None when the queue is empty).

    Raises LabelError or QueueError with nothing saved, Http404 for a claim not in `project`.
    The label records the member's queue stratum; a claim the queue did not serve (no
    reservation of theirs: reached by moving within an answer, `j`/`k`) is marked
    `outside_queue`, so the report can leave it out of the random sample. The project's completion counter is the
    transaction's last write: every save completing a claim writes that one row, so its lock
    is held only until the commit. `membership.labels_saved` and `project.claims_complete` are
    moved in memory too, so the next screen's progress needs no query.
    """
    from annotate.selectors import claim_get_for_project
    from annotate.services.queue import claim_take_next, stratum_condition

    condition, recorded = stratum_condition(project=project, stratum=membership.queue_stratum)
    claim = claim_get_for_project(project=project, claim_id=claim_id, lock=True)
    claim.project = project
    evidence = label_evidence_from_browser(
        claim=claim,
        passage_id=passage_id,
        start_utf16=start_utf16,
        end_utf16=end_utf16,
        quote=quote,
    )
    _label_check(claim=claim, verdict=verdict, require_quote=None, **evidence)
    # The member's reservations in the project: whether the queue served this claim (its
    # reservation, expired or not), and whether they hold another the queue must serve first.
    now = timezone.now()
    held = dict(
        Reservation.objects.filter(user=annotator, claim__project=project).values_list(
            "claim_id", "expires_at"
        )
    )
    served = claim.pk in held
    if served:
        Reservation.objects.filter(claim=claim, user=annotator).delete()
    stratum = recorded if served else {**recorded, "outside_queue": True}
    holds_another = any(expires > now for claim_id, expires in held.items() if claim_id != claim.pk)
    labels_before = claim.label_count
    label, complete_delta = _label_write(
        claim=claim,
        annotator=annotator,
        verdict=verdict,
        note=note,
        correct=correct,
        stratum=stratum,
        **evidence,
    )
    following = claim_take_next(
        project=project, user=annotator, condition=condition, now=now, may_hold_one=holds_another
    )
    _project_complete_move(project_id=project.pk, delta=complete_delta)
    membership.labels_saved += claim.label_count - labels_before
    project.claims_complete += complete_delta
    return label, following


def _label_write(
    *,
    claim: Claim,
    annotator,
    verdict: str,
    passage: Passage | None,
    start: int | None,
    end: int | None,
    quote: str,
    note: str,
    correct: str,
    stratum: dict,
) -> tuple[Label, int]:
    """Create or replace the label, with its history row, the counters and the gold.

    Call inside a transaction holding `claim`'s row lock, with `claim` read under it (so its
    `label_count` is exact), after `_label_check`. Returns the label and the change to the
    project's `claims_complete`, for the caller to apply as its transaction's last write.
    """
    from annotate.services.review import gold_recompute_locked

    if verdict == Verdict.SUPPORTED:
        correct = ""
    # Every label of the claim, read under its lock: the annotator's own, and what the gold
    # rule needs (one short read instead of two).
    labels = list(Label.objects.filter(claim=claim))
    label = next((row for row in labels if row.annotator_id == annotator.pk), None)
    complete_delta = 0
    action = LabelHistory.Action.UPDATED if label else LabelHistory.Action.CREATED
    if label is None:
        if claim.label_count >= claim.labels_required:
            raise LabelError(
                f"This claim already has the {claim.labels_required} label"
                f"{'s' if claim.labels_required != 1 else ''} it needs from other analysts; "
                "your label was not saved. Take the next claim from your queue."
            )
        label = Label(claim=claim, annotator=annotator)
        labels.append(label)
        complete_delta = _counters_add(claim=claim, annotator=annotator, step=1)
    label.verdict = verdict
    label.evidence_passage = passage
    label.evidence_start = start if passage else None
    label.evidence_end = end if passage else None
    label.evidence_quote = quote if passage else ""
    label.note = note
    label.correct = correct
    label.stratum = stratum
    label.needs_review = False
    label.save()
    _history_row(label, action).save()
    gold_recompute_locked(claim=claim, labels=[(row.verdict, row.needs_review) for row in labels])
    return label, complete_delta


def _counters_add(*, claim: Claim, annotator, step: int) -> int:
    """Move the claim's and the member's counters by one label; call holding `claim`'s row
    lock. Returns the change to the project's `claims_complete`, for the caller to apply with
    `_project_complete_move` as its transaction's last write: every save that completes a claim
    writes that one project row, so holding its lock any longer serialises all analysts."""
    # Two one-row updates on every save, written out: the ORM spent more building them than
    # the database spends running them.
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {Claim._meta.db_table} SET label_count = label_count + %s WHERE id = %s",
            [step, claim.pk],
        )
        cursor.execute(
            f"UPDATE {Membership._meta.db_table} SET labels_saved = labels_saved + %s"
            " WHERE project_id = %s AND user_id = %s",
            [step, claim.project_id, annotator.pk],
        )
    after = claim.label_count + step
    delta = 0
    if step > 0 and after == claim.labels_required:
        delta = 1
    elif step < 0 and claim.label_count == claim.labels_required:
        delta = -1
    claim.label_count = after
    return delta


def _project_complete_move(*, project_id: int, delta: int) -> None:
    if delta > 0:
        Project.objects.filter(pk=project_id).update(claims_complete=F("claims_complete") + 1)
    elif delta < 0:
        Project.objects.filter(pk=project_id, claims_complete__gt=0).update(
            claims_complete=F("claims_complete") - 1
        )


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


@transaction.atomic
def label_undo(*, user, project: Project) -> Claim | None:
    """Revert `user`'s last save in `project`; return its claim, or None if nothing to undo.

    A save that created the label deletes it; one that changed it restores the state before.
    An UNDONE history row records the state after the undo (empty verdict: no label), so the
    history stays complete and in order; undoing again reverts the save before that one.
    """
    from annotate.services.review import gold_recompute_locked

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
        label.delete()
        complete_delta = _counters_add(claim=claim, annotator=user, step=-1)
        undone.save()
        gold_recompute_locked(claim=claim)
        _project_complete_move(project_id=claim.project_id, delta=complete_delta)
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
    label.save()
    _history_row(label, LabelHistory.Action.UNDONE).save()
    gold_recompute_locked(claim=claim)
    return claim
