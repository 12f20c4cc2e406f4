"""An analyst's own reservation waited for briefly, when the queue found nothing else.

The queue looks for the analyst's own reservation first with SKIP LOCKED (`annotate.services.
queue`): another tab of theirs may be saving that claim, and its transaction holds the
member's counter row that this one holds too, so waiting there could deadlock. Skipped, the
queue serves the next open claim and the reservation stays theirs. But when a colleague's
save of the same claim (reached outside the queue, a jump within an answer) holds its lock
for those few milliseconds and no other claim is open for the analyst, the queue said
"nothing left" while the analyst still held a claim that needed their label (seen once in
tests/annotate/test_queue_concurrency.py: a claim left short). Here the queue then waits for
that claim's lock, for at most `OWN_RESERVATION_WAIT`, under a savepoint and PostgreSQL's
`lock_timeout`. The wait is shorter than PostgreSQL's `deadlock_timeout` (1 s by default),
so when the holder is the analyst's own other tab the wait gives up first, undoes only the
savepoint, and that tab's save goes on: the screen says nothing is left, as it did before,
and a claim being saved in the other tab is not left short.
"""

from django.db import OperationalError, connection, transaction
from django.db.models import Exists, F, OuterRef, Q, QuerySet

from annotate.models import Claim, ClaimSkip, Label, Project
from annotate.sql import lock_timeout_set

# PostgreSQL's interval text for lock_timeout.
OWN_RESERVATION_WAIT = "200ms"
_LOCK_NOT_AVAILABLE = "55P03"


def own_reservations(*, project: Project, user, condition: Q, now) -> QuerySet[Claim]:
    """The open claims of `project` that `user` holds a live reservation on, neither labelled
    nor skipped by them, within `condition`, in queue order (the ORM's query: the unrestricted
    queue's own is hand-written, `annotate.sql.own_reservation_statement`)."""
    return (
        Claim.objects.filter(
            project=project,
            label_count__lt=F("labels_required"),
            reservations__user=user,
            reservations__expires_at__gt=now,
        )
        .exclude(Exists(Label.objects.filter(claim=OuterRef("pk"), annotator=user)))
        .exclude(Exists(ClaimSkip.objects.filter(claim=OuterRef("pk"), user=user)))
        .filter(condition)
        .order_by("queue_key", "id")
    )


def own_reservation_waited(*, project: Project, user, condition: Q, now) -> int | None:
    """The id of the open claim `user` holds a live reservation on (neither labelled nor
    skipped by them, within `condition`), first in queue order, locked: waited for up to
    `OWN_RESERVATION_WAIT` if a colleague's save holds it. None when they hold none, or the
    lock was not granted in time. Call inside the queue's transaction, when its searches with
    SKIP LOCKED found no claim; the caller then re-checks the room under the lock as for any
    claim found. On SQLite, which skips no lock, there is nothing to wait for: None."""
    if not connection.features.has_select_for_update_skip_locked:
        return None
    mine = own_reservations(project=project, user=user, condition=condition, now=now)
    # Without a lock first: at the end of a queue (the usual way here) one read, no savepoint.
    if not mine.exists():
        return None
    try:
        with transaction.atomic():  # a savepoint
            before = lock_timeout_set(OWN_RESERVATION_WAIT)
            claim_id = mine.select_for_update(of=("self",)).values_list("pk", flat=True).first()
            lock_timeout_set(before)
    except OperationalError as error:
        if getattr(error.__cause__, "sqlstate", None) != _LOCK_NOT_AVAILABLE:
            raise
        return None  # the savepoint's rollback restored lock_timeout too
    return claim_id
