"""The design-based API the report will be wired against: names, parameters, result type, docs."""

import dataclasses
import inspect

import pytest

from metrics import stats
from metrics.stats.estimate import Estimate
from metrics.stats.paired import PairedEstimate, paired_gold_difference
from metrics.stats.ranking import AucEstimate

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
    assert {"value", "lower", "upper", "se", "method", "design_effect", "n_clusters"} <= fields
    assert "unseen_share" in fields
    est = stats.design_proportion([1, 0, 1, 1], [1, 1, 2, 2])
    assert est.ci == (est.lower, est.upper)
    assert est.as_dict()["ci"] == est.ci
    with pytest.raises(dataclasses.FrozenInstanceError):
        est.value = 0.5  # type: ignore[misc]


def test_every_estimate_record_is_one_family_with_one_set_of_names():
    """Issue 31 item 2: the design, paired and AUC records are `Estimate`s — a reader asks any of
    them for `.lower`, `.upper`, `.se`, `.n`, `.method` — while the report keeps its published
    keys ("low", "high", "std_error", "n_questions")."""
    base = {f.name for f in dataclasses.fields(Estimate)}
    for family in (stats.DesignEstimate, PairedEstimate, AucEstimate):
        assert issubclass(family, Estimate)
        names = {f.name for f in dataclasses.fields(family)}
        assert base <= names
        assert not names & {"low", "high", "std_error", "std_error_unpaired"}
    est = stats.design_proportion([1, 0, 1, 1], [1, 1, 2, 2])
    published = est.as_dict()
    assert (published["low"], published["high"], published["std_error"]) == (
        est.lower,
        est.upper,
        est.se,
    )
    pair = paired_gold_difference([1, 0, 1, 1], [0, 1, 0, 1], ["q1", "q1", "q2", "q2"])
    assert pair.as_dict()["n_questions"] == pair.n == 2
