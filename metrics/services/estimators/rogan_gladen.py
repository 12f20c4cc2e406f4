"""Rogan–Gladen: the judge's naive rate corrected by its audited sensitivity and specificity,
with the Lang–Reiczigel interval carrying the audit's uncertainty, under the audit's design
(`metrics.stats.design_rogan_gladen`)."""

import math

import numpy as np

from metrics import stats
from metrics.services.audit_design import estimate_fields
from metrics.services.estimators import Estimator, EstimatorInputs, register
from metrics.services.judged import fpc, gold_weights, named


def rogan_gladen_block(inputs: EstimatorInputs) -> dict:
    judged, sesp = inputs.judged, inputs.sesp
    n_judged, audited = judged.n_judged, judged.audited
    judged_supported = int(np.sum(inputs.judge01))
    if n_judged and sesp["sensitivity"].n and sesp["specificity"].n:
        strata_named, sizes = named(judged, judged.strata[audited])
        rg = stats.design_rogan_gladen(
            inputs.judge01,
            judged.answer_ids,
            inputs.gold01,
            inputs.judge01[audited],
            judged.answer_ids[audited],
            strata_named,
            sizes,
            weights_gold=gold_weights(judged),
            fpc=fpc(judged),
        )
    else:
        rg = None
    value = (
        stats.rogan_gladen(
            judged_supported / n_judged, sesp["sensitivity"].value, sesp["specificity"].value
        )
        if n_judged
        else math.nan
    )
    block = {
        "value": value,
        "ci": rg.ci if rg is not None and math.isfinite(value) else (math.nan,) * 2,
        "method": "Rogan–Gladen, Lang–Reiczigel adjusted interval (95%)",
    }
    if rg is not None:
        block.update(estimate_fields(rg))
    return block


register(
    Estimator(
        key="debiased_faithfulness",
        choice="rogan_gladen",
        label="Rogan–Gladen (debiased)",
        card_label="Faithfulness, Rogan–Gladen (debiased)",
        design_label="Rogan–Gladen faithfulness",
        short="Rogan–Gladen",
        term="rogan_gladen",
        rank=1,
        compute=rogan_gladen_block,
    )
)
