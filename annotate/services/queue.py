"""The labelling queue: which claim an analyst labels next, and the reservation that holds it.

Claims are served in the project's seeded random order (`Claim.queue_key`, see
`annotate.queue_order`), so the claims labelled so far are a simple random sample of the project,
or of the stratum a lead restricted the member's queue to. A served claim is reserved for the
analyst for `RESERVATION_MINUTES`; labels plus other analysts' unexpired reservations never exceed
`Claim.labels_required`, so two analysts pressing "next" at once never both get the claim that
needed only one more label. An abandoned reservation simply expires.

Lock order (every transaction that writes labels or reservations): the claim being saved
(waited for), then the member's counter row, then other claims only with SKIP LOCKED (never
waited for), then reservations of claims this transaction holds locked, then the project's
completion counter last. Nothing waits for a lock out of that order, so saves of one analyst
from several tabs cannot deadlock; `label_save_and_next` still retries a deadlock or
serialisation failure (a writer outside this module may take locks in another order).

Concurrency (PostgreSQL): candidates are locked with `SELECT … FOR UPDATE SKIP LOCKED`, then
re-checked with a fresh statement (READ COMMITTED gives each statement a new snapshot), because
the first statement's snapshot may predate a reservation committed while it scanned; the
re-check is the reservation's own conditional INSERT (`_reserve_if_room`). Every
writer of labels and reservations holds the claim's row lock (`label_save`, `label_undo`,
`claim_reserve`), so the re-check under the lock is exact. On SQLite writes are serialised
(IMMEDIATE transactions), which gives the same guarantee.
"""

from collections.abc import Callable
from datetime import timedelta

from django.db import connection, transaction
from django.db.models import Count, Exists, F, OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce
from django.http import Http404
from django.utils import timezone

from annotate import hooks, sql
from annotate.models import (
    Answer,
    Claim,
    ClaimSkip,
    Label,
    Membership,
    Passage,
    Project,
    Reservation,
)
from annotate.services.design import strata_ranked
from annotate.services.reservation_wait import own_reservation_waited, own_reservations
from annotate.sql import StatementBatch, model_rows, reservations_expired_delete

RESERVATION_MINUTES = 10
# A candidate that fails the re-check stays locked by us and fails every later statement too,
# so each retry rules out one more claim; the cap only guards against a pathological storm.
MAX_ATTEMPTS = 50


class QueueError(ValueError):
    """A queue restriction that cannot be applied; the message is for the lead."""


def stratum_condition(*, project: Project, stratum: dict | None) -> tuple[Q, dict]:
    """The claim filter of a queue stratum, and the stratum as it is recorded on labels.

    `{"risk_category": "health"}` restricts to answers of that risk category;
    `{"judge": <id>, "judge_verdict": "SUPPORTED"}` to claims that judge's latest finished
    verify run gave that verdict (the run's id is recorded, so the report knows which).
    """
    if not stratum:
        return Q(), {}
    condition = Q()
    recorded: dict = {}
    unknown = set(stratum) - {"risk_category", "judge", "judge_verdict", "judge_run"}
    if unknown:
        raise QueueError(f"Unknown queue restriction {sorted(unknown)}.")
    if stratum.get("risk_category"):
        condition &= Q(answer__risk_category=stratum["risk_category"])
        recorded["risk_category"] = stratum["risk_category"]
    if stratum.get("judge_verdict"):
        if not stratum.get("judge"):
            raise QueueError('A "judge_verdict" restriction needs the "judge" it refers to.')
        # judges answers (annotate/hooks.py): the run, and its verdicts correlated on the claim.
        run_id, verdicts = hooks.judge_verdict_stratum(
            project=project,
            judge_id=stratum["judge"],
            verdict=stratum["judge_verdict"],
            run_id=stratum.get("judge_run"),
        )
        condition &= Exists(verdicts)
        recorded.update(
            judge=stratum["judge"], judge_verdict=stratum["judge_verdict"], judge_run=run_id
        )
    return condition, recorded


def _others_reserving(*, user, now) -> Subquery:
    held = (
        Reservation.objects.filter(claim=OuterRef("pk"), expires_at__gt=now)
        .exclude(user=user)
        .values("claim")
        .annotate(n=Count("id"))
        .values("n")
    )
    return Coalesce(Subquery(held), 0)


def _candidates(*, project: Project, user, condition: Q, now) -> QuerySet[Claim]:
    """Open claims in queue order that this user may take (uses claim_open_queue_idx)."""
    return (
        Claim.objects.filter(project=project, label_count__lt=F("labels_required"))
        .filter(condition)
        .exclude(answer__abstention=True)
        .exclude(Exists(Label.objects.filter(claim=OuterRef("pk"), annotator=user)))
        .exclude(Exists(ClaimSkip.objects.filter(claim=OuterRef("pk"), user=user)))
        .alias(held=_others_reserving(user=user, now=now))
        .filter(held__lt=F("labels_required") - F("label_count"))
        .order_by("queue_key", "id")
    )


def _reserve(*, claim: Claim, user, now, ahead: bool = False) -> None:
    # One upsert (INSERT … ON CONFLICT DO UPDATE) instead of a read, a savepoint and a write.
    # Served, a reservation is no longer `ahead`; renewed ahead, a served one stays served.
    Reservation.objects.bulk_create(
        [
            Reservation(
                claim=claim,
                user=user,
                expires_at=now + timedelta(minutes=RESERVATION_MINUTES),
                ahead=ahead,
            )
        ],
        update_conflicts=True,
        unique_fields=["claim", "user"],
        update_fields=["expires_at"] if ahead else ["expires_at", "ahead"],
    )


@transaction.atomic
def claim_next_for_user(
    *, project: Project, user, stratum: dict | None = None, after: int | None = None
) -> Claim | None:
    """The claim `user` should label next, reserved for them; None when their queue is empty.

    The user's own unexpired reservation comes first (a reload keeps the same claim). `stratum`
    is the member's `Membership.queue_stratum`. Also clears the user's expired reservations in
    the project (they no longer count anywhere; this only keeps the table small).

    `after`: the claim the user is labelling now. The answer is then the claim their
    save-and-next of it will serve (the labelling screen pre-renders it): the same search with
    claim `after` left out, reserved for them like any served claim, so no other analyst is
    handed it meanwhile. The save's own search then finds it first among their reservations
    (`claim_take_next`), unless it was lost meanwhile (expired and taken, say): the save's
    answer is the one that counts. Http404 when `after` is not a claim of the project.
    """
    now = timezone.now()
    condition, _ = stratum_condition(project=project, stratum=stratum)
    before = _expired_release(project=project, user=user, now=now)
    if after is not None:
        sql.read_ahead_begin(before, project_id=project.pk, claim_id=after, check=_claim_found)
    return claim_take_next(
        project=project,
        user=user,
        condition=condition,
        now=now,
        before=before,
        ahead=after is not None,
        other_than=after,
    )


def _claim_found(rows) -> None:
    if not rows:
        raise Http404("No such claim in this project.")


def _expired_release(*, project: Project, user, now) -> StatementBatch:
    """Delete the user's expired reservations in the project, skipping any another
    transaction is writing (a save-and-next releasing or renewing it under its claim's lock):
    this cleanup takes no claim lock, so waiting there could close a cycle of waits. On
    PostgreSQL the deletion is queued on the batch returned, for the queue's first search to
    send in its round trip; elsewhere it is done now and the batch is empty."""
    batch = StatementBatch()
    if not connection.features.has_select_for_update_skip_locked:
        Reservation.objects.filter(user=user, claim__project=project, expires_at__lte=now).delete()
        return batch
    reservations_expired_delete(batch, project_id=project.pk, user_id=user.pk, now=now)
    return batch


def claim_take_next(
    *,
    project: Project,
    user,
    condition: Q,
    now=None,
    may_hold_one: bool = True,
    before: StatementBatch | None = None,
    after: StatementBatch | None = None,
    strata: list[tuple] | None = None,
    counted: tuple[str, int, int] | None = None,
    ahead: bool = False,
    other_than: int | None = None,
    shown: int | None = None,
) -> Claim | None:
    """`claim_next_for_user` for a caller already inside a transaction, with the stratum's
    `condition` (see `stratum_condition`); the claim comes with its answer.

    The user's own unexpired reservation first (not looked for when the caller knows there is
    none: `may_hold_one=False`), then the first open candidate in queue order, locked (SKIP
    LOCKED), re-checked and reserved in one statement under its lock; none found, their own
    reservation again, its lock waited for briefly (`own_reservation_waited`).

    `before`: the caller's writes, run first (on PostgreSQL in the same round trip as the
    unrestricted queue's search); `after`: writes to run once the next claim is reserved (with
    the reservation, in one round trip), or at the end when there is none.

    The project's design (`annotate.services.design`): with selective judging on, claims routed
    to the judge are not served; under the stratified design the strata are tried in the order
    of Neyman's choice (`strata_ranked`, from the `ActiveStratum` rows: `strata` if the caller
    read them, else one query; `counted` is the caller's move of them still queued in `after`),
    each stratum's first open claim in queue order, then any open claim (a stratum may be
    "full" by its count while a claim of it still needs a second label, and claims added after
    the design have no stratum).

    `ahead`: the claim is taken for the screen rendered ahead (`Reservation.ahead`), not served.
    `other_than`: that claim is left out (the one on the screen, when the next is rendered
    ahead); on the unrestricted queue it stays in the hand-written SQL.
    `shown`: the claim whose screen the browser shows already (rendered ahead): when that is
    the claim taken, its screen is not read again and it comes back as its id alone.
    """
    now = now or timezone.now()
    before = before if before is not None else StatementBatch()
    after = after if after is not None else StatementBatch()
    # selective judging, or a monitored stream, leaves claims to the judge alone
    routed_out = bool(project.selective_judging or project.monitored)
    restricted = bool(condition)  # a member's stratum: the ORM's query, else the raw SQL
    if routed_out:
        condition &= Q(routed_to_judge=False)
    if other_than is not None:
        condition &= ~Q(pk=other_than)
    tries = _strata_tries(project=project, strata=strata, counted=counted)
    if may_hold_one:
        held = _own_reservation_take(
            project=project,
            user=user,
            condition=condition,
            now=now,
            before=before,
            after=after,
            restricted=restricted,
            routed_out=routed_out,
            ahead=ahead,
            other_than=other_than,
            shown=shown,
        )
        if held is not None:
            return held
    claim = _open_claim_take(
        project=project,
        user=user,
        condition=condition,
        now=now,
        before=before,
        after=after,
        tries=tries,
        restricted=restricted,
        routed_out=routed_out,
        ahead=ahead,
        other_than=other_than,
        shown=shown,
    )
    if claim is None and may_hold_one:  # `after` ran with the search that found none
        held = own_reservation_waited(project=project, user=user, condition=condition, now=now)
        if held is not None:
            claim = _reserved_with_screen(
                claim_id=held, user=user, now=now, ahead=ahead, after=StatementBatch(), shown=shown
            )
    return claim


def _strata_tries(
    *, project: Project, strata: list[tuple] | None, counted: tuple[str, int, int] | None
) -> list[str | None]:
    """The strata to search in turn: under the stratified design, in the order of Neyman's
    choice (`strata_ranked`, over `strata` with the caller's `counted` move added, or one query
    for them), then any open claim (None); else only any open claim."""
    if project.queue_design != Project.QueueDesign.STRATIFIED:
        return [None]
    if strata is None:
        strata = StatementBatch().run_then(*sql.active_strata_statement(project_id=project.pk))
    if counted is not None:
        strata = [
            (name, big_n, n + counted[1], k + counted[2], *rest)
            if name == counted[0]
            else (name, big_n, n, k, *rest)
            for name, big_n, n, k, *rest in strata
        ]
    return [*strata_ranked(strata=list(strata)), None]


def _reserved_with_screen(
    *, claim_id: int, user, now, ahead: bool, after: StatementBatch, shown: int | None = None
) -> Claim | None:
    """Reserve claim `claim_id` (re-checked under its lock), run the caller's `after` writes and
    the screen's reads: one round trip. The claim for its screen, or None when it had no room.
    When `claim_id` is `shown` (its screen is on the browser already) the screen is not read:
    the claim comes back as its id alone."""
    batch = StatementBatch()
    reserved = _reserve_if_room(batch, claim_id=claim_id, user=user, now=now, ahead=ahead)
    batch.extend(after)
    if claim_id == shown:
        results = batch.run()
        return Claim(pk=claim_id) if results[reserved] else None
    screen = _screen_reads(batch, claim_id=claim_id)
    results = batch.run()
    return screen(results) if results[reserved] else None


def _own_reservation_take(
    *,
    project: Project,
    user,
    condition: Q,
    now,
    before: StatementBatch,
    after: StatementBatch,
    restricted: bool,
    routed_out: bool,
    ahead: bool,
    other_than: int | None = None,
    shown: int | None = None,
) -> Claim | None:
    """The user's own unexpired reservation, reserved again; None when they hold none (or it
    lost its room). Runs `before` either way, `after` only when it returns a claim."""
    if not restricted:
        # SKIP LOCKED (as below): in the caller's round trip, then reserved again (re-checked)
        # with the screen's reads in one more, as a claim the search finds.
        rows = before.run_then(
            *sql.own_reservation_statement(
                project_id=project.pk,
                user_id=user.pk,
                now=now,
                routed_out=routed_out,
                other_than=other_than,
            )
        )
        if not rows:
            return None
        return _reserved_with_screen(
            claim_id=rows[0][0], user=user, now=now, ahead=ahead, after=after, shown=shown
        )
    before.run()
    # SKIP LOCKED: the claim may be locked by another tab of this user saving it (its
    # transaction holds this member's counter row we would wait for next: a deadlock).
    # Skipped, the queue serves the next open claim; the reservation stays theirs.
    mine = (
        own_reservations(project=project, user=user, condition=condition, now=now)
        .select_for_update(skip_locked=True, of=("self",))
        .select_related("answer")
        .first()
    )
    if mine is None:
        return None
    _reserve(claim=mine, user=user, now=now, ahead=ahead)
    after.run()
    return mine


def _open_claim_take(
    *,
    project: Project,
    user,
    condition: Q,
    now,
    before: StatementBatch,
    after: StatementBatch,
    tries: list[str | None],
    restricted: bool,
    routed_out: bool,
    ahead: bool,
    other_than: int | None = None,
    shown: int | None = None,
) -> Claim | None:
    """The first open candidate in queue order, stratum by stratum of `tries`, locked (SKIP
    LOCKED), re-checked and reserved under its lock; None when none is left (then `after` runs
    on its own)."""
    tried = 0
    active_stratum = tries[0]
    for _ in range(MAX_ATTEMPTS + len(tries)):
        if restricted:
            before.run()
            # Built only for a stratum queue: the unrestricted one is hand-written SQL.
            within = (
                condition
                if active_stratum is None
                else condition & Q(active_stratum=active_stratum)
            )
            claim_id = (
                _candidates(project=project, user=user, condition=within, now=now)
                .select_for_update(skip_locked=True, of=("self",))
                .values_list("pk", flat=True)
                .first()
            )
        else:
            claim_id = _first_open_claim_id(
                project=project,
                user=user,
                now=now,
                batch=before,
                active_stratum=active_stratum,
                routed_out=routed_out,
                other_than=other_than,
            )
        if claim_id is None:
            tried += 1
            if tried >= len(tries):
                break
            active_stratum = tries[tried]  # an empty stratum (for this analyst) is skipped
            continue
        claim = _reserved_with_screen(
            claim_id=claim_id, user=user, now=now, ahead=ahead, after=after, shown=shown
        )
        if claim is not None:
            return claim
    after.run()
    return None


def _screen_reads(batch: StatementBatch, *, claim_id: int) -> Callable[[list], Claim]:
    """Queue on `batch` the reads of claim `claim_id`'s screen: the claims of its answer in
    reading order, the answer, its pile in rank order. Returns what builds, from the batch's
    results, the claim with its answer, `answer_claims` (for `j`/`k`) and `answer_passages`."""
    claims, answers, passages = (model_rows(model) for model in (Claim, Answer, Passage))
    statements = sql.screen_reads_statements(claim_id=claim_id)
    siblings_at = batch.add(*statements["claims"])
    answer_at = batch.add(*statements["answer"])
    passages_at = batch.add(*statements["passages"])

    def build(results: list) -> Claim:
        (answer,) = answers.instances(results[answer_at])
        siblings = claims.instances(results[siblings_at])
        pile = passages.instances(results[passages_at])
        for row in (*siblings, *pile):
            row.answer = answer
        claim = next(sibling for sibling in siblings if sibling.pk == claim_id)
        claim.answer_claims = siblings
        claim.answer_passages = pile
        return claim

    return build


def _first_open_claim_id(
    *,
    project: Project,
    user,
    now,
    batch: StatementBatch | None = None,
    active_stratum: str | None = None,
    routed_out: bool = False,
    other_than: int | None = None,
) -> int | None:
    """`_candidates` without a stratum, first in queue order, locked (SKIP LOCKED): the id.

    The same conditions written out in SQL for the unrestricted queue, the labelling screen's
    usual case: the ORM spent a fifth of a save-and-next's CPU building and compiling them.
    Walks claim_open_queue_idx like the ORM's query. Plain SQL that SQLite runs too (without
    the lock: SQLite serialises writers). Run as the last statement of `batch`, if given.
    """
    batch = batch if batch is not None else StatementBatch()
    rows = batch.run_then(
        *sql.queue_candidates_statement(
            project_id=project.pk,
            user_id=user.pk,
            now=now,
            active_stratum=active_stratum,
            routed_out=routed_out,
            other_than=other_than,
        )
    )
    return rows[0][0] if rows else None


def _reserve_if_room(
    batch: StatementBatch, *, claim_id: int, user, now, ahead: bool = False
) -> int:
    """Queue on `batch` the reservation of claim `claim_id` for `user` if its labels and other
    analysts' live reservations still leave room and the user has not labelled it; returns the
    index of its result, which has a row when it reserved. Run it holding the claim's row lock.

    The re-check the module docstring describes, fused with the reservation's upsert: being a
    new statement, it reads with a fresh snapshot (READ COMMITTED), which sees every reservation
    and label committed before the lock was granted. Hand-written because the ORM has no
    conditional INSERT … SELECT; plain SQL that PostgreSQL and SQLite both run.
    """
    return batch.add(
        *sql.reservation_if_room_statement(
            claim_id=claim_id,
            user_id=user.pk,
            now=now,
            expires=now + timedelta(minutes=RESERVATION_MINUTES),
            ahead=ahead,
        )
    )


@transaction.atomic
def claim_reserve(*, claim: Claim, user) -> bool:
    """Hold `claim` for `user` (after an undo, say) if the quota leaves room; say whether."""
    now = timezone.now()
    locked = Claim.objects.select_for_update().get(pk=claim.pk)
    if Label.objects.filter(claim=locked, annotator=user).exists():
        return False
    held = Reservation.objects.filter(claim=locked, expires_at__gt=now).exclude(user=user).count()
    if locked.label_count + held >= locked.labels_required:
        return False
    _reserve(claim=locked, user=user, now=now)
    return True


@transaction.atomic
def labelling_counters_refresh(*, project: Project) -> None:
    """Recount the project's labelling counters from its labels (after bulk edits of claims).

    Slow at scale (it reads every label); the labelling screen itself never recounts.
    """
    per_claim = (
        Label.objects.filter(claim=OuterRef("pk"))
        .values("claim")
        .annotate(n=Count("id"))
        .values("n")
    )
    Claim.objects.filter(project=project).update(label_count=Coalesce(Subquery(per_claim), 0))
    per_member = (
        Label.objects.filter(annotator=OuterRef("user"), claim__project=project)
        .values("annotator")
        .annotate(n=Count("id"))
        .values("n")
    )
    Membership.objects.filter(project=project).update(
        labels_saved=Coalesce(Subquery(per_member), 0)
    )
    Project.objects.filter(pk=project.pk).update(
        claims_complete=Claim.objects.filter(
            project=project, label_count__gte=F("labels_required")
        ).count()
    )
