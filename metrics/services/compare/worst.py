"""The shared questions B got worse on, first, each with both answers and their claims."""

from __future__ import annotations

from typing import Any

import pandas as pd

from annotate.models import Answer, Claim
from annotate.vocabulary import Verdict
from metrics.services.compare.pair import _Pair


def _best_verdicts(claims: pd.DataFrame) -> pd.Series:
    """Each claim's gold verdict, else its judge verdict, else "" (unjudged)."""
    return claims["gold"].where(claims["gold"] != "", claims["judge"])


def _worst_questions(pair: _Pair, limit: int) -> list[dict[str, Any]]:
    """Shared questions by B − A of their faithfulness (gold where there is gold, else the
    judge), the ones B got worse on first, each with both answers and their claims."""
    claims = pair.claims.assign(best=_best_verdicts(pair.claims))
    known = claims[claims["best"] != ""]
    if known.empty:
        return []
    rates = (
        known.assign(s=known["best"] == Verdict.SUPPORTED)
        .groupby(["question_key", "side"])["s"]
        .mean()
        .unstack("side")
    )
    rates = rates.dropna()
    if rates.empty:
        return []
    rates["delta"] = rates[1] - rates[0]
    rates = rates.sort_values(["delta"], kind="stable").head(limit)
    answer_ids = pair.answers[pair.answers["question_key"].isin(rates.index)]
    texts = {
        row["pk"]: row
        for row in Answer.objects.filter(pk__in=answer_ids["answer_id"].tolist()).values(
            "pk", "external_id", "question", "text", "abstention"
        )
    }
    claim_texts = dict(Claim.objects.filter(answer_id__in=list(texts)).values_list("id", "text"))
    rows = []
    for question_key, row in rates.iterrows():
        sides = []
        for side in (0, 1):
            mine = answer_ids[
                (answer_ids["question_key"] == question_key) & (answer_ids["side"] == side)
            ]
            answers = []
            for answer_id in mine["answer_id"].tolist():
                answer = texts[answer_id]
                answer_claims = claims[claims["answer_id"] == answer_id]
                answers.append(
                    {
                        "answer_id": answer["external_id"],
                        "text": answer["text"],
                        "claims": [
                            {
                                "text": claim_texts.get(claim_id, ""),
                                "gold": gold or None,
                                "judge": judge or None,
                            }
                            for claim_id, gold, judge in answer_claims[
                                ["claim_id", "gold", "judge"]
                            ].itertuples(index=False)
                        ],
                    }
                )
            sides.append({"faithfulness": float(row[side]), "answers": answers})
        first = texts[int(answer_ids[answer_ids["question_key"] == question_key].iloc[0, 0])]
        rows.append(
            {
                "question_key": question_key,
                "question": first["question"],
                "risk_category": pair.risk_of.get(question_key, "none"),
                "delta": float(row["delta"]),
                "a": sides[0],
                "b": sides[1],
            }
        )
    return rows
