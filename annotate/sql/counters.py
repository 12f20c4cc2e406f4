"""Raw SQL: the label save's writes queued on a `StatementBatch` (counters, reservation
release, gold). Why each is raw: the package docstring (annotate/sql/__init__.py)."""

from django.db import connection

from annotate.models import (
    LABEL_SECONDS_MAX,
    Claim,
    Gold,
    LabelTime,
    Membership,
    Project,
    Reservation,
)

from .batch import StatementBatch

# -- the save's writes, queued on the caller's StatementBatch ------------------------------------
# Why raw, all of them: they ride in the save-and-next's round trips (commit cd0b6ff: 6
# statements instead of 18; "save-and-next server time p50, 1 analyst: 6.86 ms at 100k
# claims", bench/RESULTS.md); the ORM sends each as a round trip of its own.


def reservation_release(batch: StatementBatch, *, claim_id: int, user_id: int) -> None:
    """Queue the delete of the user's reservation of the claim."""
    batch.add(
        f"DELETE FROM {Reservation._meta.db_table} WHERE claim_id = %s AND user_id = %s",
        [claim_id, user_id],
    )


def claim_label_count_add(batch: StatementBatch, *, claim_id: int, step: int) -> None:
    """Queue `label_count += step` on the claim (atomic: the database adds, no read-modify-write)."""
    batch.add(
        f"UPDATE {Claim._meta.db_table} SET label_count = label_count + %s WHERE id = %s",
        [step, claim_id],
    )


def membership_labels_saved_add(
    batch: StatementBatch, *, project_id: int, user_id: int, step: int
) -> None:
    """Queue `labels_saved += step` on the member's counter row (atomic, as above)."""
    batch.add(
        f"UPDATE {Membership._meta.db_table} SET labels_saved = labels_saved + %s"
        " WHERE project_id = %s AND user_id = %s",
        [step, project_id, user_id],
    )


def project_claims_complete_move(batch: StatementBatch, *, project_id: int, delta: int) -> None:
    """Queue the project's `claims_complete` moved by `delta` (+1, -1 never below 0, or 0)."""
    table = Project._meta.db_table
    if delta > 0:
        batch.add(
            f"UPDATE {table} SET claims_complete = claims_complete + 1 WHERE id = %s",
            [project_id],
        )
    elif delta < 0:
        batch.add(
            f"UPDATE {table} SET claims_complete = claims_complete - 1"
            " WHERE id = %s AND claims_complete > 0",
            [project_id],
        )


def claim_review_clear(batch: StatementBatch, *, claim_id: int) -> None:
    """Queue `needs_review = false` on the claim."""
    batch.add(
        f"UPDATE {Claim._meta.db_table} SET needs_review = %s WHERE id = %s", [False, claim_id]
    )


def gold_delete(batch: StatementBatch, *, gold_id: int) -> None:
    """Queue the delete of gold row `gold_id`."""
    batch.add(f"DELETE FROM {Gold._meta.db_table} WHERE id = %s", [gold_id])


def gold_unanimous_insert(
    batch: StatementBatch, *, claim_id: int, verdict: str, reason: str, moment
) -> None:
    """Queue a new unanimous gold row for the claim (`moment`: a database-adapted datetime)."""
    batch.add(
        f"INSERT INTO {Gold._meta.db_table}"
        " (claim_id, verdict, source, decided_by_id, reason, decided_at)"
        " VALUES (%s, %s, %s, NULL, %s, %s)",
        [claim_id, verdict, Gold.Source.UNANIMOUS, reason, moment],
    )


def gold_update(batch: StatementBatch, *, gold_id: int, verdict: str, reason: str, moment) -> None:
    """Queue gold row `gold_id`'s new verdict, reason and decision time."""
    batch.add(
        f"UPDATE {Gold._meta.db_table} SET verdict = %s, reason = %s, decided_at = %s WHERE id = %s",
        [verdict, reason, moment, gold_id],
    )


def label_time_add(
    batch: StatementBatch, *, claim_id: int, user_id: int, seconds: float | None, at
) -> None:
    """Queue the record of the seconds spent on a claim's screen before this save, capped at
    LABEL_SECONDS_MAX (a screen left open is not work); nothing when not measured."""
    if not seconds or seconds <= 0:
        return
    seconds = min(float(seconds), LABEL_SECONDS_MAX)
    batch.add(
        f"INSERT INTO {LabelTime._meta.db_table} (claim_id, user_id, seconds, saved_at) "
        "VALUES (%s, %s, %s, %s)",
        [claim_id, user_id, seconds, connection.ops.adapt_datetimefield_value(at)],
    )
