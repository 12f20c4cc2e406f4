"""Claim rates over gold verdicts: faithfulness, contradiction, not-in-pile, hallucination,
self-knowledge and citation accuracy — for the project and per risk category and claim tag."""

import numpy as np
import pandas as pd

from annotate.models import RiskCategory
from metrics import stats
from metrics.services.abstention_coverage import _abstention, _coverage
from metrics.services.common import SUPPORTED, VERDICTS, _newest_per_claim, _proportion
from metrics.services.inputs import _Data


def _verdict_rates(codes: np.ndarray, answer_ids: np.ndarray) -> dict:
    """Counts, pooled rates and per-answer rates of one set of verdict codes (0, 1, 2)."""
    verdicts = np.asarray(VERDICTS, dtype=object)[codes] if codes.size else np.array([], object)
    pooled = stats.claim_rates(verdicts)
    per_answer = stats.answer_rates(answer_ids, verdicts)
    n = pooled["n"]
    return {
        "claims": {
            "SUPPORTED": pooled["SUPPORTED"],
            "CONTRADICTED": pooled["CONTRADICTED"],
            "NOT_IN_PILE": pooled["NOT_IN_PILE"],
            "total": n,
        },
        "faithfulness": {
            "pooled": _proportion(pooled["SUPPORTED"], n),
            "mean_per_answer": {
                "value": per_answer["mean_per_answer_faithfulness"],
                "answers": per_answer["n_answers"],
            },
        },
        "contradiction_rate": _proportion(pooled["CONTRADICTED"], n),
        "not_in_pile_rate": _proportion(pooled["NOT_IN_PILE"], n),
        "hallucination_rate": _proportion(n - pooled["SUPPORTED"], n),
        "answers_with_unsupported_rate": _proportion(
            per_answer["answers_with_unsupported"], per_answer["n_answers"]
        ),
    }


def _self_knowledge(data: _Data, mask: np.ndarray) -> dict:
    """Unfaithful claims marked correct anyway (self-knowledge) vs incorrect (hallucination).

    A claim's mark is the majority of its analysts' yes/no marks; a tie or only "unknown"
    marks leave it unknown. Both rates are over all gold claims in `mask`, as DESIGN.md defines.
    """
    gold = data.claims["gold"].to_numpy()
    in_scope = mask & (gold >= 0)
    n = int(in_scope.sum())
    unfaithful_ids = data.claim_ids[in_scope & (gold != SUPPORTED)]
    marks = data.labels[
        data.labels["claim_id"].isin(unfaithful_ids) & data.labels["correct"].isin(["yes", "no"])
    ]
    votes = (
        marks.assign(vote=np.where(marks["correct"] == "yes", 1, -1))
        .groupby("claim_id")["vote"]
        .sum()
    )
    correct = int((votes > 0).sum())
    incorrect = int((votes < 0).sum())
    return {
        "unfaithful_claims": int(unfaithful_ids.size),
        "self_knowledge": _proportion(correct, n),
        "hallucination": _proportion(incorrect, n),
        "unmarked": int(unfaithful_ids.size) - correct - incorrect,
    }


def _citation(data: _Data, citations: pd.DataFrame, mask: np.ndarray) -> dict:
    cited_ids = data.claim_ids[data.cited & mask]
    measured = not citations.empty
    newest = _newest_per_claim(citations)
    newest = newest[newest["claim_id"].isin(cited_ids)] if len(newest) else newest
    supported = int((newest["verdict"] == "SUPPORTED").sum())
    out = _proportion(supported, len(newest))
    out.update(
        {
            "cited_claims": int(cited_ids.size),
            "checked": len(newest),
            "measured": measured,
            "status": "measured" if measured else "not measured",
        }
    )
    return out


def _group_block(data: _Data, mask: np.ndarray, grounded: np.ndarray, citations) -> dict:
    """Every rate for the claims in `mask` (a risk category or a claim tag)."""
    gold = data.claims["gold"].to_numpy()
    selected = mask & (gold >= 0)
    block = _verdict_rates(gold[selected], data.claims["answer_id"].to_numpy()[selected])
    block["self_knowledge"] = _self_knowledge(data, mask)
    block["citation_accuracy"] = _citation(data, citations, mask)
    block["claims_without_gold"] = int((mask & (gold < 0)).sum())
    return block


def _project_rates(data: _Data) -> dict:
    """The project's rates over its gold claims, with how many claims have no gold yet."""
    gold = data.claims["gold"].to_numpy()
    gold_mask = gold >= 0
    answer_ids = data.claims["answer_id"].to_numpy()
    rates = _verdict_rates(gold[gold_mask], answer_ids[gold_mask])
    rates["claims"]["in_project"] = int(data.claim_ids.size) + data.claims_in_abstentions
    rates["claims"]["without_gold"] = int((~gold_mask).sum())
    rates["claims"]["in_abstentions"] = data.claims_in_abstentions
    return rates


def _by_risk_category(data: _Data, grounded: np.ndarray, citations: pd.DataFrame) -> dict:
    """Every rate, the abstention rate and coverage of each risk category that has answers."""
    risk = data.claims["risk_category"].to_numpy()
    out = {}
    for category in RiskCategory.values:
        mask = risk == category
        answers = data.answers[data.answers["risk_category"] == category]
        if not mask.any() and answers.empty:
            continue
        block = _group_block(data, mask, grounded, citations)
        block["abstention"] = _abstention(answers)
        facts = data.facts[data.facts["risk_category"] == category]
        block["coverage"] = _coverage(facts, grounded, block["faithfulness"]["pooled"]["value"])
        out[category] = block
    return out


def _by_tag(data: _Data, grounded: np.ndarray, citations: pd.DataFrame) -> dict:
    """Every rate and coverage of each claim tag (coverage over its claims' answers' facts)."""
    out = {}
    claim_answers = data.claims["answer_id"].to_numpy()
    for tag, mask in data.tag_masks.items():
        block = _group_block(data, mask, grounded, citations)
        tagged_answers = np.unique(claim_answers[mask])
        facts = data.facts[data.facts["answer_id"].isin(tagged_answers)]
        block["coverage"] = _coverage(facts, grounded, block["faithfulness"]["pooled"]["value"])
        block["coverage"]["answers"] = int(tagged_answers.size)
        out[tag] = block
    return out
