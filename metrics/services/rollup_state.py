"""Incremental rollups (issue 30 item 2): a recompute reads the answers that changed, not every
claim.

A `RollupState` per project × judge run × system keeps the sums `metrics.sql.ROLLUP_CELLS`
computes (per stratum N_h, r_h, Σf, Σf², g_h; the cross-products Σ_a v_a v_aᵀ; the answers
judged) in `totals`, and the per-(answer, stratum) cells they are sums of in `RollupCell`. The
triggers of migration 0005 mark each answer a gold, verdict, claim or answer write touched;
`rollup_refresh` takes the marks, reads those answers' stored cells and their cells as they
are now (`sql.rollup_cells_of`), takes the old ones out of the sums and puts the new ones in,
and replaces the cells; the judge's confidences, counted per value in `RollupConfidence`
for the calibration, move the same way (each cell keeps its own). Each answer's cross-product v_a v_aᵀ is its own, so the delta is
exact: sums of integers (counts, m·m') stay integers; Σf and its products move by rounding
only (`tests/metrics/test_rollup_state.py` holds a refreshed state to a rebuilt one, 1e-12).

A state is built (one `INSERT … SELECT` of every cell) the first time it is read, and again
when more than `REBUILD_SHARE` of its answers changed at once (a large import), where one scan
is cheaper than a delta per answer. PostgreSQL only; `rollups.rollups_read` reads SQLite whole.
"""

from __future__ import annotations

import json
from collections import defaultdict

import numpy as np
from django.db import transaction
from django.utils import timezone

from metrics import sql
from metrics.models import RollupCell, RollupState

REBUILD_SHARE = 0.2  # more of the answers changed than this: build again from every claim
SEP = "\x1f"  # joins two stratum names into a cross-product key


def _key(project_id: int, run_id: int | None, system_id: int | None) -> str:
    return f"{project_id}:{run_id or ''}:{system_id or ''}"


def _empty() -> dict:
    return {"strata": {}, "cross": {}, "answers": 0, "all_answers": 0}


def _totals_from_rows(rows: list[tuple]) -> dict:
    """`totals` from `sql.rollup_state_sums` rows (the shapes of `sql.rollup_cells`)."""
    totals = _empty()
    for kind, a, b, v1, v2, v3, v4, g, first in rows:
        if kind == "stratum":
            totals["strata"][a] = {
                "claims": int(v1),
                "m": int(v2),
                "s": float(v3),
                "s2": float(v4),
                "g": int(g),
                "first": None if first is None else int(first),
            }
        elif kind == "cross":
            totals["cross"][a + SEP + b] = [int(v1), float(v2), float(v3), float(v4)]
        elif kind == "answers":
            totals["answers"] = int(v1)
            totals["all_answers"] = int(v2)
    return totals


def _apply(totals: dict, cells: list[tuple], sign: int) -> None:
    """Add (sign +1) or take out (−1) the cells of some answers (rows of `sql.STATE_CELLS`)."""
    by_answer: dict[int, list[tuple]] = defaultdict(list)
    for cell in cells:
        by_answer[int(cell[0])].append(cell)
    strata, cross = totals["strata"], totals["cross"]
    for answer_cells in by_answer.values():
        judged = [c for c in answer_cells if c[3] > 0]
        for _answer, name, claims, m, s, s2, first, _gold in answer_cells:
            row = strata.setdefault(
                name, {"claims": 0, "m": 0, "s": 0.0, "s2": 0.0, "g": 0, "first": None}
            )
            row["claims"] += sign * int(claims)
            row["m"] += sign * int(m)
            row["s"] += sign * float(s)
            row["s2"] += sign * float(s2)
            row["g"] += sign * int(m > 0)
            if sign > 0 and first is not None:
                row["first"] = int(first) if row["first"] is None else min(row["first"], first)
        for x in judged:
            for y in judged:
                entry = cross.setdefault(x[1] + SEP + y[1], [0, 0.0, 0.0, 0.0])
                mx, sx, my, sy = int(x[3]), float(x[4]), int(y[3]), float(y[4])
                entry[0] += sign * mx * my
                entry[1] += sign * mx * sy
                entry[2] += sign * sx * my
                entry[3] += sign * sx * sy
        totals["answers"] += sign * int(bool(judged))
        totals["all_answers"] += sign
    for name in [name for name, row in strata.items() if row["claims"] <= 0]:
        del strata[name]
        for key in [key for key in cross if name in key.split(SEP)]:
            del cross[key]


def rows_of(totals: dict) -> list[tuple]:
    """`totals` as `sql.rollup_cells`' "stratum", "cross" and "answers" rows."""
    rows = [
        ("stratum", name, None, r["claims"], r["m"], r["s"], r["s2"], r["g"], r["first"])
        for name, r in totals["strata"].items()
    ]
    judged = {name for name, r in totals["strata"].items() if r["m"] > 0}
    for key, values in totals["cross"].items():
        pair = key.split(SEP)
        if judged.issuperset(pair):  # a stratum left without judged claims has none
            rows.append(("cross", *pair, *values, None, None))
    rows.append(("answers", None, None, totals["answers"], None, None, None, None, None))
    return rows


def _build(state: RollupState, where: dict) -> int:
    RollupCell.objects.filter(state=state).delete()
    sql.rollup_cells_store(state_id=state.pk, **where)
    sql.rollup_confidences_store(state_id=state.pk)
    state.totals = _totals_from_rows(sql.rollup_state_sums(state_id=state.pk))
    state.built_at = timezone.now()
    return state.totals["all_answers"]


def rollup_refresh(*, project_id: int, run_id: int | None, system_id: int | None, default: str):
    """(the state's rows in `sql.rollup_cells`' shapes, touched cells included; the answers
    re-aggregated: every one on a build) — the state brought up to date first."""
    where = {"project_id": project_id, "run_id": run_id, "system_id": system_id}
    # Created (and committed) before it is built, so the triggers mark every write from here
    # on: a write the build does not see is refreshed next time, never lost.
    state, created = RollupState.objects.get_or_create(
        key=_key(project_id, run_id, system_id),
        defaults={"project_id": project_id, "run_id": run_id, "system_id": system_id},
    )
    where["default"] = default
    with transaction.atomic():
        state = RollupState.objects.select_for_update().get(pk=state.pk)
        # Marks first, then the cells: a write committed between the two is read twice (the
        # same cell), one committed after keeps its mark.
        marked = sql.rollup_marks_take(state_id=state.pk)
        if state.built_at is None or len(marked) > REBUILD_SHARE * max(
            state.totals["all_answers"], 1
        ):
            refreshed = _build(state, where)
        else:
            refreshed = _delta(state, marked, where)
        state.answers_refreshed = refreshed
        state.refreshed_at = timezone.now()
        state.save(update_fields=["totals", "answers_refreshed", "built_at", "refreshed_at"])
        rows = rows_of(state.totals) + sql.rollup_state_touched(state_id=state.pk)
    return rows, refreshed


def _delta(state: RollupState, marked: list[int], where: dict) -> int:
    if not marked:
        return 0
    old = sql.rollup_state_cells(state_id=state.pk, answers=marked)
    new = sql.rollup_cells_of(answers=marked, **where)
    _apply(state.totals, old, -1)
    _apply(state.totals, [row[:8] for row in new], +1)
    sql.rollup_confidences_move(state_id=state.pk, answers=marked, sign=-1)
    RollupCell.objects.filter(state=state, answer_id__in=marked).delete()
    RollupCell.objects.bulk_create(
        RollupCell(
            state=state,
            answer_id=answer,
            stratum=stratum,
            claims=claims,
            m=m,
            s=s,
            s2=s2,
            first_id=first,
            has_gold=gold,
            confidences=json.loads(confidences),
        )
        for answer, stratum, claims, m, s, s2, first, gold, confidences in new
    )
    sql.rollup_confidences_move(state_id=state.pk, answers=marked, sign=+1)
    return len(marked)


def rollup_confidences_refreshed(
    *, project_id: int, run_id: int, system_id: int | None, default: str
) -> tuple[np.ndarray, np.ndarray]:
    """(confidences, judged claims at each) of the run over the project's (or one system's) judged
    claims, rounded to `sql.STATE_CONFIDENCE_DIGITS`, from the state's counts once it is up to
    date: the rows `sql.rollup_confidences` gives at those digits, without its scan of every
    verdict."""
    rollup_refresh(project_id=project_id, run_id=run_id, system_id=system_id, default=default)
    state = RollupState.objects.get(key=_key(project_id, run_id, system_id))
    return sql.rollup_state_confidences(state_id=state.pk)
