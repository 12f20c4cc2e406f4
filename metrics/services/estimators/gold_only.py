"""Gold only: the audit sample alone, under the audit's design (Wilson interval, clustered by
answer and stratified — `metrics.services.audit_design.design_rate`)."""

from metrics.services.estimators import Estimator, EstimatorInputs, register
from metrics.services.judged import judged_rate


def gold_only_block(inputs: EstimatorInputs) -> dict:
    rate = judged_rate(inputs.judged, inputs.gold01)
    return {
        "value": rate["value"],
        "ci": rate["ci"],
        "n": inputs.judged.n_audited,
        "method": "audit sample alone, Wilson interval (95%)",
        **{k: rate[k] for k in ("design_effect", "answers", "strata", "unseen_share")},
        "interval_method": rate["interval_method"],
    }


register(
    Estimator(
        key="gold_only_faithfulness",
        choice="gold_only",
        label="Gold only (audit sample)",
        card_label="Faithfulness, gold only (audit sample)",
        design_label="Gold-only faithfulness",
        short="gold only",
        term="gold_only",
        rank=0,
        compute=gold_only_block,
        detail=lambda block: f"n = {block.get('n')}",
    )
)
