"""Correctness against the ground truth beside faithfulness (issue 27, item 5): the report's
`ground_truth` key, present only when some claim has a ground truth (a claim of an answer a
system under test gave to a test question).

A claim's correctness is its analysts' mark first (the majority of their yes/no marks; a tie
or only "unknown" is no mark), else the automatic check (testsets' TruthCheck: CORRECT /
INCORRECT / NOT_ADDRESSED against the item's answer and quotes). Unfaithful claims are then
partitioned into hallucination (unfaithful and incorrect) and self-knowledge (unfaithful but
correct); the unfaithful claims the ground truth does not address are counted apart. Every
rate is over all the claims of its scope (the claims with a ground truth, or those of a risk
class) and is a design rate as every rate of the report:

- `gold`: over the gold claims, under the audit's design (`rates._scope_rate`: clustered by
  answer, stratified, the design's weights);
- `judge`: over the claims the report's judge verified, a census of them clustered by answer
  (as the citation check's rate): the judge's figures, not audited ones.
"""

import numpy as np

from annotate.models import Project, RiskCategory
from annotate.vocabulary import Verdict
from metrics import selectors
from metrics.services.audit_design import design_rate
from metrics.services.inputs import _Data
from metrics.services.rates import _scope_rate, correctness_marks

CORRECT, INCORRECT, UNADDRESSED = 1, 0, -1
RULE = (
    "A claim's correctness is its analysts' mark (majority of yes/no) where they marked it, "
    "else the automatic check against the test item's ground-truth answer and quotes "
    "(offline lexical baseline: CORRECT, INCORRECT or NOT_ADDRESSED)."
)
METHOD = {
    "gold": "Over the gold claims that have a ground truth, under the audit's design "
    "(clustered by answer, stratified by design stratum).",
    "judge": "Over the claims the judge verified that have a ground truth: the judge's "
    "verdicts, not gold; a census of them clustered by answer.",
}


def _correctness(data: _Data, frame) -> tuple[np.ndarray, np.ndarray, dict]:
    """(has a ground truth, correctness code per claim, how many came from where)."""
    has_truth = np.isin(data.claim_ids, frame["claim_id"].to_numpy())
    automatic = frame.set_index("claim_id")["truth"]
    checked = automatic.reindex(data.claim_ids).fillna("").to_numpy(dtype=object)
    code = np.full(data.claim_ids.size, UNADDRESSED, dtype=np.int64)
    code[checked == "CORRECT"] = CORRECT
    code[checked == "INCORRECT"] = INCORRECT
    marked, yes = correctness_marks(data)
    marked &= has_truth
    code[marked] = np.where(yes[marked], CORRECT, INCORRECT)
    sources = {
        "analyst": int(marked.sum()),
        "automatic": int((has_truth & ~marked & (checked != "")).sum()),
        "unchecked": int((has_truth & ~marked & (checked == "")).sum()),
    }
    return has_truth, code, sources


def _figures(scope, sampled, supported, code, rate) -> dict:
    """Faithfulness, correctness, hallucination and self-knowledge over `sampled & scope`."""
    unfaithful = ~supported
    inside = sampled & scope
    return {
        "claims": int(inside.sum()),
        "faithfulness": rate(supported, inside, scope),
        "correctness": rate(code == CORRECT, inside, scope),
        "hallucination": rate(unfaithful & (code == INCORRECT), inside, scope),
        "self_knowledge": rate(unfaithful & (code == CORRECT), inside, scope),
        "counts": {
            "unfaithful": int((inside & unfaithful).sum()),
            "hallucination": int((inside & unfaithful & (code == INCORRECT)).sum()),
            "self_knowledge": int((inside & unfaithful & (code == CORRECT)).sum()),
            "unfaithful_not_addressed": int((inside & unfaithful & (code == UNADDRESSED)).sum()),
            "correct": int((inside & (code == CORRECT)).sum()),
            "incorrect": int((inside & (code == INCORRECT)).sum()),
            "not_addressed": int((inside & (code == UNADDRESSED)).sum()),
        },
    }


def _source_block(data, has_truth, sampled, supported, code, rate, method) -> dict:
    risk = data.claims["risk_category"].to_numpy()
    block = _figures(has_truth, sampled, supported, code, rate)
    block["method"] = method
    block["by_risk_category"] = {
        category: _figures(has_truth & (risk == category), sampled, supported, code, rate)
        for category in RiskCategory.values
        if (has_truth & sampled & (risk == category)).any()
    }
    return block


def ground_truth_block(*, project: Project, data: _Data, judged=None) -> dict | None:
    """The `ground_truth` report key, or None when no claim has a ground truth."""
    has_truth, code, sources = _correctness(data, selectors.ground_truth_columns(project=project))
    if not has_truth.any():
        return None
    gold = data.claims["gold"].to_numpy()

    def gold_rate(outcome, sampled, scope):
        return _scope_rate(data, outcome, sampled, scope)

    block = {
        "claims_with_ground_truth": int(has_truth.sum()),
        "correctness_source": sources,
        "rule": RULE,
        "gold": _source_block(
            data,
            has_truth,
            gold >= 0,
            gold == Verdict.SUPPORTED.code,
            code,
            gold_rate,
            METHOD["gold"],
        ),
    }
    if judged is not None and judged.n_judged:
        verdict = np.full(data.claim_ids.size, -1, dtype=np.int64)
        verdict[judged.position] = judged.judge_codes
        answer_ids = data.answer_ids()

        def judge_rate(outcome, sampled, scope):
            return design_rate(outcome[sampled], answer_ids[sampled])

        block["judge"] = _source_block(
            data,
            has_truth,
            verdict >= 0,
            verdict == Verdict.SUPPORTED.code,
            code,
            judge_rate,
            METHOD["judge"],
        )
    return block
