"""Writing labels: the one path by which an analyst's verdict reaches the database."""

import functools
import logging
import random
import time
from dataclasses import dataclass

from django.db import OperationalError, connection, transaction
from django.http import Http404
from django.utils import timezone

from annotate import sql
from annotate.models import (
    Claim,
    Label,
    LabelHistory,
    Membership,
    Passage,
    Project,
    Verdict,
)
from annotate.services.design import label_design_fields
from annotate.services.label_checks import (
    LabelError,
    _label_check,
    label_evidence_from_browser,
)
from annotate.services.label_history import (
    HISTORY_STATE_COLUMNS,
    LABEL_STATE_COLUMNS,
    _changed_after_reveal,
    more_spans_record,
)
from annotate.services.queue import claim_take_next, stratum_condition
from annotate.services.review import gold_apply, gold_decide
from annotate.sql import StatementBatch

logger = logging.getLogger(__name__)

# SQLSTATEs after which the whole transaction may simply run again: deadlock_detected and
# serialization_failure (PostgreSQL rolled it back; nothing of it was written).
RETRIED_SQLSTATES = frozenset({"40P01", "40001"})
SAVE_TRIES = 3
SAVE_BACKOFF_SECONDS = 0.02  # times the try number, jittered ×0.5–1.5


class ClaimHeld(LabelError):
    """The claim is reserved for other analysts (live reservations) and has no room for one
    more label: only they may label it now. The caller moves the analyst on to their next
    claim; nothing was saved."""


class LabelSaveConflict(RuntimeError):
    """The save lost to concurrent transactions `SAVE_TRIES` times; nothing of it was written.

    The message is for the analyst: their form is shown again as they sent it."""


def transaction_conflict(error: BaseException) -> bool:
    """Whether `error` is a deadlock or serialisation failure, after which a retry is safe."""
    cause = error.__cause__ if isinstance(error, OperationalError) else error
    return getattr(cause, "sqlstate", None) in RETRIED_SQLSTATES


@dataclass
class _LockedClaim:
    """A claim read under its row lock with what saving a label on it needs (`_claim_lock`)."""

    claim: Claim
    # every label: id, annotator_id, verdict, needs_review, changed_after_reveal
    labels: list[tuple[int, int | None, str, bool, bool]]
    gold: tuple[str, str, str] | None  # its gold: verdict, source, reason
    gold_id: int | None
    reserved: bool  # the user holds a reservation on it (expired or not)
    # ... and the queue served it: not only held for the screen rendered ahead (reached by j/k)
    served: bool
    holds_another: bool  # the user holds an unexpired reservation on another claim of the project
    # other analysts' unexpired reservations on it (what the queue counts against its room)
    others_holding: int
    revealed: str | None  # the user's verdict when the claim was first revealed to them
    # the stratified design's ActiveStratum rows, read in the same round trip (if asked)
    strata: list[tuple] | None = None


def _claim_lock(
    *, project_id: int, claim_id: int, user_id: int, now, strata: bool = False
) -> _LockedClaim:
    """Lock claim `claim_id` of project `project_id` and read under the lock its counters,
    labels and gold and the user's reservations; Http404 if it is not there.

    Two statements in one round trip (`annotate.batch`): the lock, then the read. The read must
    be a statement of its own: a statement's snapshot is taken before it waits for a lock
    (READ COMMITTED), so rows joined in the locking statement could miss a label another
    analyst committed while we waited; the next statement's fresh snapshot sees it.
    Hand-written: the ORM took four statements (and four query compilations) for what the
    labelling screen's save needs on every request. Portable SQL; on SQLite, which has no row
    locks, the IMMEDIATE transaction serialises writers instead.
    """
    batch = StatementBatch()
    if connection.features.has_select_for_update:
        batch.add(*sql.claim_lock_statement(claim_id=claim_id, project_id=project_id))
    read_at = batch.add(
        *sql.claim_locked_read_statement(
            claim_id=claim_id, project_id=project_id, user_id=user_id, now=now
        )
    )
    strata_at = batch.add(*sql.active_strata_statement(project_id=project_id)) if strata else None
    results = batch.run()
    rows = results[read_at] or []
    if not rows:
        raise Http404("No such claim.")
    first = rows[0]
    # The claim with the fields read; the others load on access (from_db wants model order).
    read = dict(
        zip(
            ["id", "project_id", "answer_id", "text", "label_count", "labels_required"],
            first[:6],
            strict=True,
        ),
        needs_review=bool(first[6]),
        inclusion_probability=first[19],
        active_stratum=first[20] or "",
    )
    fields = [f.attname for f in Claim._meta.concrete_fields if f.attname in read]
    claim = Claim.from_db(connection.alias, fields, [read[name] for name in fields])
    return _LockedClaim(
        claim=claim,
        labels=[
            (row[14], row[15], row[16], bool(row[17]), bool(row[18]))
            for row in rows
            if row[14] is not None
        ],
        gold=(first[11], first[12], first[13]) if first[10] is not None else None,
        gold_id=first[10],
        reserved=bool(first[7]),
        served=bool(first[7]) and not first[21],
        holds_another=bool(first[8]),
        others_holding=int(first[22] or 0),
        revealed=first[9],
        strata=(results[strata_at] or []) if strata_at is not None else None,
    )


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
    more: list[dict] | tuple = (),
    note: str = "",
    correct: str = "",
    stratum: dict | None = None,
    require_quote: bool | None = None,
) -> Label:
    """Create or replace `annotator`'s label on `claim`, verify the quote, keep the history.

    Offsets are in code points (convert browser UTF-16 offsets with
    `annotate.quotes.utf16_to_codepoint_offset` first). `require_quote` defaults to the
    project's setting: SUPPORTED and CONTRADICTED then need a quote, NOT_IN_PILE never does.
    `more`: the spans after the first (`passage`, `start`, `end`, `quote` each), at most
    `EVIDENCE_SPANS_MAX` in all, none overlapping another in its passage.
    """
    evidence = {"passage": passage, "start": start, "end": end, "quote": quote, "more": more}
    _label_check(claim=claim, verdict=verdict, require_quote=require_quote, **evidence)
    # The claim's row lock serialises every writer of its labels and reservations, so the
    # quota check in _label_write is exact under concurrency (see annotate.services.queue).
    now = timezone.now()
    locked = _claim_lock(
        project_id=claim.project_id, claim_id=claim.pk, user_id=annotator.pk, now=now
    )
    batch = StatementBatch()
    sql.reservation_release(batch, claim_id=claim.pk, user_id=annotator.pk)
    _, complete_delta = _label_write(
        batch,
        locked=locked,
        annotator=annotator,
        verdict=verdict,
        note=note,
        correct=correct,
        stratum=stratum or {},
        now=now,
        count_changed=claim.project.count_changed_after_reveal,
        **evidence,
    )
    _stratum_counts_move(batch, locked=locked, annotator=annotator, verdict=verdict)
    sql.project_claims_complete_move(batch, project_id=claim.project_id, delta=complete_delta)
    batch.run()
    return Label.objects.get(claim_id=claim.pk, annotator=annotator)


def _retried_on_conflict(save):
    """`save` (a transaction, keyword arguments only), run again after a deadlock or a
    serialisation failure: up to `SAVE_TRIES` tries with a short jittered backoff, then
    LabelSaveConflict. Call it outside any transaction (inside one, only its savepoint is
    retried while the outer transaction keeps its locks)."""

    @functools.wraps(save)
    def retried(**arguments):
        for attempt in range(1, SAVE_TRIES + 1):
            try:
                return save(**arguments)
            except OperationalError as error:
                if not transaction_conflict(error):
                    raise
                logger.warning(
                    "save-and-next of claim %s by user %s: %s (try %s of %s)",
                    arguments.get("claim_id"),
                    getattr(arguments.get("annotator"), "pk", None),
                    str(error).splitlines()[0],
                    attempt,
                    SAVE_TRIES,
                )
                if attempt == SAVE_TRIES:
                    raise LabelSaveConflict(
                        "Your label was not saved: the database was busy with other saves at "
                        "that moment (several tabs saving at once, say). Your verdict and quote "
                        "are still in the form: press Save again."
                    ) from error
                time.sleep(SAVE_BACKOFF_SECONDS * attempt * random.uniform(0.5, 1.5))
        raise AssertionError("unreachable")

    return retried


@_retried_on_conflict
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
    more: list[dict] | tuple = (),
    note: str = "",
    correct: str = "",
    seconds: float | None = None,
    shown: int | None = None,
) -> tuple[Label, Claim | None]:
    """The labelling screen's save-and-next: save `annotator`'s label on claim `claim_id` (the
    browser's evidence, see `label_evidence_from_browser`) and reserve their next claim, in one
    transaction (run again after a deadlock or a serialisation failure: `_retried_on_conflict`;
    call it outside any transaction). Returns the label and the next claim (None when the queue
    is empty).

    Raises LabelError or QueueError with nothing saved, Http404 for a claim not in `project`.
    The label records the member's queue stratum; a claim the queue did not serve (no
    reservation of theirs: reached by moving within an answer, `j`/`k`) is marked
    `outside_queue`, so the report can leave it out of the random sample. The project's
    completion counter is the transaction's last write: every save completing a claim writes
    that one row, so its lock is held only until the commit. `membership.labels_saved` and
    `project.claims_complete` are moved in memory too, so the next screen's progress needs no
    query.

    Three round trips on PostgreSQL (`annotate.batch`): the claim's lock with the read of its
    labels, gold and the member's reservations; the label's writes with the search for the
    next claim; the next claim's reservation, the completion counter and the next screen's
    reads (`annotate.services.queue.claim_take_next`). `seconds`: the time the screen measured
    on this claim before the save (`LabelTime`, in the label's round trip; None: not measured).
    `shown`: the claim whose screen the browser shows already, rendered ahead (label.js's
    `X-Screen-Ahead`): when it is the next claim, its screen is not read (it comes back as its
    id alone, for the save's confirmation).
    """
    condition, recorded = stratum_condition(project=project, stratum=membership.queue_stratum)
    now = timezone.now()
    locked = _claim_lock(
        project_id=project.pk,
        claim_id=claim_id,
        user_id=annotator.pk,
        now=now,
        strata=project.queue_design == Project.QueueDesign.STRATIFIED,
    )
    claim = locked.claim
    claim.project = project
    evidence = label_evidence_from_browser(
        claim=claim,
        passage_id=passage_id,
        start_utf16=start_utf16,
        end_utf16=end_utf16,
        quote=quote,
        more=more,
    )
    _label_check(claim=claim, verdict=verdict, require_quote=None, **evidence)
    # Whether the queue served this claim: the member's reservation on it, expired or not,
    # unless it was only held for the screen rendered ahead (then reached by j/k).
    writes = StatementBatch()
    if locked.reserved:
        sql.reservation_release(writes, claim_id=claim.pk, user_id=annotator.pk)
    stratum = _label_stratum(project=project, locked=locked, recorded=recorded)
    labels_before = claim.label_count
    label, complete_delta = _label_write(
        writes,
        locked=locked,
        annotator=annotator,
        verdict=verdict,
        note=note,
        correct=correct,
        stratum=stratum,
        now=now,
        count_changed=project.count_changed_after_reveal,
        design=label_design_fields(project=project, claim=claim, served=locked.served),
        **evidence,
    )
    sql.label_time_add(writes, claim_id=claim.pk, user_id=annotator.pk, seconds=seconds, at=now)
    last = StatementBatch()
    moved = _stratum_counts_move(last, locked=locked, annotator=annotator, verdict=verdict)
    sql.project_claims_complete_move(last, project_id=project.pk, delta=complete_delta)
    following = claim_take_next(
        project=project,
        user=annotator,
        condition=condition,
        now=now,
        may_hold_one=locked.holds_another,
        before=writes,
        after=last,
        strata=locked.strata,
        counted=moved,
        shown=shown,
    )
    membership.labels_saved += claim.label_count - labels_before
    project.claims_complete += complete_delta
    return label, following


def _label_stratum(*, project: Project, locked: _LockedClaim, recorded: dict) -> dict:
    """The stratum a label records: the member's queue restriction (`recorded`), marked
    `outside_queue` for a claim the queue did not serve, and under the stratified design the
    claim's design stratum beside it (issue 14)."""
    if not locked.served:
        return {**recorded, "outside_queue": True}
    if project.queue_design == Project.QueueDesign.STRATIFIED:
        return {**recorded, "active_stratum": locked.claim.active_stratum}
    return recorded


def _label_write(
    batch: StatementBatch,
    *,
    locked: _LockedClaim,
    annotator,
    verdict: str,
    passage: Passage | None,
    start: int | None,
    end: int | None,
    quote: str,
    note: str,
    correct: str,
    stratum: dict,
    now,
    count_changed: bool,
    design: dict | None = None,
    more: list[dict] | tuple = (),
) -> tuple[Label, int]:
    """Queue on `batch` the writes of the label, its history row, the counters and the gold.

    Call inside a transaction holding the claim's row lock, with `locked` read under it (so its
    `label_count` is exact), after `_label_check`; run `batch` before the transaction ends.
    Returns the label as it will stand (without its id when new) and the change to the
    project's `claims_complete`, for the caller to apply as its transaction's last write.
    The label is `changed_after_reveal` when its verdict differs from the user's at the
    claim's reveal (`locked.revealed`); `count_changed` is the project's setting for gold.
    `design`: the queue design and π it records (`annotate.services.design.label_design_fields`;
    none: "" and no π). `more`: the spans after the first (`EvidenceSpan` rows, replacing the
    label's earlier ones).

    The steps, each its own function: the room left on the claim (`_label_room`), the label as
    it will stand (`_label_as_saved`), its row and spans (`_label_row_write`), its history row
    (`_label_history_write`), and the gold the claim's labels now decide (`_label_gold_write`).
    One parameter list because the one caller pair (save, save-and-next) hands the browser's
    fields through unchanged, in one locked round trip.
    """
    own = next((row for row in locked.labels if row[1] == annotator.pk), None)
    complete_delta = 0
    if own is None:
        _label_room(locked)
        complete_delta = _counters_add(batch, claim=locked.claim, annotator=annotator, step=1)
    label = _label_as_saved(
        locked=locked,
        own=own,
        annotator=annotator,
        verdict=verdict,
        evidence=(passage, start, end, quote),
        note=note,
        correct="" if verdict == Verdict.SUPPORTED else correct,
        stratum=stratum,
        now=now,
        design=design,
    )
    state = {
        "values": [getattr(label, column) for column in LABEL_STATE_COLUMNS],
        "changed": label.changed_after_reveal,
        "moment": connection.ops.adapt_datetimefield_value(now),
    }
    label_id = _label_row_write(batch, label=label, own=own, state=state, more=more)
    _label_history_write(batch, label=label, label_id=label_id, own=own, state=state, more=more)
    _label_gold_write(batch, locked=locked, label=label, count_changed=count_changed, now=now)
    return label, complete_delta


def _label_room(locked: _LockedClaim) -> None:
    """Refuse a first label from this analyst where the claim has no room left for it."""
    claim = locked.claim
    if claim.label_count >= claim.labels_required:
        raise LabelError(
            f"This claim already has the {claim.labels_required} label"
            f"{'s' if claim.labels_required != 1 else ''} it needs from other analysts; "
            "your label was not saved. Take the next claim from your queue."
        )
    # The queue's own rule (annotate.services.queue): labels plus other analysts' live
    # reservations never exceed the labels required. A claim reached outside the queue
    # (j/k, a link, the API) while a colleague holds it is theirs until the reservation
    # lapses; saving it anyway left the colleague's save refused, and their time lost.
    if claim.label_count + locked.others_holding >= claim.labels_required:
        raise ClaimHeld(
            "A colleague has this claim reserved while they label it; your label was not saved."
        )


def _label_as_saved(
    *, locked, own, annotator, verdict, evidence, note, correct, stratum, now, design
) -> Label:
    """The label as it will stand after the save (without its id when new), unsaved: the
    statements write it; the caller reads it back (the next screen, the API's reply)."""
    passage, start, end, quote = evidence
    claim = locked.claim
    label = Label(
        id=own[0] if own else None,
        claim=claim,
        annotator=annotator,
        verdict=verdict,
        evidence_passage=passage,
        evidence_start=start if passage else None,
        evidence_end=end if passage else None,
        evidence_quote=quote if passage else "",
        note=note,
        correct=correct,
        stratum=stratum,
        needs_review=False,
        changed_after_reveal=_changed_after_reveal(revealed=locked.revealed, verdict=verdict),
        created_at=None if own else now,
        updated_at=now,
    )
    label._state.adding = False
    label._state.db = connection.alias
    # The guidelines in force: a lead can tell which labels predate a change of them.
    label.guideline_version = claim.project.guidelines_version
    recorded = design or {"design": "", "inclusion_probability": None}
    label.design = recorded["design"]
    label.inclusion_probability = recorded["inclusion_probability"]
    return label


def _label_row_write(batch: StatementBatch, *, label: Label, own, state: dict, more) -> tuple:
    """Queue the label's insert (or update, its earlier extra spans deleted) and its spans after
    the first; returns the SQL fragment that names the label's id in later statements."""
    fields = {
        "columns": LABEL_STATE_COLUMNS,
        "stratum": Label._meta.get_field("stratum").get_db_prep_save(label.stratum, connection),
        "guideline": label.guideline_version,
        "design": label.design,
        "inclusion_probability": label.inclusion_probability,
        **state,
    }
    if own is None:
        batch.add(
            *sql.label_insert_statement(
                claim_id=label.claim_id, annotator_id=label.annotator_id, **fields
            )
        )
        label_id = sql.label_id_of_statement(
            claim_id=label.claim_id, annotator_id=label.annotator_id
        )
    else:
        batch.add(*sql.label_update_statement(label_id=own[0], **fields))
        label_id = ("%s", [own[0]])
        # Its earlier spans after the first go; one statement in the same round trip.
        batch.add(*sql.evidence_spans_delete_statement(label_id=own[0]))
    for number, span in enumerate(more if label.evidence_passage else (), start=2):
        batch.add(
            *sql.evidence_span_insert_statement(
                label_id=label_id,
                number=number,
                passage_id=span["passage"].pk,
                start=span["start"],
                end=span["end"],
                quote=span["quote"],
            )
        )
    return label_id


def _label_history_write(
    batch: StatementBatch, *, label: Label, label_id: tuple, own, state: dict, more
) -> None:
    """Queue the history row, which holds the label's state after the change."""
    more_spans = more_spans_record(more if label.evidence_passage else ())
    batch.add(
        *sql.label_history_insert_statement(
            label_id=label_id,
            claim_id=label.claim_id,
            annotator_id=label.annotator_id,
            action=LabelHistory.Action.UPDATED if own else LabelHistory.Action.CREATED,
            columns=HISTORY_STATE_COLUMNS,
            more_spans=LabelHistory._meta.get_field("more_spans").get_db_prep_save(
                more_spans, connection
            )
            if more_spans
            else None,
            **state,
        )
    )


def _label_gold_write(
    batch: StatementBatch, *, locked: _LockedClaim, label: Label, count_changed: bool, now
) -> None:
    """Queue the gold the claim's labels decide with this one in place of the analyst's old."""
    labels = [(row[2], row[3], row[4]) for row in locked.labels if row[1] != label.annotator_id]
    labels.append((label.verdict, False, label.changed_after_reveal))
    claim = locked.claim
    decision = gold_decide(
        labels_required=claim.labels_required,
        claim_needs_review=claim.needs_review,
        labels=labels,
        gold=locked.gold,
        count_changed=count_changed,
    )
    gold_apply(batch, claim=claim, decision=decision, gold_id=locked.gold_id, now=now)


def _counters_add(batch: StatementBatch, *, claim: Claim, annotator, step: int) -> int:
    """Queue the moves of the claim's and the member's counters by one label; call holding
    `claim`'s row lock. Returns the change to the project's `claims_complete`, for the caller to
    apply with `sql.project_claims_complete_move` as its transaction's last write: every save that
    completes a claim writes that one project row, so holding its lock any longer serialises
    all analysts."""
    sql.claim_label_count_add(batch, claim_id=claim.pk, step=step)
    sql.membership_labels_saved_add(
        batch, project_id=claim.project_id, user_id=annotator.pk, step=step
    )
    after = claim.label_count + step
    delta = 0
    if step > 0 and after == claim.labels_required:
        delta = 1
    elif step < 0 and claim.label_count == claim.labels_required:
        delta = -1
    claim.label_count = after
    return delta


def _stratum_counts_move(
    batch: StatementBatch, *, locked: _LockedClaim, annotator, verdict: str
) -> tuple[str, int, int] | None:
    """Queue the move of the claim's `ActiveStratum` counts (stratified design) by this save:
    the claim's first label counts it labelled (and SUPPORTED when it says so); a change of
    the only label's verdict moves `supported`. Returns (stratum, labelled, supported) moved,
    or None. Queue it just before the project's completion counter (the lock order)."""
    name = locked.claim.active_stratum
    if not name:
        return None
    own = next((row for row in locked.labels if row[1] == annotator.pk), None)
    supported = 1 if verdict == Verdict.SUPPORTED else 0
    if own is None and not locked.labels:
        labelled = 1
    elif own is not None and len(locked.labels) == 1:
        labelled = 0
        supported -= 1 if own[2] == Verdict.SUPPORTED else 0
    else:
        return None
    if not labelled and not supported:
        return None
    sql.active_stratum_move(
        batch,
        project_id=locked.claim.project_id,
        name=name,
        labelled=labelled,
        supported=supported,
    )
    return name, labelled, supported
