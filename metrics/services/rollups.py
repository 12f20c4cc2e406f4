"""The report's headline from rollups (issue 30): memory bounded by gold, strata and answers.

`rollups_read` asks PostgreSQL for the sufficient statistics of the unaudited judged claims
(`metrics.sql.rollup_cells`: per stratum counts and sums, the cross-products of per-answer
totals) and the gold claims' rows (`rollup_gold`); on SQLite (`make run`) it reads the claims
through the ORM and computes the same statistics in numpy (`stats.design_ppi_sums.rest_sums`).
`headline_from_rollups` turns them into the figures the report's headline shows:

- faithfulness, pooled and per design stratum, design-based (clustered by answer, stratified,
  N_h from every claim of the stratum): `audit_design.design_rate`, as the report's rates;
- with a judge run, PPI++ under the design (`stats.design_ppi_sums.design_ppi_from_sums`, the
  same code `stats.design_ppi_mean` runs on arrays).

What it covers today: a claim's design stratum is the file's (`Claim.stratum`) or the project's
single default stratum, and the judge's scores come from one run; the report's strata from
queue labels and active designs' 1/π weights are not read here yet (docs/SCALE.md says what is
left). On PostgreSQL a read is incremental: it re-aggregates only the answers written since the
last read (`metrics.services.rollup_state`).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np
import pandas as pd
from django.db import connection

from annotate.models import Claim, Gold, Label
from annotate.vocabulary import VERDICT_VALUES, Verdict
from judges.models import JudgeVerdict
from metrics import selectors, sql
from metrics.services.abstention_coverage import fact_links
from metrics.services.audit_design import DEFAULT_STRATUM, design_rate
from metrics.services.calibration import _calibration, confidence_counts
from metrics.services.judge_audit import calibration_fields
from metrics.services.rollup_state import rollup_confidences_refreshed, rollup_refresh
from metrics.stats.design_ppi_sums import RestSums, design_ppi_from_sums, rest_sums


@dataclass(frozen=True)
class Rollups:
    """What the headline reads: per stratum N_h, the unaudited claims' sums, gold rows."""

    sizes: dict[str, float]  # N_h: the stratum's claims (abstentions left out)
    rest: RestSums
    gold_answer: np.ndarray
    gold_stratum: np.ndarray
    gold_verdict: np.ndarray
    gold_score: np.ndarray  # the judge's score on each gold claim, nan where unjudged
    gold_claim: np.ndarray  # each gold claim's id
    gold_confidence: np.ndarray  # the judge's P(SUPPORTED) on each gold claim, nan: none given
    run_id: int | None
    rows_read: int  # rows the database sent (strata, cross-products, gold, touched cells)
    answers_refreshed: int | None = None  # incremental: answers re-aggregated (all on a build)
    project_id: int | None = None  # whose facts the frontier's coverage reads


def _postgres() -> bool:
    return connection.vendor == "postgresql"


def _rest_from_rows(rows: list[tuple]) -> tuple[RestSums, dict[str, float]]:
    """`RestSums` from `sql.rollup_cells`' rows (strata in order of their first claim)."""
    strata = [row for row in rows if row[0] == "stratum"]
    sizes = {row[1]: float(row[3]) for row in strata}
    judged = sorted((row for row in strata if row[4]), key=lambda row: row[8])
    labels = [row[1] for row in judged]
    index = {name: k for k, name in enumerate(labels)}
    h = len(labels)
    count = np.array([int(row[4]) for row in judged], dtype=np.int64)
    sum_f = np.array([float(row[5]) for row in judged])
    sum_f2 = np.array([float(row[6]) for row in judged])
    m2 = np.maximum(sum_f2 - sum_f**2 / np.maximum(count, 1), 0.0)
    cross = np.zeros((2 * h, 2 * h))
    n_answers = 0
    touched = []
    for kind, a, b, v1, v2, v3, v4, _g, _first in rows:
        if kind == "cross":
            i, j = index[a], index[b]
            cross[i, j], cross[i, h + j] = float(v1), float(v2)
            cross[h + i, j], cross[h + i, h + j] = float(v3), float(v4)
        elif kind == "answers":
            n_answers = int(v1)
        elif kind == "touched":
            touched.append((int(b), index[a], float(v1), float(v2)))
    rest = RestSums(
        labels=labels,
        count=count,
        sum_f=sum_f,
        m2=m2,
        answers=np.array([int(row[7]) for row in judged], dtype=np.int64),
        cross=cross,
        n_answers=n_answers,
        touched_answer=np.array([t[0] for t in touched], dtype=object),
        touched_stratum=np.array([t[1] for t in touched], dtype=np.int64),
        touched_m=np.array([t[2] for t in touched], dtype=float),
        touched_s=np.array([t[3] for t in touched], dtype=float),
    )
    return rest, sizes


def _orm_read(project, run_id, system) -> tuple[RestSums, dict[str, float], list[tuple]]:
    """SQLite: the same statistics from the claims read through the ORM (small projects)."""
    claims = Claim.objects.filter(project=project, answer__abstention=False)
    if system is not None:
        claims = claims.filter(answer__system=system)
    rows = list(claims.order_by("id").values_list("id", "answer_id", "stratum"))
    ids = np.array([r[0] for r in rows], dtype=np.int64)
    answers = np.array([r[1] for r in rows], dtype=object)
    strata = np.array([r[2] or DEFAULT_STRATUM for r in rows], dtype=object)
    names, counts = np.unique(strata, return_counts=True)
    sizes = {str(name): float(n) for name, n in zip(names, counts, strict=True)}
    scores, confidences = _scores(run_id, ids)
    gold = dict(Gold.objects.filter(claim_id__in=ids.tolist()).values_list("claim_id", "verdict"))
    is_gold = np.isin(ids, np.fromiter(gold, dtype=np.int64, count=len(gold)))
    rest = ~is_gold & ~np.isnan(scores)
    sums = rest_sums(scores[rest], answers[rest], strata[rest], answers[is_gold])
    gold_rows = [
        (int(ids[i]), answers[i], strata[i], gold[int(ids[i])], scores[i], confidences[i])
        for i in np.flatnonzero(is_gold)
    ]
    return sums, sizes, gold_rows


def _scores(run_id, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The run's judge score per claim (P(SUPPORTED), else the 0/1 verdict), nan unjudged;
    and its P(SUPPORTED) alone, nan where it gave none."""
    out, confidences = np.full(ids.size, np.nan), np.full(ids.size, np.nan)
    if run_id is None:
        return out, confidences
    verdicts = JudgeVerdict.objects.filter(
        run_id=run_id, claim__isnull=False, stale=False, verdict__in=VERDICT_VALUES
    ).values_list("claim_id", "verdict", "confidence")
    at = {int(claim): i for i, claim in enumerate(ids.tolist())}
    for claim, verdict, confidence in verdicts:
        if claim in at:
            i = at[claim]
            out[i] = float(verdict == Verdict.SUPPORTED) if confidence is None else confidence
            confidences[i] = np.nan if confidence is None else confidence
    return out, confidences


def _nan_or_float(value) -> float:
    return np.nan if value is None else float(value)


def designs_not_weighted(*, project) -> list[str]:
    """The queue designs some of `project`'s labels were drawn under that the rollups do not
    weight yet ("active": 1/π; "stratified": the queue's strata), sorted; [] when the rollups
    read the project's gold under its design. `rollups_read` refuses such a project: raw gold
    would give a biased figure."""
    return sorted(
        Label.objects.filter(claim__project=project, design__in=("active", "stratified"))
        .values_list("design", flat=True)
        .distinct()
    )


def rollups_read(*, project, run=None, system=None, incremental=True) -> Rollups:
    """The project's (or one system's) rollups, with the scores of judge run `run`. On
    PostgreSQL from its `RollupState`, brought up to date by the answers written since
    (`rollup_state.rollup_refresh`); `incremental=False` aggregates every claim again in one
    statement (`sql.rollup_cells`), the reference the state is held to.

    Refused (ValueError) when any label was drawn by the active or stratified queue: their
    gold must be weighted by the design they were drawn under (1/π, the queue's strata), which
    the rollups do not read yet, and raw gold would give a biased figure."""
    drawn = designs_not_weighted(project=project)
    if drawn:
        raise ValueError(
            "the rollups do not weight gold drawn by the "
            + " or ".join(drawn)
            + " queue yet: use the report (metrics.services.report_build), which does"
        )
    run_id = None if run is None else run.pk
    system_id = None if system is None else system.pk
    refreshed = None
    if _postgres():
        where = {"project_id": project.pk, "run_id": run_id, "system_id": system_id}
        if incremental:
            rows, refreshed = rollup_refresh(**where, default=DEFAULT_STRATUM)
        else:
            rows = sql.rollup_cells(**where, default=DEFAULT_STRATUM)
        rest, sizes = _rest_from_rows(rows)
        gold_rows = sql.rollup_gold(**where, default=DEFAULT_STRATUM)
        read = len(rows) + len(gold_rows)
    else:
        rest, sizes, gold_rows = _orm_read(project, run_id, system)
        read = len(gold_rows)
    return Rollups(
        sizes=sizes,
        rest=rest,
        gold_answer=np.array([row[1] for row in gold_rows], dtype=object),
        gold_stratum=np.array([row[2] for row in gold_rows], dtype=object),
        gold_verdict=np.array([row[3] for row in gold_rows], dtype=object),
        gold_score=np.array([_nan_or_float(row[4]) for row in gold_rows], dtype=float),
        gold_claim=np.array([int(row[0]) for row in gold_rows], dtype=np.int64),
        gold_confidence=np.array([_nan_or_float(row[5]) for row in gold_rows], dtype=float),
        run_id=run_id,
        rows_read=read,
        answers_refreshed=refreshed,
        project_id=project.pk,
    )


def headline_from_rollups(rollups: Rollups) -> dict:
    """{"faithfulness": {"pooled", "by_stratum"}, "ppi_faithfulness"} from `rollups`; the
    rates as `audit_design.design_rate` gives them, PPI++ as `stats.design_ppi_mean`."""
    supported = rollups.gold_verdict == Verdict.SUPPORTED.value
    pooled = design_rate(supported, rollups.gold_answer, rollups.gold_stratum, dict(rollups.sizes))
    by_stratum = {}
    for name in sorted(rollups.sizes):
        inside = rollups.gold_stratum == name
        by_stratum[name] = design_rate(
            supported[inside],
            rollups.gold_answer[inside],
            rollups.gold_stratum[inside],
            {name: rollups.sizes[name]},
        )
    out = {"faithfulness": {"pooled": pooled, "by_stratum": by_stratum}, "ppi_faithfulness": None}
    if rollups.run_id is not None:
        judged = ~np.isnan(rollups.gold_score)
        est = design_ppi_from_sums(
            supported[judged].astype(float),
            rollups.gold_score[judged],
            rollups.gold_answer[judged],
            rollups.gold_stratum[judged],
            rollups.rest,
        )
        out["ppi_faithfulness"] = {
            "value": est.value,
            "ci": est.ci,
            "lambda": est.extra.get("lambda"),
            "design_effect": est.design_effect,
            "method": est.method,
        }
    return out


# Bins of the judge's confidences the calibration reads from a large project: 10^−6 wide, at
# most a million rows however many claims; tests/metrics/test_rollup_calibration.py shows the
# figures moving by less than 1e-6 against the distinct values themselves (digits=None).
CONFIDENCE_DIGITS = sql.STATE_CONFIDENCE_DIGITS


def rollups_confidences(
    *, project, run, system=None, digits: int | None = CONFIDENCE_DIGITS, incremental=True
) -> tuple[np.ndarray, np.ndarray]:
    """The distinct confidences run `run` gave over the project's (or one system's) judged
    claims, abstentions left out, and each one's claims: `calibration.confidence_counts` of
    every judged claim, without reading the claims. `digits`: rounded to that many decimals
    first (None: exact). On PostgreSQL at CONFIDENCE_DIGITS, from the `RollupState`'s counts
    brought up to date (`rollup_state.rollup_confidences_refreshed`); otherwise, or with
    `incremental=False`, one GROUP BY over the run's verdicts (`sql.rollup_confidences`)."""
    system_id = None if system is None else system.pk
    if _postgres():
        if incremental and digits == CONFIDENCE_DIGITS:
            return rollup_confidences_refreshed(
                project_id=project.pk, run_id=run.pk, system_id=system_id, default=DEFAULT_STRATUM
            )
        rows = sql.rollup_confidences(
            project_id=project.pk, run_id=run.pk, system_id=system_id, digits=digits
        )
        values = np.array([float(row[0]) for row in rows], dtype=float)
        return values, np.array([int(row[1]) for row in rows], dtype=np.int64)
    verdicts = JudgeVerdict.objects.filter(
        run=run,
        stale=False,
        verdict__in=VERDICT_VALUES,
        confidence__isnull=False,
        claim__project=project,
        claim__answer__abstention=False,
    )
    if system is not None:
        verdicts = verdicts.filter(claim__answer__system=system)
    values = np.array(list(verdicts.values_list("confidence", flat=True)), dtype=float)
    return confidence_counts(values if digits is None else np.round(values, digits))


def _gold_facts(rollups: Rollups) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The frontier's coverage inputs, read for gold alone: the (claim, fact) links of the gold
    claims (`abstention_coverage.fact_links`, the report's rule: a SUPPORTED label's quote of a
    gold-SUPPORTED claim overlapping a fact) and the facts of the gold answers. The frontier
    reads no other claim's links nor any other answer's facts, so this is the report's input
    for it, bounded by gold: two queries, the quotes only where facts are marked."""
    links = pd.DataFrame({"claim_id": [], "fact_id": []}, dtype=np.int64)
    facts = pd.DataFrame({"answer_id": [], "fact_id": []}, dtype=np.int64)
    if rollups.project_id is None or not rollups.gold_claim.size:
        return links, facts
    answers = sorted({int(a) for a in rollups.gold_answer})
    marked = selectors.fact_columns(project=rollups.project_id, answer_ids=answers)
    if marked.empty:
        return links, facts
    supported = rollups.gold_claim[rollups.gold_verdict == Verdict.SUPPORTED.value].tolist()
    evidence = selectors.supported_evidence_columns(project=rollups.project_id, claim_ids=supported)
    return fact_links(evidence, marked, supported), marked[["answer_id", "fact_id"]]


def calibration_from_rollups(rollups: Rollups, judged_confidence) -> dict:
    """The report's calibration figures — ECE raw/Platt/isotonic, the reliability bins, the
    frontier along the confidence cut with its fact coverage, and CRC at α = 0.10 — from the
    gold rows, their facts and quotes (`_gold_facts`) and the confidences' counts
    (`rollups_confidences`): `calibration._calibration`, the report's own code."""
    supported = (rollups.gold_verdict == Verdict.SUPPORTED.value).astype(float)
    judged = ~np.isnan(rollups.gold_score)
    links, facts = _gold_facts(rollups)
    block, _ = _calibration(
        confidence=rollups.gold_confidence[judged],
        supported=supported[judged],
        answer_ids=rollups.gold_answer[judged],
        claim_ids=rollups.gold_claim[judged],
        judged_confidence=judged_confidence,
        grounded_links=links,
        facts=facts,
    )
    # The report's rule, the report's code: strata audited at different rates leave these
    # figures unshown (each is an unweighted average over the audited claims), with the reason.
    audit = SimpleNamespace(
        weights=None,
        strata=rollups.gold_stratum[judged],
        audited=np.ones(int(judged.sum()), dtype=bool),
        sizes=rollups.sizes,
    )
    return calibration_fields(block, audit)
