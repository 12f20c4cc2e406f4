"""The design-based API the report will be wired against: names, parameters, result type, docs."""

import dataclasses
import inspect

import pytest

from metrics import stats

API = {
    "design_proportion": ["outcome", "answer_ids", "strata", "stratum_sizes", "confidence"],
    "design_sensitivity_specificity": [
        "gold",
        "judge",
        "answer_ids",
        "strata",
        "stratum_sizes",
        "confidence",
    ],
    "two_phase_rate": ["gold", "judge_on_gold", "judge_counts", "answer_ids", "confidence"],
    "design_rogan_gladen": [
        "judge_all",
        "answer_ids_all",
        "gold",
        "judge_on_gold",
        "answer_ids_gold",
        "strata",
        "stratum_sizes",
        "confidence",
    ],
    "design_ppi_mean": [
        "gold",
        "judge_on_gold",
        "judge_on_rest",
        "answer_ids_gold",
        "answer_ids_rest",
        "strata_gold",
        "strata_rest",
        "confidence",
    ],
    "design_kappa": ["gold", "judge", "answer_ids", "confidence"],
    "cluster_bootstrap": ["numerator", "denominator", "answer_ids", "confidence"],
}


@pytest.mark.parametrize(("name", "params"), sorted(API.items()))
def test_design_api_names_parameters_and_docs(name, params):
    fn = getattr(stats, name)
    assert name in stats.__all__
    sig = inspect.signature(fn)
    positional = [
        p.name
        for p in sig.parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    assert positional == params
    assert sig.parameters["confidence"].default == 0.95
    doc = inspect.getdoc(fn) or ""
    assert "Source" in doc
    assert "Formula" in doc or "formula" in doc or "Answers are resampled" in doc
    assert name in (stats.__doc__ or ""), f"{name} missing from the package table"


def test_design_estimate_is_a_small_frozen_result():
    fields = {f.name for f in dataclasses.fields(stats.DesignEstimate)}
    assert {"value", "low", "high", "method", "design_effect", "n_clusters", "unseen_share"} <= (
        fields
    )
    est = stats.design_proportion([1, 0, 1, 1], [1, 1, 2, 2])
    assert est.ci == (est.low, est.high)
    assert est.as_dict()["ci"] == est.ci
    with pytest.raises(dataclasses.FrozenInstanceError):
        est.value = 0.5  # type: ignore[misc]
