"""Raw SQL lives here, each statement with the figure it bought (bench/RESULTS.md) or the
correctness reason beside it; anything that bought nothing measurable is ORM code. One home
per app (`annotate/sql/`, a package with one module per concept; `judges` has none;
`metrics/sql.py`, `interchange/sql.py`, `config/sql.py`); tests/test_sql_home.py fails on `cursor.execute`, `.raw(`, `RawSQL` or
`.extra(` anywhere else, and on SQL statement text (a string or f-string starting
SELECT/INSERT/UPDATE/DELETE/WITH) anywhere else.

What is here, and why:

- `StatementBatch`: several statements in one round trip to PostgreSQL, one after another
  elsewhere. The labelling screen's save-and-next is a dozen small statements; on loopback each
  costs a round trip (~0.2 ms) whatever it does. psycopg 3's client-side binding cursor
  (Django's default, `server_side_binding` off) accepts several `;`-separated statements in
  one `execute()` and hands back each one's result with `nextset()`, so a batch costs one
  round trip there. SQLite's driver runs one statement per call, so the same statements run
  one by one. Statements run in order inside the caller's transaction; the first that fails
  raises, and the caller's `transaction.atomic` rolls back all of them. Hand-written SQL only:
  callers keep every statement portable (PostgreSQL and SQLite), `%s` placeholders, no
  literal `%`. Bought: save-and-next in 6 statements instead of 18 (commit cd0b6ff), today
  "save-and-next server time p50, 1 analyst: 6.86 ms at 100k claims" (bench/RESULTS.md).
  On PostgreSQL the batch goes as prepared statements in one psycopg pipeline (`_Pipelined`,
  setting FAITHAUDIT_PREPARED_STATEMENTS): PostgreSQL planned the save's statements in longer
  than it ran them; the save-and-next POST's time in database calls went 5.4-6.5 -> 3.0-3.2 ms
  in-process (bench/profile_save_next.py, same machine, runs alternated). `statement_rows`:
  one statement the same way (the session, user and membership reads).
- `ModelRows`: instances from those statements' rows, built with the ORM's converters.
- `project_membership_get`: every project page's first read (the same save-and-next figure).
- `reservations_expired_delete`: correctness, `FOR UPDATE SKIP LOCKED` (no deadlock).
- `lock_timeout_set`: correctness, the queue's brief wait for an analyst's own reservation
  (`annotate.services.reservation_wait`: no claim left short, no deadlock).
- the save's writes queued on a `StatementBatch` (`reservation_release`, `claim_label_count_add`,
  `membership_labels_saved_add`, `project_claims_complete_move`, `claim_review_clear`,
  `gold_delete`, `gold_unanimous_insert`, `gold_update`): in the save's round trips, the same
  save-and-next figure; the counters are atomic `col = col + n` updates under the claim's lock.
- the save-and-next's own statements, as builders returning `(sql, params)` for the caller's
  `StatementBatch` (the callers in services/labels.py and services/queue.py parse the rows):
  `claim_lock_statement` and `claim_locked_read_statement` (the lock, then a fresh-snapshot
  read, one round trip), `label_insert_statement`, `label_id_of_statement`,
  `label_update_statement`, `label_history_insert_statement`, `queue_candidates_statement`
  (SKIP LOCKED), `reservation_if_room_statement` (the conditional INSERT that re-checks the
  quota atomically), `screen_reads_statements`: "save-and-next server p50 6.9 ms, 1 analyst,
  100k claims; 16 analysts p95 13.8 ms" (bench/RESULTS.md).
- `sequence_ids_reserve`, `copy_rows`: PostgreSQL COPY for imports, "import native JSONL
  4,338 answers/s at 100k answers" (1,073 -> ~6,700 answers per CPU-second, commit 254a408).

One module per concept, every name re-exported here (`from annotate.sql import X`):
`annotate/sql/batch.py` (StatementBatch, ModelRows), `bulk.py` (COPY and id reservation for
imports), `counters.py` (the save's queued writes: counters, reservation release, gold),
`labels.py` (the save's lock, read and label/history/span statements), `queue.py` (the
queue's and the screen's statements).
"""

from .batch import ModelRows, StatementBatch, _one_round_trip, model_rows, statement_rows
from .bulk import copy_rows, copy_statement, sequence_ids_reserve
from .counters import (
    claim_label_count_add,
    claim_review_clear,
    gold_delete,
    gold_unanimous_insert,
    gold_update,
    label_time_add,
    membership_labels_saved_add,
    project_claims_complete_move,
    reservation_release,
)
from .labels import (
    claim_lock_statement,
    claim_locked_read_statement,
    evidence_span_insert_statement,
    evidence_spans_delete_statement,
    label_history_insert_statement,
    label_id_of_statement,
    label_insert_statement,
    label_update_statement,
)
from .queue import (
    active_strata_statement,
    active_stratum_move,
    lock_timeout_set,
    own_reservation_statement,
    project_membership_get,
    queue_candidates_statement,
    read_ahead_begin,
    reservation_if_room_statement,
    reservations_expired_delete,
    screen_reads_statements,
    session_membership_get,
    user_membership_get,
)

__all__ = [
    "ModelRows",
    "StatementBatch",
    "statement_rows",
    "_one_round_trip",
    "active_strata_statement",
    "active_stratum_move",
    "lock_timeout_set",
    "claim_label_count_add",
    "claim_lock_statement",
    "claim_locked_read_statement",
    "claim_review_clear",
    "copy_rows",
    "copy_statement",
    "evidence_span_insert_statement",
    "evidence_spans_delete_statement",
    "gold_delete",
    "gold_unanimous_insert",
    "gold_update",
    "label_history_insert_statement",
    "label_id_of_statement",
    "label_insert_statement",
    "label_time_add",
    "label_update_statement",
    "membership_labels_saved_add",
    "model_rows",
    "own_reservation_statement",
    "project_claims_complete_move",
    "project_membership_get",
    "queue_candidates_statement",
    "read_ahead_begin",
    "reservation_if_room_statement",
    "reservation_release",
    "reservations_expired_delete",
    "screen_reads_statements",
    "session_membership_get",
    "user_membership_get",
    "sequence_ids_reserve",
]
