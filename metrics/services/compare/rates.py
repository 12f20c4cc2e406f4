"""The compared rates, each B − A from gold alone and with PPI++, headline chosen as the report
chooses its own; and faithfulness by risk category."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from annotate.vocabulary import Verdict
from metrics.services.compare.pair import _Pair
from metrics.stats.paired import (
    PairedEstimate,
    paired_design_difference,
    paired_gold_difference,
    paired_ppi_difference,
)
from metrics.stats.prevalence import headline_estimate


@dataclass(frozen=True)
class Rate:
    key: str
    title: str
    unit: str  # "claim" or "answer"
    higher_is_better: bool
    judged: bool = True  # False: known for every unit without a verdict (abstention)


RATES = (
    Rate("faithfulness", "faithfulness (pooled over claims)", "claim", True),
    Rate("faithfulness_per_answer", "faithfulness (mean per answer)", "answer", True),
    Rate("contradiction_rate", "contradiction rate", "claim", False),
    Rate("unsupported_answer_share", "answers with an unsupported claim", "answer", False),
    Rate("abstention_rate", "abstention rate", "answer", False, judged=False),
)


def _estimates(
    gold, judge, side, question, *, judged: bool, stratum=None, weight=None
) -> dict[str, Any]:
    """`stratum` and `weight` (per unit): the audit's design; None for a simple random
    sample (today's estimators)."""
    has_gold = ~np.isnan(gold)
    designed = stratum is not None
    if designed:
        gold_only = paired_design_difference(gold, side, question, stratum=stratum, weight=weight)
    else:
        gold_only = paired_gold_difference(gold[has_gold], side[has_gold], question[has_gold])
    ppi: PairedEstimate | None = None
    if judged:
        has_judge = ~np.isnan(judge)
        covers_both = has_judge.any() and {0, 1} <= set(side[has_judge].tolist())
        if covers_both and designed:
            ppi = paired_design_difference(
                gold[has_judge],
                side[has_judge],
                question[has_judge],
                judge=judge[has_judge],
                stratum=stratum[has_judge],
                weight=weight[has_judge],
            )
        elif covers_both:
            ppi = paired_ppi_difference(
                gold[has_judge], judge[has_judge], side[has_judge], question[has_judge]
            )
    head = headline_estimate(
        gold_only.as_dict() if math.isfinite(gold_only.value) else None,
        None,
        ppi.as_dict() if ppi is not None and math.isfinite(ppi.value) else None,
    )
    return {
        "gold_only": gold_only.as_dict(),
        "ppi": ppi.as_dict() if ppi is not None else None,
        "headline": {
            "choice": head["choice"],
            "value": head["value"],
            "ci": list(head["ci"]),
            "reason": head["reason"],
        },
    }


def _rate_block(pair: _Pair, rate: Rate) -> dict[str, Any]:
    if rate.unit == "claim":
        verdict = Verdict.CONTRADICTED if rate.key == "contradiction_rate" else Verdict.SUPPORTED
        units = pair.claim_units(verdict)
        stratum, weight = pair.claim_design()
    else:
        units = pair.answer_units(rate.key)
        stratum, weight = pair.answer_design()
    if not rate.judged:
        # Observed on every answer: no judge, no sample, no design; "gold" is the answer's
        # own flag.
        gold, _judge, side, question = units
        block = _estimates(gold, gold, side, question, judged=False)
    else:
        block = _estimates(*units, judged=True, stratum=stratum, weight=weight)
    block.update(title=rate.title, unit=rate.unit, higher_is_better=rate.higher_is_better)
    return block


def _by_risk_category(pair: _Pair) -> list[dict[str, Any]]:
    """Faithfulness (pooled) B − A per risk category of the shared questions."""
    gold, judge, side, question = pair.claim_units(Verdict.SUPPORTED)
    stratum, weight = pair.claim_design()
    risk = pd.Series(question).map(pair.risk_of).fillna("none").to_numpy()
    rows = []
    for category in sorted(set(pair.risk_of.tolist())):
        mask = risk == category
        block = _estimates(
            gold[mask],
            judge[mask],
            side[mask],
            question[mask],
            judged=True,
            stratum=None if stratum is None else stratum[mask],
            weight=None if weight is None else weight[mask],
        )
        rows.append(
            {
                "risk_category": category,
                "questions": int((pair.risk_of == category).sum()),
                **block,
            }
        )
    return rows
