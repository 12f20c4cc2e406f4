"""Writing labels: the one path by which an analyst's verdict reaches the database."""

import logging
import random
import time
from dataclasses import dataclass

from django.db import OperationalError, connection, transaction
from django.http import Http404
from django.utils import timezone

from annotate import sql
from annotate.models import (
    EVIDENCE_SPANS_MAX,
    Claim,
    ClaimSkip,
    EvidenceSpan,
    Label,
    LabelHistory,
    Membership,
    Passage,
    Project,
    Reveal,
    Verdict,
)
from annotate.quotes import QuoteError, quote_locate, quote_verify, utf16_to_codepoint_offset
from annotate.sql import StatementBatch

# A label's own state, in the order every writer of labels and their history uses (the
# history row names the passage `evidence_passage_id_at_time`).
LABEL_STATE_COLUMNS = (
    "verdict",
    "evidence_passage_id",
    "evidence_start",
    "evidence_end",
    "evidence_quote",
    "note",
    "correct",
)
HISTORY_STATE_COLUMNS = tuple(
    "evidence_passage_id_at_time" if column == "evidence_passage_id" else column
    for column in LABEL_STATE_COLUMNS
)


logger = logging.getLogger(__name__)

# SQLSTATEs after which the whole transaction may simply run again: deadlock_detected and
# serialization_failure (PostgreSQL rolled it back; nothing of it was written).
RETRIED_SQLSTATES = frozenset({"40P01", "40001"})
SAVE_TRIES = 3
SAVE_BACKOFF_SECONDS = 0.02  # times the try number, jittered ×0.5–1.5


class LabelError(ValueError):
    """A label that cannot be saved as given; the message is for the analyst."""


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


def more_spans_record(spans) -> list[dict] | None:
    """A label's spans after the first as its history row keeps them (`LabelHistory.more_spans`):
    from `EvidenceSpan` rows or the spans `label_save` takes (dicts with a `passage`)."""
    rows = []
    for span in spans:
        if isinstance(span, EvidenceSpan):
            passage_id, start, end, quote = span.passage_id, span.start, span.end, span.quote
        else:
            passage_id = span["passage"].pk
            start, end, quote = span["start"], span["end"], span["quote"]
        rows.append({"passage_id": passage_id, "start": start, "end": end, "quote": quote})
    return rows or None


def _history_row(label: Label, action: str, more: list[dict] | None = None) -> LabelHistory:
    return LabelHistory(
        label_id_at_time=label.pk,
        claim_id=label.claim_id,
        annotator_id=label.annotator_id,
        imported_annotator_id=label.imported_annotator_id,
        action=action,
        verdict=label.verdict,
        evidence_passage_id_at_time=label.evidence_passage_id,
        evidence_start=label.evidence_start,
        evidence_end=label.evidence_end,
        evidence_quote=label.evidence_quote,
        more_spans=more,
        note=label.note,
        correct=label.correct,
        changed_after_reveal=label.changed_after_reveal,
    )


def reveal_record(*, claim_id: int, user, verdict: str) -> None:
    """Record that the judge's or colleagues' verdicts on claim `claim_id` were shown to
    `user`, whose own label then said `verdict`. Only the first reveal is kept: its verdict is
    their blind judgement, against which a later change is `changed_after_reveal`. One
    statement, INSERT … ON CONFLICT DO NOTHING, for a screen that just rendered a reveal."""
    Reveal.objects.bulk_create(
        [Reveal(claim_id=claim_id, user=user, verdict=verdict)], ignore_conflicts=True
    )


def _changed_after_reveal(*, revealed: str | None, verdict: str) -> bool:
    """A label is changed after reveal when a reveal was shown and its verdict is no longer
    the one the analyst had then (changing back to it clears the flag)."""
    return revealed is not None and verdict != revealed


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


def _span_name(number: int, spans: int) -> str:
    """ "Span 2: " before a message about one span of a label with several; nothing with one."""
    return f"Span {number}: " if spans > 1 else ""


def label_evidence_from_browser(
    *,
    claim: Claim,
    passage_id: int | None,
    start_utf16: int | None,
    end_utf16: int | None,
    quote: str,
    more: list[dict] | tuple = (),
) -> dict:
    """Turn a browser selection into `label_save`'s evidence arguments (code points).

    The browser sends UTF-16 offsets (JavaScript strings); they are converted against the
    passage text. Without offsets (a quote typed or pasted with JavaScript off) the quote is
    looked up in the passage; without a passage, in the whole pile in rank order. No passage
    and no quote: no evidence. `more`: the spans after the first, each a dict with the same
    four keys (`passage_id`, `start_utf16`, `end_utf16`, `quote`); they come back as `more`,
    a list of `label_save`'s span dicts. When the first span is empty the second takes its
    place. The passages are read in one query (two when a quote came without its passage).
    """
    sent = [
        {"passage_id": passage_id, "start_utf16": start_utf16, "end_utf16": end_utf16,
         "quote": quote},
        *more,
    ]  # fmt: skip
    if len(sent) > 1 and sent[0]["passage_id"] is None and not sent[0]["quote"]:
        sent = sent[1:]  # the first span was cleared: the next one is the first now
    if len(sent) > EVIDENCE_SPANS_MAX:
        raise LabelError(
            f"A label quotes at most {EVIDENCE_SPANS_MAX} spans; this one has {len(sent)}: "
            "remove one."
        )
    if sent[0]["passage_id"] is None and not sent[0]["quote"]:
        return {"passage": None, "start": None, "end": None, "quote": "", "more": []}
    ids = {span["passage_id"] for span in sent if span["passage_id"] is not None}
    passages = {
        passage.pk: passage
        for passage in Passage.objects.filter(pk__in=ids, answer_id=claim.answer_id)
    }
    # A quote typed without its passage (the pile's other page, JavaScript off) is looked up
    # in the whole pile, in rank order.
    pile = []
    if any(span["passage_id"] is None and span["quote"] for span in sent):
        pile = list(Passage.objects.filter(answer_id=claim.answer_id).order_by("rank", "pk"))
    spans = [
        _span_from_browser(passages, pile, **span, name=_span_name(number, len(sent)))
        for number, span in enumerate(sent, start=1)
    ]
    return {**spans[0], "more": spans[1:]}


def _span_from_browser(
    passages: dict,
    pile: list,
    *,
    passage_id: int | None,
    start_utf16: int | None,
    end_utf16: int | None,
    quote: str,
    name: str,
) -> dict:
    if passage_id is None:
        if not quote:
            raise LabelError(f"{name}Which passage is the quote from? Select it in the pile.")
        passage = next(
            (p for p in pile if quote_locate(passage_text=p.text, quote=quote) is not None), None
        )
        if passage is None:
            raise LabelError(f"{name}The quote {quote!r} is not found in any passage of the pile.")
        passage_id, start_utf16, end_utf16 = passage.pk, None, None
        passages = {passage.pk: passage}
    passage = passages.get(passage_id)
    if passage is None:
        raise LabelError(f"{name}The quoted passage is not in this answer's pile.")
    if not quote:
        raise LabelError(f"{name}The quote is empty: select the sentence that decides the claim.")
    if start_utf16 is None or end_utf16 is None:
        span = quote_locate(passage_text=passage.text, quote=quote)
        if span is None:
            raise LabelError(f"{name}Passage #{passage.rank} does not contain the quote {quote!r}.")
        start, end = span
    else:
        try:
            start = utf16_to_codepoint_offset(passage.text, start_utf16)
            end = utf16_to_codepoint_offset(passage.text, end_utf16)
        except QuoteError as error:
            raise LabelError(f"{name}{error}") from error
    return {"passage": passage, "start": start, "end": end, "quote": quote}


def label_spans_check(*, claim: Claim, first: dict, more: list[dict] | tuple) -> None:
    """Raise LabelError, naming the span, unless every span of a label with several is verified
    in the claim's pile (`label_evidence_check`), there are at most `EVIDENCE_SPANS_MAX`, and no
    two overlap in one passage. `first` and each of `more`: `label_save`'s span dict."""
    if not more:
        return
    if first["passage"] is None:
        raise LabelError("Span 2 needs a first span: select the first quote in the pile.")
    spans = [first, *more]
    if len(spans) > EVIDENCE_SPANS_MAX:
        raise LabelError(
            f"A label quotes at most {EVIDENCE_SPANS_MAX} spans; this one has {len(spans)}: "
            "remove one."
        )
    for number, span in enumerate(spans, start=1):
        if span.get("passage") is None:
            raise LabelError(f"Span {number}: a quote needs the passage it comes from.")
        try:
            label_evidence_check(claim=claim, **span)
        except LabelError as error:
            raise LabelError(f"Span {number}: {error}") from error
    for later, span in enumerate(spans[1:], start=2):
        for earlier, other in enumerate(spans[: later - 1], start=1):
            if (
                span["passage"].pk == other["passage"].pk
                and span["start"] < other["end"]
                and other["start"] < span["end"]
            ):
                raise LabelError(
                    f"Span {later} overlaps span {earlier} in passage #{span['passage'].rank} "
                    f"(characters {span['start']}–{span['end']} and "
                    f"{other['start']}–{other['end']}): remove one, or quote each place once."
                )


def _label_check(
    *,
    claim: Claim,
    verdict: str,
    passage: Passage | None,
    start: int | None,
    end: int | None,
    quote: str,
    require_quote: bool | None,
    more: list[dict] | tuple = (),
) -> None:
    if verdict not in Verdict.values:
        raise LabelError(
            f"Unknown verdict {verdict!r}: use SUPPORTED, CONTRADICTED or NOT_IN_PILE."
        )
    if verdict == Verdict.NOT_IN_PILE and (passage is not None or quote or more):
        raise LabelError(
            "A NOT_IN_PILE label says no passage of the pile decides the claim, so it takes no "
            "quote: clear the quote, or choose SUPPORTED or CONTRADICTED if the quote decides it."
        )
    if require_quote is None:
        require_quote = claim.project.quote_required
    if require_quote and verdict != Verdict.NOT_IN_PILE and passage is None:
        raise LabelError(
            f"A {verdict} label needs a quote: select the sentence in the pile that decides it."
        )
    first = {"passage": passage, "start": start, "end": end, "quote": quote}
    if more:
        label_spans_check(claim=claim, first=first, more=more)
    else:
        label_evidence_check(claim=claim, **first)


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
) -> tuple[Label, Claim | None]:
    """`_label_save_and_next` (see there), its transaction run again after a deadlock or a
    serialisation failure: up to `SAVE_TRIES` tries with a short jittered backoff, then
    LabelSaveConflict. Call it outside any transaction (inside one, only its savepoint is
    retried while the outer transaction keeps its locks)."""
    arguments = {
        "project": project,
        "membership": membership,
        "annotator": annotator,
        "claim_id": claim_id,
        "verdict": verdict,
        "passage_id": passage_id,
        "start_utf16": start_utf16,
        "end_utf16": end_utf16,
        "quote": quote,
        "more": more,
        "note": note,
        "correct": correct,
    }
    for attempt in range(1, SAVE_TRIES + 1):
        try:
            return _label_save_and_next(**arguments)
        except OperationalError as error:
            if not transaction_conflict(error):
                raise
            logger.warning(
                "save-and-next of claim %s by user %s: %s (try %s of %s)",
                claim_id,
                getattr(annotator, "pk", None),
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


@transaction.atomic
def _label_save_and_next(
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
) -> tuple[Label, Claim | None]:
    """The labelling screen's save-and-next: save `annotator`'s label on claim `claim_id` (the
    browser's evidence, see `label_evidence_from_browser`) and reserve their next claim, in one
    transaction. Returns the label and the next claim (None when the queue is empty).

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
    reads (`annotate.services.queue.claim_take_next`).
    """
    from annotate.services.design import label_design_fields
    from annotate.services.queue import claim_take_next, stratum_condition

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
    stratum = recorded if locked.served else {**recorded, "outside_queue": True}
    if locked.served and project.queue_design == Project.QueueDesign.STRATIFIED:
        # The stratified design's stratum, beside the member's restriction (issue 14).
        stratum = {**stratum, "active_stratum": claim.active_stratum}
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
    )
    membership.labels_saved += claim.label_count - labels_before
    project.claims_complete += complete_delta
    return label, following


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
    """
    from annotate.services.review import gold_apply, gold_decide

    claim = locked.claim
    if verdict == Verdict.SUPPORTED:
        correct = ""
    own = next((row for row in locked.labels if row[1] == annotator.pk), None)
    complete_delta = 0
    if own is None:
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
        complete_delta = _counters_add(batch, claim=claim, annotator=annotator, step=1)
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
    columns = LABEL_STATE_COLUMNS
    values = [getattr(label, column) for column in columns]
    stratum_value = Label._meta.get_field("stratum").get_db_prep_save(stratum, connection)
    moment = connection.ops.adapt_datetimefield_value(now)
    changed = label.changed_after_reveal
    # The guidelines in force: a lead can tell which labels predate a change of them.
    label.guideline_version = guideline = claim.project.guidelines_version
    state = {"values": values, "changed": changed, "moment": moment}
    recorded = design or {"design": "", "inclusion_probability": None}
    label.design = recorded["design"]
    label.inclusion_probability = recorded["inclusion_probability"]
    if own is None:
        batch.add(
            *sql.label_insert_statement(
                claim_id=claim.pk,
                annotator_id=annotator.pk,
                columns=columns,
                stratum=stratum_value,
                guideline=guideline,
                **recorded,
                **state,
            )
        )
        label_id = sql.label_id_of_statement(claim_id=claim.pk, annotator_id=annotator.pk)
    else:
        batch.add(
            *sql.label_update_statement(
                label_id=own[0],
                columns=columns,
                stratum=stratum_value,
                guideline=guideline,
                **recorded,
                **state,
            )
        )
        label_id = ("%s", [own[0]])
        # Its earlier spans after the first go; one statement in the same round trip.
        batch.add(*sql.evidence_spans_delete_statement(label_id=own[0]))
    for number, span in enumerate(more if passage else (), start=2):
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
    more_spans = more_spans_record(more if passage else ())
    action = LabelHistory.Action.UPDATED if own else LabelHistory.Action.CREATED
    # The history row holds the label's state after the change.
    batch.add(
        *sql.label_history_insert_statement(
            label_id=label_id,
            claim_id=claim.pk,
            annotator_id=annotator.pk,
            action=action,
            columns=HISTORY_STATE_COLUMNS,
            more_spans=LabelHistory._meta.get_field("more_spans").get_db_prep_save(
                more_spans, connection
            )
            if more_spans
            else None,
            **state,
        )
    )
    labels = [(row[2], row[3], row[4]) for row in locked.labels if row[1] != annotator.pk]
    labels.append((verdict, False, changed))
    decision = gold_decide(
        labels_required=claim.labels_required,
        claim_needs_review=claim.needs_review,
        labels=labels,
        gold=locked.gold,
        count_changed=count_changed,
    )
    gold_apply(batch, claim=claim, decision=decision, gold_id=locked.gold_id, now=now)
    return label, complete_delta


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
