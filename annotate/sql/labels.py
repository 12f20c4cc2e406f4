"""Raw SQL: the label save's own statements (claim lock and fresh read, label, history and
evidence-span writes). Why each is raw: the package docstring (annotate/sql/__init__.py)."""

from django.db import connection

from annotate.models import Claim, EvidenceSpan, Gold, Label, LabelHistory, Reservation, Reveal

# -- the save-and-next's lock-and-read, label writes, queue search and screen reads --------------
# Statement text only: each builder returns `(sql, params)` for the caller to queue on its
# StatementBatch; the caller parses the rows. Why raw, all of them: save-and-next in three round
# trips on PostgreSQL ("save-and-next server p50 6.9 ms, 1 analyst, 100k claims; 16 analysts
# p95 13.8 ms", bench/RESULTS.md), plus each one's correctness reason below.


def claim_lock_statement(*, claim_id: int, project_id: int) -> tuple[str, list]:
    """The claim's row lock (`FOR UPDATE`; only where the backend has it), the first of
    `annotate.services.labels._claim_lock`'s two statements.

    Why raw: it rides in the same round trip as `claim_locked_read_statement` (one round trip
    for the lock and the read; "save-and-next server p50 6.9 ms, 1 analyst, 100k claims;
    16 analysts p95 13.8 ms"). The claim's lock serialises every writer of its labels and
    reservations, so the quota check is exact under concurrency.
    """
    return (
        f"SELECT id FROM {Claim._meta.db_table} WHERE id = %s AND project_id = %s FOR UPDATE",
        [claim_id, project_id],
    )


def claim_locked_read_statement(
    *, claim_id: int, project_id: int, user_id: int, now
) -> tuple[str, list]:
    """The claim's counters, labels and gold, the user's reservations (on it, and live ones on
    another claim of the project), other analysts' live reservations on it and the user's
    reveal verdict, read under the claim's lock: one row per label (at least one row when the
    claim is in the project).

    Why raw: one statement for what the ORM read in four (four query compilations), in the
    lock's round trip ("save-and-next server p50 6.9 ms, 1 analyst, 100k claims; 16 analysts
    p95 13.8 ms"). Correctness: a statement of its own after the lock, so its fresh snapshot
    (READ COMMITTED) sees a label another analyst committed while the lock was awaited.
    """
    claims, labels = Claim._meta.db_table, Label._meta.db_table
    golds, reservations = Gold._meta.db_table, Reservation._meta.db_table
    reveals = Reveal._meta.db_table
    statement = f"""
        SELECT c.id, c.project_id, c.answer_id, c.text, c.label_count, c.labels_required,
            c.needs_review,
            EXISTS (SELECT 1 FROM {reservations} r WHERE r.claim_id = c.id AND r.user_id = %s),
            EXISTS (
                SELECT 1 FROM {reservations} r INNER JOIN {claims} o ON o.id = r.claim_id
                WHERE r.user_id = %s AND o.project_id = c.project_id AND r.claim_id <> c.id
                AND r.expires_at > %s
            ),
            (SELECT v.verdict FROM {reveals} v WHERE v.claim_id = c.id AND v.user_id = %s),
            g.id, g.verdict, g.source, g.reason,
            l.id, l.annotator_id, l.verdict, l.needs_review, l.changed_after_reveal,
            c.inclusion_probability, c.active_stratum,
            EXISTS (
                SELECT 1 FROM {reservations} r
                WHERE r.claim_id = c.id AND r.user_id = %s AND r.ahead
            ),
            (
                SELECT COUNT(*) FROM {reservations} r
                WHERE r.claim_id = c.id AND r.user_id <> %s AND r.expires_at > %s
            )
        FROM {claims} c
        LEFT JOIN {golds} g ON g.claim_id = c.id
        LEFT JOIN {labels} l ON l.claim_id = c.id
        WHERE c.id = %s AND c.project_id = %s
    """
    params = [
        user_id,
        user_id,
        connection.ops.adapt_datetimefield_value(now),
        user_id,
        user_id,
        user_id,
        connection.ops.adapt_datetimefield_value(now),
        claim_id,
        project_id,
    ]
    return statement, params


def label_insert_statement(
    *,
    claim_id: int,
    annotator_id: int,
    columns: tuple[str, ...],
    values: list,
    stratum,
    changed: bool,
    guideline,
    moment,
    design: str = "",
    inclusion_probability: float | None = None,
) -> tuple[str, list]:
    """A new label: `columns` (the label's state, `LABEL_STATE_COLUMNS`) with `values`, the
    stratum (database-prepared), `changed_after_reveal`, the guideline version in force,
    `moment` (a database-adapted datetime) as created and updated time, and the queue design
    it was drawn under with its π.

    Why raw: in the save's round trip with the counters and gold ("save-and-next server p50
    6.9 ms, 1 analyst, 100k claims; 16 analysts p95 13.8 ms"); the ORM's save is a round trip
    of its own.
    """
    return (
        f"INSERT INTO {Label._meta.db_table} (claim_id, annotator_id, {', '.join(columns)},"
        " stratum, needs_review, changed_after_reveal, guideline_version, created_at, updated_at,"
        " design, inclusion_probability)"
        f" VALUES (%s, %s, {', '.join(['%s'] * len(columns))}, %s, %s, %s, %s, %s, %s, %s, %s)",
        [
            claim_id,
            annotator_id,
            *values,
            stratum,
            False,
            changed,
            guideline,
            moment,
            moment,
            design,
            inclusion_probability,
        ],
    )


def label_id_of_statement(*, claim_id: int, annotator_id: int) -> tuple[str, list]:
    """A subquery for the id of the annotator's label on the claim (a label inserted earlier in
    the same batch, whose id the caller does not know): for `label_history_insert_statement`.

    Why raw: the history row goes in the insert's round trip (the save-and-next figure above).
    """
    return (
        f"(SELECT id FROM {Label._meta.db_table} WHERE claim_id = %s AND annotator_id = %s)",
        [claim_id, annotator_id],
    )


def label_update_statement(
    *,
    label_id: int,
    columns: tuple[str, ...],
    values: list,
    stratum,
    changed: bool,
    guideline,
    moment,
    design: str = "",
    inclusion_probability: float | None = None,
) -> tuple[str, list]:
    """Label `label_id`'s new state, as `label_insert_statement` (`moment`: updated time).

    Why raw: in the save's round trip (the save-and-next figure above).
    """
    return (
        f"UPDATE {Label._meta.db_table} SET {', '.join(f'{column} = %s' for column in columns)},"
        " stratum = %s, needs_review = %s, changed_after_reveal = %s,"
        " guideline_version = %s, updated_at = %s, design = %s, inclusion_probability = %s"
        " WHERE id = %s",
        [
            *values,
            stratum,
            False,
            changed,
            guideline,
            moment,
            design,
            inclusion_probability,
            label_id,
        ],
    )


def label_history_insert_statement(
    *,
    label_id: tuple[str, list],
    claim_id: int,
    annotator_id: int,
    action: str,
    columns: tuple[str, ...],
    values: list,
    changed: bool,
    moment,
    more_spans=None,
) -> tuple[str, list]:
    """The history row of a save: the label's state after it. `label_id` is SQL with its
    params, `("%s", [id])` or `label_id_of_statement(...)`; `columns` are the history's names
    of the state (`HISTORY_STATE_COLUMNS`); `more_spans` its spans after the first
    (database-prepared JSON, or None).

    Why raw: in the save's round trip (the save-and-next figure above).
    """
    label_sql, label_params = label_id
    return (
        f"INSERT INTO {LabelHistory._meta.db_table} (label_id_at_time, claim_id, annotator_id,"
        f" action, {', '.join(columns)}, more_spans, changed_after_reveal, changed_at)"
        f" VALUES ({label_sql}, %s, %s, %s, {', '.join(['%s'] * len(columns))}, %s, %s, %s)",
        [*label_params, claim_id, annotator_id, action, *values, more_spans, changed, moment],
    )


def evidence_spans_delete_statement(*, label_id: int) -> tuple[str, list]:
    """Drop label `label_id`'s spans after the first (a save replaces them).

    Why raw: in the save's round trip (the save-and-next figure above).
    """
    return f"DELETE FROM {EvidenceSpan._meta.db_table} WHERE label_id = %s", [label_id]


def evidence_span_insert_statement(
    *, label_id: tuple[str, list], number: int, passage_id: int, start: int, end: int, quote: str
) -> tuple[str, list]:
    """One span after the first of a label (`number` 2, 3 …); `label_id` as for
    `label_history_insert_statement`.

    Why raw: in the save's round trip (the save-and-next figure above).
    """
    label_sql, label_params = label_id
    table = EvidenceSpan._meta.db_table
    quote_name = connection.ops.quote_name
    return (
        f"INSERT INTO {table} (label_id, number, passage_id, start, {quote_name('end')}, quote)"
        f" VALUES ({label_sql}, %s, %s, %s, %s, %s)",
        [*label_params, number, passage_id, start, end, quote],
    )
