"""Raw SQL lives here, each statement with the figure it bought (the rule: annotate/sql/).

The statement wraps a queryset's own compiled SQL (`query.sql_with_params()`): the ORM writes
the query, only the way its rows come back is hand-made. (The SQLite read of the same query
went back to the ORM's `values_list`: one query either way, no figure bought.)
"""

import numpy as np
from django.db import connection, transaction

from annotate.vocabulary import VERDICT_VALUES

ROLLUP_WORK_MEM = "256MB"
# A state's cells keep their judged claims' confidences rounded to this many decimals (bins of
# 10^-6: tests/metrics/test_rollup_calibration.py shows the calibration moving by < 1e-6).
STATE_CONFIDENCE_DIGITS = 6
_ROUNDED = f"round(v.c::numeric, {STATE_CONFIDENCE_DIGITS})::float8"
# CELLS_SELECT's last column: the cell's rounded confidences (a build, a refresh) or nothing
# (the one-statement read, which sums the cells and never reads them)
CELL_CONFIDENCES = f"coalesce(jsonb_agg({_ROUNDED}) FILTER (WHERE v.c IS NOT NULL), '[]'::jsonb)"


def rows_as_csv_text(sql: str, params, *, names: list[str], quoted) -> str | None:
    """PostgreSQL: the rows of `sql` folded by the server into one CSV text (one protocol
    message instead of a million); `quoted` columns (free text, JSON) are CSV-quoted so a
    comma cannot shift a column, the others are numbers or fixed choices. None for no rows.

    Why raw: a million rows in about a second (commit c025ec3); today "report snapshot: time
    in metrics.selectors reads 4.78 s at 1M claims" of "report snapshot total 9.25 s"
    (bench/RESULTS.md).
    """
    aliases = ", ".join(f"c{i}" for i in range(len(names)))
    fields = " || ',' || ".join(
        f"'\"' || replace(coalesce(c{i}::text, ''), '\"', '\"\"') || '\"'"
        if name in quoted
        else f"coalesce(c{i}::text, '')"
        for i, name in enumerate(names)
    )
    statement = f"SELECT string_agg({fields}, E'\\n') FROM ({sql}) AS rows ({aliases})"
    with connection.cursor() as cursor:
        cursor.execute(statement, params)
        return cursor.fetchone()[0]


# --- Rollups (issue 30): the report's sufficient statistics, aggregated by PostgreSQL ---------
#
# Written to run unchanged on Citus with claims, verdicts and gold distributed by answer: the
# inner GROUP BY is on the answer first (pushed down whole to every worker), the outer ones
# are sums and counts (partial aggregates), no window function runs across answers, and the
# cross-products join each answer's cells to the same answer's cells only (co-located).

# One row per (answer, design stratum): the cell every rollup is a sum of (`RollupCell`).
CELLS_SELECT = """
    SELECT c.answer_id,
           CASE WHEN c.stratum <> '' THEN c.stratum ELSE %(default)s END AS stratum,
           count(*) AS claims,
           count(v.f) FILTER (WHERE g.claim_id IS NULL) AS m,
           coalesce(sum(v.f) FILTER (WHERE g.claim_id IS NULL), 0) AS s,
           coalesce(sum(v.f * v.f) FILTER (WHERE g.claim_id IS NULL), 0) AS s2,
           min(c.id) FILTER (WHERE g.claim_id IS NULL AND v.f IS NOT NULL) AS first_id,
           bool_or(g.claim_id IS NOT NULL) AS has_gold,
           {confidences} AS confidences
    FROM annotate_claim c
    JOIN annotate_answer a ON a.id = c.answer_id
    LEFT JOIN annotate_gold g ON g.claim_id = c.id
    LEFT JOIN (
        SELECT claim_id,
               CASE WHEN confidence IS NULL THEN (verdict = 'SUPPORTED')::int::float8
                    ELSE confidence END AS f,
               confidence AS c
        FROM judges_judgeverdict
        WHERE run_id = %(run)s AND claim_id IS NOT NULL AND NOT stale
              AND verdict = ANY(%(parsed)s)
    ) v ON v.claim_id = c.id
    WHERE c.project_id = %(project)s AND NOT a.abstention {system} {answers}
    GROUP BY c.answer_id, 2
"""

# The sums of the cells (`cells`: a CTE of CELLS_SELECT's columns): per stratum, the
# cross-products of the same answer's cells, the answers judged.
CELL_SUMS = """
SELECT 'stratum', stratum, NULL::text, sum(claims), sum(m), sum(s), sum(s2),
       count(*) FILTER (WHERE m > 0), min(first_id)
FROM cells GROUP BY stratum
UNION ALL
SELECT 'cross', x.stratum, y.stratum, sum(x.m * y.m), sum(x.m * y.s), sum(x.s * y.m),
       sum(x.s * y.s), NULL, NULL
FROM cells x JOIN cells y ON y.answer_id = x.answer_id
WHERE x.m > 0 AND y.m > 0
GROUP BY x.stratum, y.stratum
UNION ALL
SELECT 'answers', NULL, NULL, count(*) FILTER (WHERE m > 0), count(*), NULL, NULL, NULL, NULL
FROM (SELECT answer_id, sum(m) AS m FROM cells GROUP BY answer_id) per_answer
"""

ROLLUP_CELLS = (
    "WITH cells AS (" + CELLS_SELECT + "), gold_answers AS (\n"
    "    SELECT DISTINCT answer_id FROM cells WHERE has_gold\n"
    ")\n"
    + CELL_SUMS
    + """UNION ALL
SELECT 'touched', cells.stratum, cells.answer_id::text, m, s, NULL, NULL, NULL, NULL
FROM cells JOIN gold_answers USING (answer_id)
WHERE m > 0
"""
)

ROLLUP_GOLD = """
SELECT c.id, c.answer_id,
       CASE WHEN c.stratum <> '' THEN c.stratum ELSE %(default)s END,
       g.verdict,
       CASE WHEN v.confidence IS NULL THEN (v.verdict = 'SUPPORTED')::int::float8
            ELSE v.confidence END,
       v.confidence
FROM annotate_gold g
JOIN annotate_claim c ON c.id = g.claim_id
JOIN annotate_answer a ON a.id = c.answer_id
LEFT JOIN LATERAL (
    SELECT verdict, confidence FROM judges_judgeverdict
    WHERE run_id = %(run)s AND claim_id = c.id AND NOT stale AND verdict = ANY(%(parsed)s)
) v ON true
WHERE c.project_id = %(project)s AND NOT a.abstention {system}
ORDER BY c.id
"""

# The judge's confidences over every judged claim of the project (or one system), as distinct
# values with their counts: all the calibration section and CRC read of the unaudited claims.
ROLLUP_CONFIDENCES = """
SELECT {value}, count(*)
FROM judges_judgeverdict v
JOIN annotate_claim c ON c.id = v.claim_id
JOIN annotate_answer a ON a.id = c.answer_id
WHERE v.run_id = %(run)s AND NOT v.stale AND v.verdict = ANY(%(parsed)s)
      AND v.confidence IS NOT NULL
      AND c.project_id = %(project)s AND NOT a.abstention {system}
GROUP BY 1
ORDER BY 1
"""


def _rollup_params(project_id: int, run_id: int | None, system_id: int | None, default: str):
    system = "AND a.system_id = %(system)s" if system_id is not None else ""

    params = {
        "project": project_id,
        "run": run_id if run_id is not None else -1,
        "system": system_id,
        "default": default,
        "parsed": list(VERDICT_VALUES),
    }
    return system, params


def rollup_cells(
    *, project_id: int, run_id: int | None, system_id: int | None, default: str
) -> list[tuple]:
    """The unaudited judged claims' sufficient statistics in one statement, one scan of the
    project's claims (rows: ("stratum", name, −, N_h, r_h, Σf, Σf², g_h, first claim id),
    ("cross", h, h', Σmm', Σms', Σsm', Σss'), ("answers", −, −, answers judged, all answers),
    ("touched", h, answer, m, S) for the answers holding gold).

    Why raw: a GROUP BY per answer then per stratum that PostgreSQL (or Citus, pushed down
    per answer) aggregates, so the report reads strata-sized rows, not every claim: docs/SCALE.md
    and the "report from rollups" rows of bench/RESULTS.md."""
    system, params = _rollup_params(project_id, run_id, system_id, default)
    with transaction.atomic(), connection.cursor() as cursor:
        # The per-answer cells sort and hash in memory rather than spill to disk (the plan in
        # docs/SCALE.md); LOCAL: for this statement's transaction only.
        cursor.execute(f"SET LOCAL work_mem = '{ROLLUP_WORK_MEM}'")
        cursor.execute(ROLLUP_CELLS.format(system=system, answers="", confidences="NULL"), params)
        return cursor.fetchall()


def rollup_gold(
    *, project_id: int, run_id: int | None, system_id: int | None, default: str
) -> list[tuple]:
    """Every gold claim's row: (claim id, answer id, stratum, gold verdict, judge score or
    None). Why raw: the same stratum expression and judge score as `rollup_cells`, so the two
    halves of the report's inputs cannot disagree; a few thousand rows through the gold index."""
    system, params = _rollup_params(project_id, run_id, system_id, default)
    with connection.cursor() as cursor:
        cursor.execute(ROLLUP_GOLD.format(system=system), params)
        return cursor.fetchall()


def rollup_confidences(
    *, project_id: int, run_id: int, system_id: int | None, digits: int | None
) -> list[tuple[float, int]]:
    """(confidence, judged claims) per distinct confidence of run `run_id`, ascending; with
    `digits`, confidences rounded to that many decimals first (bins of 10^−digits, at most
    10^digits + 1 rows however many claims). Why raw: one GROUP BY over the run's verdicts
    where they are (on Citus, partial counts per worker), not every claim into Python."""
    system, params = _rollup_params(project_id, run_id, system_id, "")
    value = (
        "v.confidence" if digits is None else f"round(v.confidence::numeric, {int(digits)})::float8"
    )
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"SET LOCAL work_mem = '{ROLLUP_WORK_MEM}'")
        cursor.execute(ROLLUP_CONFIDENCES.format(value=value, system=system), params)
        return cursor.fetchall()


# --- Incremental rollups (issue 30): `metrics.models.RollupCell` holds the cells, their sums
# are kept in `RollupState.totals`; a refresh re-aggregates the answers a write marked. -------

STATE_CELLS = (
    "SELECT answer_id, stratum, claims, m, s, s2, first_id, has_gold "
    "FROM metrics_rollupcell WHERE state_id = %(state)s"
)


def rollup_cells_store(
    *, state_id: int, project_id: int, run_id: int | None, system_id: int | None, default: str
) -> int:
    """Every cell of the project (or one system) aggregated into `RollupCell` rows of state
    `state_id`; the number stored. Why raw: the one scan of every claim a build costs, done
    where the claims are (`INSERT … SELECT`), nothing crosses to Python."""
    system, params = _rollup_params(project_id, run_id, system_id, default)
    statement = (
        "INSERT INTO metrics_rollupcell "
        "(answer_id, stratum, claims, m, s, s2, first_id, has_gold, confidences, state_id) "
        "SELECT cells.answer_id, cells.stratum, cells.claims, cells.m, cells.s, cells.s2, "
        "cells.first_id, cells.has_gold, cells.confidences, %(state)s "
        "FROM (" + CELLS_SELECT + ") cells"
    )
    with connection.cursor() as cursor:
        cursor.execute(f"SET LOCAL work_mem = '{ROLLUP_WORK_MEM}'")
        cursor.execute(
            statement.format(system=system, answers="", confidences=CELL_CONFIDENCES),
            {**params, "state": state_id},
        )
        stored = cursor.rowcount
        # the planner's figures for the new cells, so a refresh's probes use the indexes
        cursor.execute("ANALYZE metrics_rollupcell")
        return stored


def rollup_cells_of(
    *, answers: list[int], project_id: int, run_id: int | None, system_id: int | None,
    default: str,
) -> list[tuple]:  # fmt: skip
    """The cells of `answers` as they are now (columns of `STATE_CELLS`, then the confidences'
    JSON text). Why raw: the same CELLS_SELECT as a build, so a refreshed cell cannot differ
    from a rebuilt one."""
    system, params = _rollup_params(project_id, run_id, system_id, default)
    statement = (
        "SELECT cells.answer_id, cells.stratum, cells.claims, cells.m, cells.s, cells.s2, "
        "cells.first_id, cells.has_gold, cells.confidences::text FROM (" + CELLS_SELECT + ") cells"
    ).format(
        system=system, answers="AND c.answer_id = ANY(%(answers)s)", confidences=CELL_CONFIDENCES
    )
    with connection.cursor() as cursor:
        cursor.execute(statement, {**params, "answers": answers})
        return cursor.fetchall()


def rollup_state_cells(*, state_id: int, answers: list[int]) -> list[tuple]:
    """The stored cells of `answers` (columns of `STATE_CELLS`), through the state's index."""
    with connection.cursor() as cursor:
        cursor.execute(
            STATE_CELLS + " AND answer_id = ANY(%(answers)s)",
            {"state": state_id, "answers": answers},
        )
        return cursor.fetchall()


def rollup_state_sums(*, state_id: int) -> list[tuple]:
    """`rollup_cells`' "stratum", "cross" and "answers" rows, summed over the stored cells
    (after a build). Why raw: the same CELL_SUMS as the one-statement read."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"SET LOCAL work_mem = '{ROLLUP_WORK_MEM}'")
        cursor.execute("WITH cells AS (" + STATE_CELLS + ")" + CELL_SUMS, {"state": state_id})
        return cursor.fetchall()


def rollup_state_touched(*, state_id: int) -> list[tuple]:
    """`rollup_cells`' "touched" rows from the stored cells: the judged cells of the answers
    that hold gold, a few thousand rows. LATERAL: one index probe per gold answer (an IN
    subquery let the planner scan every cell of the state: 2.2 s at 3M claims)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT 'touched', c.stratum, g.answer_id::text, c.m, c.s, "
            "NULL, NULL, NULL, NULL FROM "
            "(SELECT DISTINCT answer_id FROM metrics_rollupcell "
            " WHERE state_id = %(state)s AND has_gold) g "
            "CROSS JOIN LATERAL (SELECT stratum, m, s FROM metrics_rollupcell x "
            " WHERE x.state_id = %(state)s AND x.answer_id = g.answer_id AND x.m > 0) c",
            {"state": state_id},
        )
        return cursor.fetchall()


# The confidences of a state's cells, counted per value (`answers`: only those answers' cells).
_CELL_COUNTS = (
    "SELECT e::float8 AS value, count(*) AS n FROM metrics_rollupcell x "
    "CROSS JOIN LATERAL jsonb_array_elements_text(x.confidences) e "
    "WHERE x.state_id = %(state)s {answers} GROUP BY 1"
)


def rollup_confidences_store(*, state_id: int) -> None:
    """The state's `RollupConfidence` counts from its stored cells (after a build). Why raw:
    one GROUP BY over the cells where they are, a million values without crossing to Python."""
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM metrics_rollupconfidence WHERE state_id = %s", [state_id])
        cursor.execute(f"SET LOCAL work_mem = '{ROLLUP_WORK_MEM}'")
        cursor.execute(
            "INSERT INTO metrics_rollupconfidence (state_id, value, count) "
            "SELECT %(state)s, value, n FROM (" + _CELL_COUNTS.format(answers="") + ") counted",
            {"state": state_id},
        )


def rollup_confidences_move(*, state_id: int, answers: list[int], sign: int) -> None:
    """Add (sign +1) or take out (−1) the confidences of `answers`' stored cells from the
    state's counts: out before a refresh replaces the cells, in after. Why raw: an upsert of a
    few values where the counts are."""
    cells = _CELL_COUNTS.format(answers="AND x.answer_id = ANY(%(answers)s)")
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO metrics_rollupconfidence AS h (state_id, value, count) "
            "SELECT %(state)s, value, %(sign)s * n FROM (" + cells + ") counted "
            "ON CONFLICT (state_id, value) DO UPDATE SET count = h.count + excluded.count",
            {"state": state_id, "answers": answers, "sign": int(sign)},
        )


def rollup_state_confidences(*, state_id: int) -> tuple[np.ndarray, np.ndarray]:
    """(confidences, judged claims at each) of the state, ascending: `rollup_confidences`'
    rows at STATE_CONFIDENCE_DIGITS, read from the counts (at most 10^6 + 1 rows, however many
    claims) instead of every verdict. Read in slices into two arrays, so a million rows never
    stand as a million Python tuples (~120 MB at 1M rows, measured at 550k)."""
    values, counts = [], []
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT value, count FROM metrics_rollupconfidence "
            "WHERE state_id = %s AND count > 0 ORDER BY value",
            [state_id],
        )
        while rows := cursor.fetchmany(50_000):
            block = np.array(rows, dtype=float)
            values.append(block[:, 0])
            counts.append(block[:, 1].astype(np.int64))
    if not values:
        return np.zeros(0, dtype=float), np.zeros(0, dtype=np.int64)
    return np.concatenate(values), np.concatenate(counts)


def rollup_marks_take(*, state_id: int) -> list[int]:
    """The answers marked for state `state_id` since its last refresh, the marks consumed
    (committed marks only: a write still in flight keeps its mark for the next refresh)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "DELETE FROM metrics_rollupmark WHERE state_id = %s RETURNING answer_id", [state_id]
        )
        return sorted({int(row[0]) for row in cursor.fetchall()})
