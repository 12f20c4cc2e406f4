"""Abstention rate (split by answerable) and coverage: marked facts grounded by gold-SUPPORTED
claims whose evidence quote overlaps the fact, with F1 against faithfulness."""

import math

import numpy as np
import pandas as pd

from annotate.vocabulary import Verdict
from metrics import stats
from metrics.services.audit_design import design_rate
from metrics.services.common import _proportion
from metrics.services.inputs import _Data

COVERAGE_BY_TAG = (
    "Coverage by claim tag: facts belong to answers, tags to claims, so a tag's coverage is "
    "over the marked facts of the answers that have at least one claim with the tag, grounded "
    "by any gold-SUPPORTED claim of those answers (whatever its tags); F1 is the harmonic mean "
    "of that coverage and the faithfulness of the tag's own claims."
)
COVERAGE_BY_RISK_CATEGORY = (
    "Coverage by risk category: the marked facts of that category's answers grounded by a "
    "gold-SUPPORTED claim; F1 is the harmonic mean of it and the category's faithfulness."
)


def _abstention(answers: pd.DataFrame) -> dict:
    """Abstention rate, overall and split by whether the question was answerable from the pile."""
    out = {"rate": _proportion(answers["abstention"].sum(), len(answers)), "by_answerable": {}}
    for key in ("answerable", "unanswerable", "unknown"):
        part = answers[answers["answerable"] == key]
        out["by_answerable"][key] = _proportion(part["abstention"].sum(), len(part))
    out["abstentions"] = int(answers["abstention"].sum())
    out["answers"] = len(answers)
    return out


def _fact_links(data: _Data) -> pd.DataFrame:
    """(fact_id, claim_id) pairs: a gold-SUPPORTED claim's SUPPORTED-label quote overlaps the fact."""
    supported_ids = data.claim_ids[data.claims["gold"].to_numpy() == Verdict.SUPPORTED.code]
    return fact_links(data.evidence, data.facts, supported_ids)


def fact_links(evidence: pd.DataFrame, facts: pd.DataFrame, supported_ids) -> pd.DataFrame:
    """(fact_id, claim_id) pairs: a quote of `evidence` (claim_id, passage_id, start, end) of a
    claim in `supported_ids` (the gold-SUPPORTED claims) overlaps a fact of `facts` (fact_id,
    passage_id, start, end). The report's over every claim, the rollups' over gold alone."""
    evidence = evidence[evidence["claim_id"].isin(supported_ids)]
    if evidence.empty or facts.empty:
        return pd.DataFrame({"fact_id": [], "claim_id": []}, dtype=np.int64)
    evidence = evidence[["claim_id", "passage_id", "start", "end"]].astype({"passage_id": np.int64})
    pairs = facts[["fact_id", "passage_id", "start", "end"]].merge(
        evidence, on="passage_id", suffixes=("_fact", "_quote")
    )
    overlap = (pairs["start_quote"] < pairs["end_fact"]) & (
        pairs["end_quote"] > pairs["start_fact"]
    )
    return pairs.loc[overlap, ["fact_id", "claim_id"]].drop_duplicates()


def _coverage(facts: pd.DataFrame, grounded: np.ndarray, faithfulness: float) -> dict:
    n_facts = len(facts)
    is_grounded = np.isin(facts["fact_id"].to_numpy(), grounded)
    value = stats.coverage(grounded.tolist(), facts["fact_id"].tolist())
    f1 = stats.f1(faithfulness, value)
    # Facts of one answer are correlated like its claims: the interval is clustered by answer.
    rate = design_rate(is_grounded, facts["answer_id"].to_numpy())
    return {
        **rate,
        "value": value,
        "ci": rate["ci"] if n_facts else (math.nan, math.nan),
        "f1": f1,
        "measured": bool(n_facts),
    }
