"""The queue waits briefly for an analyst's own reservation when a colleague's save holds it
(annotate.services.reservation_wait), instead of saying "nothing left" while the analyst still
holds a claim that needs their label (tests/annotate/test_queue_concurrency.py left a claim
short once that way).

A second connection holds the claim's row lock, as a colleague's save reached outside the
queue (a jump within an answer) does for a few milliseconds, or the analyst's own other tab
saving it. It lets go only once the queue's connection is seen waiting for a lock in
pg_stat_activity, so each outcome is decided by what the code does, not by timing: without
the wait the queue never waits, the lock is never let go during the call, and it answers None.
"""

import threading
import time

import pytest
from django.db import connection, transaction

from annotate.models import Claim, Label, Membership, Reservation, Verdict
from annotate.services.labels import label_save
from annotate.services.queue import claim_next_for_user
from tests.factories import (
    AnswerFactory,
    ClaimFactory,
    MembershipFactory,
    PassageFactory,
    ProjectFactory,
    UserFactory,
)

pytestmark = pytest.mark.postgres


def _project(*, labels_required: int = 2):
    """One answer with claims X (first in queue order) and Y, Y already labelled by Ana; the
    queue has served X to Ana (her reservation), and Ben is her colleague."""
    project = ProjectFactory()
    answer = AnswerFactory(project=project)
    PassageFactory(answer=answer, rank=1, text="Refunds take 14 days.")
    x = ClaimFactory(answer=answer, position=0, queue_key=10, labels_required=labels_required)
    y = ClaimFactory(answer=answer, position=1, queue_key=20)
    ana, ben = UserFactory(), UserFactory()
    MembershipFactory(project=project, user=ana)
    MembershipFactory(project=project, user=ben)
    assert claim_next_for_user(project=project, user=ana) == x
    label_save(claim=y, annotator=ana, verdict=Verdict.NOT_IN_PILE)
    return project, ana, ben, x, y


def _backend_pid() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return cursor.fetchone()[0]


class _Holder(threading.Thread):
    """In its own connection: lock claim `claim_id`'s row, wait for `release`, run `then` in
    the same transaction, commit."""

    def __init__(self, claim_id: int, then=None):
        super().__init__(daemon=True)
        self.claim_id, self.then = claim_id, then
        self.locked, self.release = threading.Event(), threading.Event()
        self.pid: int | None = None
        self.done = False
        self.errors: list[str] = []

    def run(self):
        try:
            self.pid = _backend_pid()
            with transaction.atomic():
                Claim.objects.select_for_update().get(pk=self.claim_id)
                self.locked.set()
                self.release.wait(30)
                if self.then is not None:
                    self.then()
            self.done = True
        except Exception as error:  # surfaced by the test
            self.errors.append(repr(error))
        finally:
            self.locked.set()
            connection.close()


def _waiting_for_lock(pid: int) -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT wait_event_type FROM pg_stat_activity WHERE pid = %s", [pid])
        row = cursor.fetchone()
    return row is not None and row[0] == "Lock"


def _release_once_waiting(holder: _Holder, pid: int, stop: threading.Event) -> threading.Thread:
    """A watcher in its own connection: lets the holder go as soon as backend `pid` waits for
    a lock (or when `stop` is set)."""

    def watch():
        try:
            while not stop.is_set():
                if _waiting_for_lock(pid):
                    holder.release.set()
                    return
                time.sleep(0.002)
        finally:
            connection.close()

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    return watcher


def _next_while_held(project, user, holder: _Holder):
    """`claim_next_for_user` while `holder` holds its claim; the holder is let go once this
    connection waits for a lock, else after the call. The claim served."""
    holder.start()
    holder.locked.wait(10)
    stop = threading.Event()
    watcher = _release_once_waiting(holder, _backend_pid(), stop)
    try:
        return claim_next_for_user(project=project, user=user)
    finally:
        stop.set()
        watcher.join(10)
        holder.release.set()
        holder.join(10)


def test_a_colleagues_save_holding_her_reserved_claim_is_waited_for(transactional_db):
    project, ana, ben, x, _ = _project()
    holder = _Holder(
        x.pk, then=lambda: label_save(claim=x, annotator=ben, verdict=Verdict.NOT_IN_PILE)
    )
    # Nothing else is open for Ana: the queue used to skip X (SKIP LOCKED) and say "nothing
    # left" while she held it.
    served = _next_while_held(project, ana, holder)
    assert holder.errors == []
    assert holder.done
    assert served == x
    assert served.answer_passages[0].text == "Refunds take 14 days."  # its screen's reads
    assert Reservation.objects.filter(claim=x, user=ana).exists()
    assert list(Label.objects.filter(claim=x).values_list("annotator", flat=True)) == [ben.pk]


def test_a_claim_full_once_its_lock_is_granted_is_not_served(transactional_db):
    # The room is re-checked under the lock: here the holder's transaction fills the claim
    # (as a recount after an import would).
    project, ana, _, x, _ = _project()
    holder = _Holder(x.pk, then=lambda: Claim.objects.filter(pk=x.pk).update(label_count=2))
    assert _next_while_held(project, ana, holder) is None
    assert holder.errors == []
    assert holder.done


def test_a_lock_held_past_the_wait_leaves_the_transaction_whole_and_the_claim_hers(
    transactional_db,
):
    project, ana, _, x, _ = _project()
    holder = _Holder(x.pk)
    holder.start()
    holder.locked.wait(10)
    try:
        with transaction.atomic():
            assert claim_next_for_user(project=project, user=ana) is None
            # Only the wait's savepoint was undone: the transaction goes on.
            assert Reservation.objects.filter(claim=x, user=ana).count() == 1
            with connection.cursor() as cursor:
                cursor.execute("SHOW lock_timeout")
                assert cursor.fetchone()[0] == "0"  # the wait's timeout does not linger
    finally:
        holder.release.set()
        holder.join(10)
    assert holder.errors == []
    assert holder.done
    assert claim_next_for_user(project=project, user=ana) == x  # "next" again serves it


def test_her_other_tab_saving_the_claim_does_not_deadlock_with_the_wait(transactional_db):
    # Her other tab holds X and then wants her counter row, which this transaction (a save, in
    # the lock order of annotate.services.queue) holds while the queue waits for X: a cycle of
    # waits. The queue's wait gives up first (200 ms, under PostgreSQL's 1 s deadlock_timeout);
    # the tab's save then goes on, and neither transaction fails.
    project, ana, _, x, _ = _project()

    def other_tab_save():
        Membership.objects.select_for_update().get(project=project, user=ana)
        label_save(claim=x, annotator=ana, verdict=Verdict.NOT_IN_PILE)

    holder = _Holder(x.pk, then=other_tab_save)
    holder.start()
    holder.locked.wait(10)
    try:
        with transaction.atomic():
            Membership.objects.select_for_update().get(project=project, user=ana)
            holder.release.set()
            deadline = time.monotonic() + 10
            while not _waiting_for_lock(holder.pid) and time.monotonic() < deadline:
                time.sleep(0.002)
            assert _waiting_for_lock(holder.pid)  # the tab waits for her counter row
            assert claim_next_for_user(project=project, user=ana) is None
    finally:
        holder.release.set()
        holder.join(10)
    assert holder.errors == []
    assert holder.done
    assert Label.objects.filter(claim=x, annotator=ana).exists()
