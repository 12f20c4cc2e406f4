"""Faithfulness of every system of a project, in the order of their versions: the trend a lead
reads across releases (the comparison page's chart and table).

Per system, over the claims of its answers that are not abstentions: gold only (the design
estimator clustered by answer, `metrics.stats.design_proportion`) and, with a judge that judged
its claims, PPI++ clustered by answer (`design_ppi_mean`); the headline is the narrowest valid
interval (`headline_estimate`), as the report's. Gold is taken as a simple random sample of
each system's claims.
"""

from __future__ import annotations

import re
from typing import Any

from annotate.models import Project
from annotate.vocabulary import VERDICT_VALUES, Verdict
from judges.models import Judge
from metrics import selectors
from metrics.services.common import json_safe
from metrics.services.compare.pair import _judge_verdicts
from metrics.services.compare.systems import system_label
from metrics.stats.design import design_ppi_mean, design_proportion
from metrics.stats.prevalence import headline_estimate

__all__ = ["systems_trend", "version_key"]


def version_key(version: str) -> tuple:
    """ "2024-07" < "2024-10", "v2" < "v10": digits compare as numbers, the rest as text."""
    return tuple(
        # isascii: "²".isdigit() is true, int("²") raises (and int() stops at 4,300 digits).
        (0, int(part), "")
        if part.isascii() and part.isdigit() and len(part) < 1000
        else (1, 0, part)
        for part in re.split(r"(\d+)", str(version))
        if part
    )


def _estimate(block) -> dict:
    return {"value": block.value, "ci": [block.lower, block.upper], "method": block.method}


def systems_trend(*, project: Project, judge: Judge | None = None) -> list[dict[str, Any]]:
    """One row per system (by name, then version order): its claims, gold claims, and the
    headline faithfulness with its interval and method."""
    systems = sorted(
        selectors.systems_for_project(project=project),
        key=lambda s: (s.name, version_key(s.version), s.pk),
    )
    if not systems:
        return []
    ids = [s.pk for s in systems]
    answers = selectors.system_answer_columns(project=project, system_ids=ids)
    claims = selectors.system_claim_columns(project=project, system_ids=ids)
    claims = claims.merge(answers[["answer_id", "system_id", "abstention"]], on="answer_id")
    claims = claims[~claims["abstention"]]
    verdicts, judge_name, _model = _judge_verdicts(judge)
    claims = claims.merge(verdicts, on="claim_id", how="left")
    claims["judge"] = claims["judge"].astype(object).fillna("").astype(str)
    rows = []
    for system in systems:
        mine = claims[claims["system_id"] == system.pk]
        has_gold = mine["gold"].isin(VERDICT_VALUES).to_numpy()
        supported = (mine["gold"] == Verdict.SUPPORTED).to_numpy()
        answer_ids = mine["answer_id"].to_numpy()
        gold_only = design_proportion(supported[has_gold], answer_ids[has_gold])
        ppi = None
        judged = mine["judge"].isin(VERDICT_VALUES).to_numpy()
        if judge is not None and (judged & has_gold).any() and (judged & ~has_gold).any():
            said = (mine["judge"] == Verdict.SUPPORTED).to_numpy().astype(float)
            both = judged & has_gold
            rest = judged & ~has_gold
            ppi = design_ppi_mean(
                supported[both],
                said[both],
                said[rest],
                answer_ids_gold=answer_ids[both],
                answer_ids_rest=answer_ids[rest],
            )
        head = headline_estimate(
            _estimate(gold_only) if has_gold.any() else None,
            None,
            _estimate(ppi) if ppi is not None else None,
        )
        rows.append(
            {
                "system": system_label(system),
                "name": system.name,
                "version": system.version,
                "claims": int(len(mine)),
                "gold_claims": int(has_gold.sum()),
                "judge": judge_name,
                "gold_only": _estimate(gold_only) if has_gold.any() else None,
                "ppi": _estimate(ppi) if ppi is not None else None,
                "headline": {
                    "choice": head["choice"],
                    "value": head["value"],
                    "ci": list(head["ci"]),
                    "reason": head["reason"],
                },
            }
        )
    return json_safe(rows)


def trend_points(rows: list[dict]) -> list[tuple[str, float, float, float]]:
    """(label, value, low, high) of the rows with a headline, for the chart."""
    return [
        (row["system"], row["headline"]["value"], *row["headline"]["ci"])
        for row in rows
        if row["headline"]["choice"] and row["headline"]["value"] is not None
    ]
