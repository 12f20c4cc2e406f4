"""PPI++: the judge's P(SUPPORTED) on every judged claim, rectified by its errors on the audit
sample, power-tuned (λ); stratified and clustered, or active inference with each label
weighted by 1/π when the active queue drew the labels."""

import numpy as np

from metrics import format as fmt
from metrics import stats
from metrics.services.audit_design import estimate_fields, named_strata
from metrics.services.estimators import Estimator, EstimatorInputs, register
from metrics.services.judged import Judged


def _ppi(judged: Judged, gold01: np.ndarray, judge_score: np.ndarray) -> stats.DesignEstimate:
    """PPI++ under the audit's design: stratified and clustered (`design_ppi_mean`), or, when
    the labels were drawn by the active queue, active inference within the design strata with
    each label weighted by 1/π (`stratified_active_ppi_mean`)."""
    audited = judged.audited
    strata, _ = named_strata(judged.strata, None, judged.names)
    if judged.weights is None:
        return stats.design_ppi_mean(
            gold01,
            judge_score[audited],
            judge_score[~audited],
            judged.answer_ids[audited],
            judged.answer_ids[~audited],
            strata[audited],
            strata[~audited],
        )
    y = np.zeros(judged.n_judged)
    y[audited] = gold01
    return stats.stratified_active_ppi_mean(
        y,
        audited,
        judge_score,
        judged.weights,
        strata=strata,
        cluster=judged.answer_ids,
        census=judged.census,
    )


def _stratum_lambdas(lambdas: dict) -> float | dict:
    """One stratum: its λ, as before; several: λ per stratum code."""
    if len(lambdas) == 1:
        return next(iter(lambdas.values()))
    return {str(key): value for key, value in lambdas.items()}


def ppi_block(inputs: EstimatorInputs) -> dict:
    ppi = _ppi(inputs.judged, inputs.gold01, inputs.judge_score)
    lam = ppi.extra.get("lambda")
    return {
        "value": ppi.value,
        "ci": ppi.ci,
        "lambda": lam if not isinstance(lam, dict) else _stratum_lambdas(lam),
        "method": "PPI++ (power-tuned prediction-powered inference, 95%)",
        **estimate_fields(ppi),
    }


def _lambda_detail(block) -> str:
    lam = block.get("lambda")
    return f"λ = {fmt.number(lam, 2)}" if not isinstance(lam, dict) else "λ per stratum"


register(
    Estimator(
        key="ppi_faithfulness",
        choice="ppi",
        label="PPI++ (prediction-powered)",
        card_label="Faithfulness, PPI++ (prediction-powered)",
        design_label="PPI++ faithfulness",
        short="PPI++",
        term="ppi",
        rank=2,
        compute=ppi_block,
        detail=_lambda_detail,
    )
)
