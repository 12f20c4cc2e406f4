"""Claim rates over gold verdicts: faithfulness, contradiction, not-in-pile, hallucination,
self-knowledge and citation accuracy — for the project and per risk category and claim tag.

Every gold rate is design-based (`metrics.services.audit_design.design_rate`): clustered by
answer and stratified by the claims' design strata, weights N_h/N of the group's claims."""

import numpy as np
import pandas as pd

from annotate.models import RiskCategory
from annotate.vocabulary import VERDICT_VALUES, Verdict
from metrics import stats
from metrics.services.abstention_coverage import _abstention, _coverage
from metrics.services.audit_design import design_rate
from metrics.services.common import _newest_per_claim, _proportion
from metrics.services.inputs import _Data


def _scope_rate(data: _Data, outcome: np.ndarray, sampled: np.ndarray, scope: np.ndarray) -> dict:
    """A design rate of `outcome` (per report claim) over the `sampled` claims, with the strata
    sizes N_h counted over `scope` (the group the rate describes)."""
    design = data.design
    return design_rate(
        outcome[sampled],
        data.answer_ids()[sampled],
        design.stratum[sampled],
        design.sizes(scope),
        weights=None if design.weight is None else design.weight[sampled],
        names=design.names,
        census=design.census is not None,
    )


def _verdict_rates(data: _Data, scope: np.ndarray) -> dict:
    """Counts, pooled rates and per-answer rates of the gold claims in `scope`."""
    gold = data.claims["gold"].to_numpy()
    selected = scope & (gold >= 0)
    codes = gold[selected]
    answer_ids = data.answer_ids()[selected]
    verdicts = (
        np.asarray(VERDICT_VALUES, dtype=object)[codes] if codes.size else np.array([], object)
    )
    pooled = stats.claim_rates(verdicts)
    per_answer = stats.answer_rates(answer_ids, verdicts)
    n = pooled["n"]

    def rate(outcome):
        return _scope_rate(data, outcome, selected, scope)

    return {
        "claims": {
            Verdict.SUPPORTED: pooled[Verdict.SUPPORTED],
            Verdict.CONTRADICTED: pooled[Verdict.CONTRADICTED],
            Verdict.NOT_IN_PILE: pooled[Verdict.NOT_IN_PILE],
            "total": n,
        },
        "faithfulness": {
            "pooled": rate(gold == Verdict.SUPPORTED.code),
            "mean_per_answer": {
                "value": per_answer["mean_per_answer_faithfulness"],
                "answers": per_answer["n_answers"],
            },
        },
        "contradiction_rate": rate(gold == Verdict.CONTRADICTED.code),
        "not_in_pile_rate": rate(gold == Verdict.NOT_IN_PILE.code),
        "hallucination_rate": rate((gold >= 0) & (gold != Verdict.SUPPORTED.code)),
        "answers_with_unsupported_rate": _proportion(
            per_answer["answers_with_unsupported"], per_answer["n_answers"]
        ),
    }


def correctness_marks(data: _Data) -> tuple[np.ndarray, np.ndarray]:
    """(marked, marked correct) per report claim: a claim's mark is the majority of its
    analysts' yes/no marks; a tie or only "unknown" marks leave it unmarked."""
    marks = data.labels[data.labels["correct"].isin(["yes", "no"])]
    votes = (
        marks.assign(vote=np.where(marks["correct"] == "yes", 1, -1))
        .groupby("claim_id")["vote"]
        .sum()
    )
    decided = votes[votes != 0]
    marked = np.isin(data.claim_ids, decided.index.to_numpy())
    yes = np.isin(data.claim_ids, decided.index[decided > 0].to_numpy())
    return marked, yes


def _self_knowledge(data: _Data, mask: np.ndarray) -> dict:
    """Unfaithful claims marked correct anyway (self-knowledge) vs incorrect (hallucination).

    A claim's mark is the majority of its analysts' yes/no marks; a tie or only "unknown"
    marks leave it unknown. Both rates are over all gold claims in `mask`, as DESIGN.md defines.
    """
    gold = data.claims["gold"].to_numpy()
    in_scope = mask & (gold >= 0)
    unfaithful = in_scope & (gold != Verdict.SUPPORTED.code)
    marked, yes = correctness_marks(data)
    marked_yes, marked_no = unfaithful & marked & yes, unfaithful & marked & ~yes
    correct, incorrect = int(marked_yes.sum()), int(marked_no.sum())
    return {
        "unfaithful_claims": int(unfaithful.sum()),
        "self_knowledge": _scope_rate(data, marked_yes, in_scope, mask),
        "hallucination": _scope_rate(data, marked_no, in_scope, mask),
        "unmarked": int(unfaithful.sum()) - correct - incorrect,
    }


def _citation(data: _Data, citations: pd.DataFrame, mask: np.ndarray) -> dict:
    cited_ids = data.claim_ids[data.cited & mask]
    measured = not citations.empty
    newest = _newest_per_claim(citations)
    newest = newest[newest["claim_id"].isin(cited_ids)] if len(newest) else newest
    # Cited claims the citation run checked, clustered by answer (the run is a census of the
    # cited claims, not a gold sample: no strata).
    checked = np.isin(data.claim_ids, newest["claim_id"].to_numpy())
    supported_ids = newest.loc[newest["verdict"] == Verdict.SUPPORTED, "claim_id"].to_numpy()
    out = design_rate(np.isin(data.claim_ids[checked], supported_ids), data.answer_ids()[checked])
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
    block = _verdict_rates(data, mask)
    block["self_knowledge"] = _self_knowledge(data, mask)
    block["citation_accuracy"] = _citation(data, citations, mask)
    block["claims_without_gold"] = int((mask & (gold < 0)).sum())
    return block


def _project_rates(data: _Data) -> dict:
    """The project's rates over its gold claims, with how many claims have no gold yet."""
    gold = data.claims["gold"].to_numpy()
    gold_mask = gold >= 0
    rates = _verdict_rates(data, np.ones(gold.size, dtype=bool))
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
