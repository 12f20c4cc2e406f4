"""The release gate (metrics/services/gate.py): which figure it reads, its method and interval, its
refusals, each sentence whole."""

import pytest

from metrics.services.gate import GateError, gate_check


# gate.gate_check _11: a bad `on` names the choices.
def test_the_gate_refuses_an_unknown_side_naming_the_choices():
    with pytest.raises(GateError, match=r"^on: use one of lower, value, upper, got 'middle'$"):
        gate_check({}, minimum=0.9, on="middle")


# --- metrics.services.gate: the method a gate reports is the judge block's own -------------


def test_gate_on_the_judges_headline_reports_that_estimates_method_and_interval():
    report = {
        "project": {"slug": "p"},
        "judge": {
            "name": "j",
            "headline_estimate": "ppi",
            "ppi": {"value": 0.91, "ci": [0.88, 0.94], "method": "PPI++ clustered by answer"},
        },
        "faithfulness": {"pooled": {"value": 0.5, "ci": [0.4, 0.6]}},
    }
    result = gate_check(report, metric="faithfulness", minimum=0.9, on="lower")
    assert result["method"] == "PPI++ clustered by answer"
    assert result["figure"] == 0.91
    assert result["interval"] == [0.88, 0.94]
    assert result["judged_value"] == 0.88
    assert result["pass"] is False
    assert result["reason"] == "lower 0.8800 is below the minimum 0.9"


def test_gate_on_a_judge_block_without_method_names_the_estimate():
    report = {"judge": {"headline_estimate": "rogan_gladen", "rogan_gladen": {"value": 0.8}}}
    result = gate_check(report, metric="faithfulness", minimum=0.7, on="value")
    assert result["method"] == "rogan_gladen"
    assert result["pass"] is True
    assert result["reason"] == "value end 0.8000 meets the threshold"


# --- metrics.services.gate: a gold-only gate reports the report's own method sentence ---------


def test_gate_on_the_gold_figure_reports_the_reports_method_sentence():
    """gate `_figure` `_39` (`report.get("XXmethodXX")`: every gold-only gate said the default
    "gold claims, 95% Wilson interval" instead of the report's sentence, e.g. its clustering)."""
    from metrics.services.gate import gate_check

    report = {
        "faithfulness": {"pooled": {"value": 0.8, "ci": [0.7, 0.9]}},
        "method": {
            "faithfulness": "gold claims, clustered by answer, 95% Wilson interval at n_eff"
        },
    }
    result = gate_check(report, metric="faithfulness", minimum=0.75, on="lower")
    assert result["method"] == "gold claims, clustered by answer, 95% Wilson interval at n_eff"
    assert result["pass"] is False  # lower end 0.7 < 0.75
    no_method = gate_check({"faithfulness": report["faithfulness"]}, minimum=0.75, on="value")
    assert no_method["method"] == "gold claims, 95% Wilson interval"
    assert no_method["pass"] is True


def test_gate_names_the_judge_and_the_project_it_read():
    """gate `gate_check` `_111` (`report.get("JUDGE")`: the gate's result lost the judge's
    name that CI logs print)."""
    from metrics.services.gate import gate_check

    report = {
        "project": {"slug": "demo"},
        "judge": {"name": "baseline"},
        "faithfulness": {"pooled": {"value": 0.8, "ci": [0.7, 0.9]}},
        "computed_at": "2026-12-01T15:00:00+00:00",
    }
    result = gate_check(report, minimum=0.6, on="lower")
    assert (result["project"], result["judge"], result["computed_at"]) == (
        "demo",
        "baseline",
        "2026-12-01T15:00:00+00:00",
    )
    assert result["pass"] is True


# -- gate ----------------------------------------------------------------------------------------


def _report(**extra):
    report = {
        "project": {"slug": "p"},
        "computed_at": "T",
        "faithfulness": {"pooled": {"value": 0.9, "ci": [0.85, 0.95]}},
        "contradiction_rate": {"value": 0.05, "ci": [0.02, 0.1]},
        "method": {"contradiction_rate": "M-c"},
    }
    report.update(extra)
    return report


def _gate(
    passed,
    metric,
    on,
    minimum,
    maximum,
    figure,
    interval,
    judged,
    method,
    reason,
    judge=None,
    slug="p",
    at="T",
):
    return {
        "pass": passed,
        "metric": metric,
        "on": on,
        "min": minimum,
        "max": maximum,
        "figure": figure,
        "interval": interval,
        "judged_value": judged,
        "method": method,
        "reason": reason,
        "project": slug,
        "judge": judge,
        "computed_at": at,
    }


WILSON = "gold claims, 95% Wilson interval"


def test_gate_exactly_at_the_minimum_passes_just_above_fails():
    assert gate_check(_report(), minimum=0.85) == _gate(
        True,
        "faithfulness",
        "lower",
        0.85,
        None,
        0.9,
        [0.85, 0.95],
        0.85,
        WILSON,
        "lower end 0.8500 meets the threshold",
    )
    assert gate_check(_report(), minimum=0.86) == _gate(
        False,
        "faithfulness",
        "lower",
        0.86,
        None,
        0.9,
        [0.85, 0.95],
        0.85,
        WILSON,
        "lower 0.8500 is below the minimum 0.86",
    )


def test_gate_exactly_at_the_maximum_passes_just_below_fails():
    report = _report()
    assert gate_check(report, metric="contradiction_rate", maximum=0.1, on="upper") == _gate(
        True,
        "contradiction_rate",
        "upper",
        None,
        0.1,
        0.05,
        [0.02, 0.1],
        0.1,
        "M-c",
        "upper end 0.1000 meets the threshold",
    )
    assert gate_check(report, metric="contradiction_rate", maximum=0.09, on="upper") == _gate(
        False,
        "contradiction_rate",
        "upper",
        None,
        0.09,
        0.05,
        [0.02, 0.1],
        0.1,
        "M-c",
        "upper 0.1000 is above the maximum 0.09",
    )


def test_gate_on_the_value_failing_both_bounds():
    result = gate_check(
        _report(), metric="contradiction_rate", minimum=0.06, maximum=0.04, on="value"
    )
    assert result == _gate(
        False,
        "contradiction_rate",
        "value",
        0.06,
        0.04,
        0.05,
        [0.02, 0.1],
        0.05,
        "M-c",
        "value 0.0500 is below the minimum 0.06; value 0.0500 is above the maximum 0.04",
    )
    ok = gate_check(_report(), metric="contradiction_rate", minimum=0.05, maximum=0.05, on="value")
    assert (ok["pass"], ok["reason"]) == (True, "value end 0.0500 meets the threshold")


def test_gate_reads_the_judges_headline_when_there_is_one():
    judge = {
        "name": "j",
        "headline_estimate": "ppi",
        "ppi": {"value": 0.8, "ci": [0.7, 0.9], "method": "PPI m"},
    }
    assert gate_check(_report(judge=judge), minimum=0.7) == _gate(
        True,
        "faithfulness",
        "lower",
        0.7,
        None,
        0.8,
        [0.7, 0.9],
        0.7,
        "PPI m",
        "lower end 0.7000 meets the threshold",
        judge="j",
    )
    no_method = {"name": "j", "headline_estimate": "ppi", "ppi": {"value": 0.8, "ci": [0.7, 0.9]}}
    assert gate_check(_report(judge=no_method), minimum=0.7)["method"] == "ppi"
    missing = {"name": "j", "headline_estimate": "ppi"}
    assert gate_check(_report(judge=missing), minimum=0.7) == _gate(
        False,
        "faithfulness",
        "lower",
        0.7,
        None,
        None,
        None,
        None,
        "ppi",
        "no faithfulness figure to judge (no gold claims yet, or no interval)",
        judge="j",
    )
    # No headline: the gold claims' pooled rate; other metrics ignore the judge.
    plain = {"name": "j", "headline_estimate": None, "ppi": {"value": 0.1, "ci": [0, 0.2]}}
    assert gate_check(_report(judge=plain), minimum=0.85)["figure"] == 0.9
    judged = {"name": "j", "headline_estimate": "ppi", "ppi": {"value": 0.1, "ci": [0, 0.2]}}
    assert (
        gate_check(_report(judge=judged), metric="contradiction_rate", maximum=1)["figure"] == 0.05
    )


def test_gate_without_a_figure_or_an_interval_fails_saying_so():
    report = _report(faithfulness={"pooled": {"value": 0.9, "ci": [None, 0.95]}})
    reason = "no faithfulness figure to judge (no gold claims yet, or no interval)"
    assert gate_check(report, minimum=0.5) == _gate(
        False, "faithfulness", "lower", 0.5, None, 0.9, None, None, WILSON, reason
    )
    assert gate_check(report, minimum=0.5, on="upper")["reason"] == reason
    assert gate_check(report, minimum=0.5, on="value")["pass"] is True
    empty = gate_check({}, metric="hallucination_rate", maximum=0.1, on="upper")
    assert empty == _gate(
        False,
        "hallucination_rate",
        "upper",
        None,
        0.1,
        None,
        None,
        None,
        WILSON,
        "no hallucination_rate figure to judge (no gold claims yet, or no interval)",
        slug=None,
        at=None,
    )


def test_gate_errors_whole_messages():
    with pytest.raises(GateError) as err:
        gate_check(_report(), metric="speed", minimum=1)
    assert str(err.value) == (
        "metric: unknown metric 'speed'; use one of faithfulness, contradiction_rate, "
        "not_in_pile_rate, hallucination_rate, answers_with_unsupported_rate"
    )
    with pytest.raises(GateError) as err:
        gate_check(_report(), on="middle", minimum=1)
    assert str(err.value) == "on: use one of lower, value, upper, got 'middle'"
    with pytest.raises(GateError) as err:
        gate_check(_report())
    assert str(err.value) == "min: give min (the figure must reach it) or max (must not exceed it)"
    for metric in ("not_in_pile_rate", "answers_with_unsupported_rate"):
        assert gate_check(_report(), metric=metric, maximum=1)["metric"] == metric
