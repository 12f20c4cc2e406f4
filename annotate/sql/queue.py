"""Raw SQL: the queue's and the labelling screen's statements (membership, reservations,
candidates, active strata, the screen's reads). Why each is raw: the package docstring
(annotate/sql/__init__.py)."""

from django.contrib.auth import get_user_model
from django.db import connection

from annotate.models import (
    ActiveStratum,
    Answer,
    Claim,
    ClaimSkip,
    Label,
    Membership,
    Passage,
    Project,
    Reservation,
    UserSession,
)

from .batch import StatementBatch, model_rows, statement_rows

# -- reads and writes that run on their own cursor ----------------------------------------------


def project_membership_get(*, slug: str, user_id: int):
    """The `Membership` of `user_id` in the project with `slug`, its `project` filled in from
    the same row; None if there is none.

    Why raw: every project page starts here, save-and-next included; one hand-written
    statement instead of a compiled ORM query (commit cd0b6ff, save-and-next in 6 statements
    instead of 18; "save-and-next server time p50, 1 analyst: 6.86 ms at 100k claims").
    """
    memberships, projects = model_rows(Membership), model_rows(Project)
    found = statement_rows(
        f"SELECT {memberships.columns('m')}, {projects.columns('p')}"
        f" FROM {Membership._meta.db_table} m"
        f" INNER JOIN {Project._meta.db_table} p ON p.id = m.project_id"
        " WHERE p.slug = %s AND m.user_id = %s",
        [slug, user_id],
    )
    if not found:
        return None
    row = found[0]
    membership = memberships.instance(row[: len(memberships)])
    membership.project = projects.instance(row[len(memberships) :])
    return membership


def user_membership_get(*, slug: str, user_id):
    """The user `user_id` and their `Membership` in the project with `slug` (its `project`
    filled in), from one row: (None, None) without such a user, (user, None) when they are not
    a member.

    Why raw and joined: a project page read the session's user and then the membership, two
    statements (~0.5 ms each on loopback, bench/profile_save_next.py --phases) on every
    save-and-next and its read-ahead; `annotate.access.project_view` reads both at once and
    hands the user to the authentication backend, which still makes Django's checks of it.
    """
    found = statement_rows(
        f"SELECT {_user_membership_columns()} FROM {get_user_model()._meta.db_table} u"
        f" {_membership_join()} WHERE u.id = %s",
        [slug, user_id],
    )
    return _user_membership(found[0]) if found else (None, None)


def session_membership_get(*, session_key: str, slug: str, now):
    """The live session `session_key` (its data, None without a live row) with the user its
    row names and their `Membership` in the project with `slug`, from one row:
    (session data, user or None, membership or None).

    Why: `user_membership_get` with the session's own read in the same statement, one round
    trip fewer on every project page (save-and-next and its read-ahead included). The caller
    uses the user only if it is the one the session's signed data names.
    """
    found = statement_rows(
        f"SELECT s.session_data, {_user_membership_columns()}"
        f" FROM {UserSession._meta.db_table} s"
        f" LEFT JOIN {get_user_model()._meta.db_table} u ON u.id = s.user_id"
        f" {_membership_join()} WHERE s.session_key = %s AND s.expire_date > %s",
        [slug, session_key, connection.ops.adapt_datetimefield_value(now)],
    )
    if not found:
        return None, None, None
    return found[0][0], *_user_membership(found[0][1:])


def _user_membership_columns() -> str:
    users, memberships, projects = (
        model_rows(get_user_model()),
        model_rows(Membership),
        model_rows(Project),
    )
    return f"{users.columns('u')}, {memberships.columns('m')}, {projects.columns('p')}"


def _membership_join() -> str:
    """The membership of user `u` in the project whose slug is the first parameter."""
    return (
        f"LEFT JOIN ({Membership._meta.db_table} m"
        f" INNER JOIN {Project._meta.db_table} p ON p.id = m.project_id AND p.slug = %s)"
        " ON m.user_id = u.id"
    )


def _user_membership(row):
    """(user, membership with its project) from a row of `_user_membership_columns`; None for
    each that the row's outer joins did not find."""
    users, memberships, projects = (
        model_rows(get_user_model()),
        model_rows(Membership),
        model_rows(Project),
    )
    if row[0] is None:
        return None, None
    user = users.instance(row[: len(users)])
    membership_row = row[len(users) : len(users) + len(memberships)]
    if membership_row[0] is None:
        return user, None
    membership = memberships.instance(membership_row)
    membership.project = projects.instance(row[len(users) + len(memberships) :])
    return user, membership


def reservations_expired_delete(
    batch: StatementBatch, *, project_id: int, user_id: int, now
) -> None:
    """Queue on `batch` the deletion of the user's expired reservations in the project, skipping
    any another transaction is writing (PostgreSQL only: the caller checks
    `has_select_for_update_skip_locked`); it rides in the queue search's round trip.

    Why raw: correctness. `FOR UPDATE OF r SKIP LOCKED` in the DELETE's subquery, which the
    ORM cannot write: this cleanup takes no claim lock, so waiting on a row a save-and-next is
    writing could close a cycle of waits (commit 0df29b6: one analyst in six tabs deadlocked,
    5 of 96 saves answered 500).
    """
    reservations, claims = Reservation._meta.db_table, Claim._meta.db_table
    batch.add(
        f"DELETE FROM {reservations} WHERE id IN (SELECT r.id FROM {reservations} r"
        f" INNER JOIN {claims} c ON c.id = r.claim_id WHERE r.user_id = %s"
        " AND c.project_id = %s AND r.expires_at <= %s FOR UPDATE OF r SKIP LOCKED)",
        [user_id, project_id, connection.ops.adapt_datetimefield_value(now)],
    )


def read_ahead_begin(batch: StatementBatch, *, project_id: int, claim_id: int, check) -> None:
    """Queue on `batch` what the read-ahead (the screen that will follow claim `claim_id`,
    rendered ahead and reserved) needs before the queue's search, in that search's round trip:
    the check that the claim is in the project (`check` gets its rows and raises when there
    are none), and, on PostgreSQL, the transaction's commit not waiting for its WAL flush.

    Why raw: the save-and-next figure with the read-ahead counted (bench/RESULTS.md row 1): the
    ORM's `exists()` was a round trip of its own. Why the commit may skip the flush: the
    read-ahead writes only reservations (the one served ahead, the user's expired ones
    deleted), and `synchronous_commit` off (this transaction only, `set_config(…, true)`) can
    lose nothing but the last such commits before a crash of the database server, never
    corrupt. A reservation lost so is a screen rendered ahead in vain: the save's own search
    serves the claim again, or another with its whole screen, as when a colleague took it
    meanwhile. The next durable commit on the server (any save's) flushes it too.
    """
    batch.add(
        f"SELECT 1 FROM {Claim._meta.db_table} WHERE id = %s AND project_id = %s",
        [claim_id, project_id],
        check=check,
    )
    if connection.vendor == "postgresql":
        batch.add("SELECT set_config('synchronous_commit', 'off', true)")


def queue_candidates_statement(
    *,
    project_id: int,
    user_id: int,
    now,
    active_stratum: str | None = None,
    routed_out: bool = False,
    other_than: int | None = None,
) -> tuple[str, list]:
    """The unrestricted queue's first open claim the user may take, in queue order (walks
    claim_open_queue_idx, or claim_open_stratum_idx within `active_stratum`, the stratified
    design's chosen stratum): its id. `routed_out`: claims routed to the judge are not served
    (selective judging on). `other_than`: that claim left out (the one on the analyst's screen,
    when the screen after it is rendered ahead). Locked `FOR UPDATE OF c SKIP LOCKED` where
    the backend can (SQLite serialises writers instead).

    Why raw: the ORM spent a fifth of a save-and-next's CPU building and compiling these
    conditions, and the search rides in the label writes' round trip ("save-and-next server
    p50 6.9 ms, 1 analyst, 100k claims; 16 analysts p95 13.8 ms"). Correctness: SKIP LOCKED,
    so two analysts pressing "next" at once never wait on each other's candidate.
    """
    claims, answers = Claim._meta.db_table, Answer._meta.db_table
    labels, reservations = Label._meta.db_table, Reservation._meta.db_table
    skips = ClaimSkip._meta.db_table
    lock = ""
    if connection.features.has_select_for_update_skip_locked:
        lock = "FOR UPDATE OF c SKIP LOCKED"
    statement = f"""
        SELECT c.id FROM {claims} c INNER JOIN {answers} a ON a.id = c.answer_id
        WHERE c.project_id = %s AND c.label_count < c.labels_required AND NOT a.abstention
        {"AND c.active_stratum = %s" if active_stratum is not None else ""}
        {"AND NOT c.routed_to_judge" if routed_out else ""}
        {"AND c.id <> %s" if other_than is not None else ""}
        AND NOT EXISTS (SELECT 1 FROM {labels} l WHERE l.claim_id = c.id AND l.annotator_id = %s)
        AND NOT EXISTS (SELECT 1 FROM {skips} k WHERE k.claim_id = c.id AND k.user_id = %s)
        AND (
            SELECT COUNT(*) FROM {reservations} r
            WHERE r.claim_id = c.id AND r.user_id <> %s AND r.expires_at > %s
        ) < c.labels_required - c.label_count
        ORDER BY c.queue_key, c.id
        LIMIT 1 {lock}
    """
    params = [
        project_id,
        *([active_stratum] if active_stratum is not None else []),
        *([other_than] if other_than is not None else []),
        user_id,
        user_id,
        user_id,
        connection.ops.adapt_datetimefield_value(now),
    ]
    return statement, params


def own_reservation_statement(
    *, project_id: int, user_id: int, now, routed_out: bool = False, other_than: int | None = None
) -> tuple[str, list]:
    """The claim of the project the user holds a live reservation on, still open and neither
    labelled nor skipped by them, first in queue order, locked (SKIP LOCKED: another tab of
    theirs may be saving it): its id. The unrestricted queue's first choice
    (`annotate.services.queue.claim_take_next`); walks the user's few reservations
    (reservation_user_idx).

    Why raw: a save-and-next whose analyst holds the claim rendered ahead (label.js asks for
    it on every screen) finds it here, so it rides in the label writes' round trip as the
    queue's search does; the ORM's query was a round trip and a compilation of its own, and
    its claim's screen reads two more ("save-and-next statements per POST, holding the claim
    ahead: 6, as without; the ORM's path took 11", tests/annotate/test_screens_prefetch.py).
    `other_than`: that claim left out (as in `queue_candidates_statement`).
    """
    claims, labels = Claim._meta.db_table, Label._meta.db_table
    reservations, skips = Reservation._meta.db_table, ClaimSkip._meta.db_table
    lock = ""
    if connection.features.has_select_for_update_skip_locked:
        lock = "FOR UPDATE OF c SKIP LOCKED"
    statement = f"""
        SELECT c.id FROM {reservations} r INNER JOIN {claims} c ON c.id = r.claim_id
        WHERE r.user_id = %s AND r.expires_at > %s AND c.project_id = %s
        AND c.label_count < c.labels_required
        {"AND NOT c.routed_to_judge" if routed_out else ""}
        {"AND c.id <> %s" if other_than is not None else ""}
        AND NOT EXISTS (SELECT 1 FROM {labels} l WHERE l.claim_id = c.id AND l.annotator_id = %s)
        AND NOT EXISTS (SELECT 1 FROM {skips} k WHERE k.claim_id = c.id AND k.user_id = %s)
        ORDER BY c.queue_key, c.id
        LIMIT 1 {lock}
    """
    params = [
        user_id,
        connection.ops.adapt_datetimefield_value(now),
        project_id,
        *([other_than] if other_than is not None else []),
        user_id,
        user_id,
    ]
    return statement, params


def active_strata_statement(*, project_id: int) -> tuple[str, list]:
    """The project's strata of the stratified design with their counts (`ActiveStratum`):
    rows (name, claims, labelled, supported, prior_p, prior_weight), for the Neyman choice.

    Why raw: read on every save-and-next of a stratified project; a handful of rows.
    """
    return (
        f"SELECT name, claims, labelled, supported, prior_p, prior_weight"
        f" FROM {ActiveStratum._meta.db_table} WHERE project_id = %s ORDER BY name",
        [project_id],
    )


def active_stratum_move(
    batch: StatementBatch, *, project_id: int, name: str, labelled: int, supported: int
) -> None:
    """Queue `labelled += labelled, supported += supported` on the project's stratum `name`
    (atomic: the database adds). Queue it just before the project's completion counter (the
    lock order of `annotate.services.queue`).

    Why raw: rides in the save's last round trip (the save-and-next figure above).
    """
    batch.add(
        f"UPDATE {ActiveStratum._meta.db_table} SET labelled = labelled + %s,"
        " supported = supported + %s WHERE project_id = %s AND name = %s",
        [labelled, supported, project_id, name],
    )


def reservation_if_room_statement(
    *, claim_id: int, user_id: int, now, expires, ahead: bool = False
) -> tuple[str, list]:
    """Reserve claim `claim_id` for the user until `expires` if its labels and other analysts'
    live reservations (at `now`) still leave room and the user has not labelled it; RETURNING
    a row when it reserved. Run it holding the claim's row lock. `ahead`: taken for the screen
    rendered ahead (`Reservation.ahead`); a reservation the queue served stays served.

    Why raw: correctness. The conditional INSERT … SELECT … ON CONFLICT re-checks the quota
    atomically with the reservation's upsert: a new statement reads with a fresh snapshot (READ
    COMMITTED), which sees every reservation and label committed before the lock was granted;
    the ORM has no conditional INSERT. One statement in the screen reads' round trip
    ("save-and-next server p50 6.9 ms, 1 analyst, 100k claims; 16 analysts p95 13.8 ms").
    """
    reservation, label, claims = (
        Reservation._meta.db_table,
        Label._meta.db_table,
        Claim._meta.db_table,
    )
    adapt = connection.ops.adapt_datetimefield_value
    statement = f"""
        INSERT INTO {reservation} (claim_id, user_id, expires_at, ahead)
        SELECT %s, %s, %s, %s
        WHERE (
            SELECT COUNT(*) FROM {reservation}
            WHERE claim_id = %s AND user_id <> %s AND expires_at > %s
        ) < (SELECT labels_required - label_count FROM {claims} WHERE id = %s)
        AND NOT EXISTS (SELECT 1 FROM {label} WHERE claim_id = %s AND annotator_id = %s)
        ON CONFLICT (claim_id, user_id) DO UPDATE SET expires_at = excluded.expires_at,
            ahead = {reservation}.ahead AND excluded.ahead
        RETURNING claim_id
    """
    params = [
        claim_id,
        user_id,
        adapt(expires),
        ahead,
        claim_id,
        user_id,
        adapt(now),
        claim_id,
        claim_id,
        user_id,
    ]
    return statement, params


def screen_reads_statements(*, claim_id: int) -> dict[str, tuple[str, list]]:
    """The labelling screen's reads of claim `claim_id`: `"claims"`, the claims of its answer
    in reading order; `"answer"`, the answer; `"passages"`, its pile in rank order. Each
    selects every concrete field (`model_rows(...).columns`), for `ModelRows.instances`.

    Why raw: they ride in the reservation's round trip, the save-and-next's last ("save-and-next
    server p50 6.9 ms, 1 analyst, 100k claims; 16 analysts p95 13.8 ms"); the ORM sends each
    as a round trip of its own.
    """
    claims, answers, passages = (model_rows(model) for model in (Claim, Answer, Passage))
    claim_table, answer_table = Claim._meta.db_table, Answer._meta.db_table
    passage_table = Passage._meta.db_table
    answer_of = f"(SELECT answer_id FROM {claim_table} WHERE id = %s)"
    return {
        "claims": (
            f"SELECT {claims.columns('s')} FROM {claim_table} s WHERE s.answer_id = {answer_of}"
            " ORDER BY s.position, s.id",
            [claim_id],
        ),
        "answer": (
            f"SELECT {answers.columns('a')} FROM {answer_table} a WHERE a.id = {answer_of}",
            [claim_id],
        ),
        "passages": (
            f"SELECT {passages.columns('p')} FROM {passage_table} p"
            f" WHERE p.answer_id = {answer_of} ORDER BY p.rank",
            [claim_id],
        ),
    }


def lock_timeout_set(timeout: str) -> str:
    """Set this transaction's `lock_timeout` to `timeout` (PostgreSQL's interval text, as SET
    LOCAL: through `set_config(…, true)`, which takes a bound value) and return the value it
    had, to be set back the same way. Raw: the ORM has no statement for a setting. Used by
    `annotate.services.reservation_wait` to wait briefly for a lock (correctness: no claim
    left short, no deadlock); PostgreSQL only."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT current_setting('lock_timeout'), set_config('lock_timeout', %s, true)",
            [timeout],
        )
        return cursor.fetchone()[0]
