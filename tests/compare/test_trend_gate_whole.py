"""The WHOLE outputs of `systems_trend` (metrics/services/trend.py) for a tiny planted project and
of `gate_check` (metrics/services/gate.py) for hand-made reports: every key, every branch, the
thresholds hit exactly; counts and shares by hand, intervals from statsmodels' Wilson."""

import pytest
from statsmodels.stats.proportion import proportion_confint

from judges.models import Judge
from metrics.services.gate import GateError, gate_check
from metrics.services.trend import systems_trend, trend_points, version_key
from tests.compare.builders import answer_record
from tests.compare.test_compare_whole import approx_tree, plant
from tests.factories import ProjectFactory

S, C, N = "SUPPORTED", "CONTRADICTED", "NOT_IN_PILE"


# -- trend ---------------------------------------------------------------------------------------


def _trend_world():
    """The compare plant (rag@1, rag@2) plus rag@10 (one gold claim per answer, every claim
    gold) and zeta (judged, no gold)."""
    records = [answer_record(f"q{i}", "rag@10", [(S if i < 3 else N, S)]) for i in range(5)]
    records += [answer_record(f"q{i}", "zeta", [(None, S), (None, N)]) for i in range(2)]
    project, _a, _b, _judge = plant(slug="trend", extra=records)
    return project, Judge.objects.get(project=project, name="j")


# rag@1's and rag@2's rows as the product gave them once (the shares are checked by hand below).
TREND_GOLDEN = [
    {
        "system": "rag@1",
        "name": "rag",
        "version": "1",
        "claims": 11,
        "gold_claims": 10,
        "judge": "j (no model, prompt imported)",
        "gold_only": {
            "value": 0.6,
            "ci": [0.24784117451075083, 0.8722598896758494],
            "method": "Wilson interval at the effective sample size (9 of 10 claims), "
            "cluster-robust by answer (7 answers, design effect 0.42, counted as 1: "
            "never narrower than independent claims), t with 6 df.",
        },
        "ppi": {
            "value": 0.697530864197531,
            "ci": [0.4010434685690068, 0.9940182598260552],
            "method": "PPI++ (power-tuned per stratum), rectifier clustered by answer (7 audited "
            "answers, design effect 0.59), t with 6 df.",
        },
        "headline": {
            "choice": "ppi",
            "value": 0.697530864197531,
            "ci": [0.4010434685690068, 0.9940182598260552],
            "reason": "PPI++ is the narrowest valid interval (±0.30): the judge's verdicts on "
            "the unaudited claims, corrected by its errors on the audit sample, add "
            "information beyond the audit sample alone (±0.31).",
        },
    },
    {
        "system": "rag@2",
        "name": "rag",
        "version": "2",
        "claims": 7,
        "gold_claims": 6,
        "judge": "j (no model, prompt imported)",
        "gold_only": {
            "value": 0.6666666666666666,
            "ci": [0.1621458970504947, 0.9538514240541149],
            "method": "Wilson interval at the effective sample size (4 of 6 claims), "
            "cluster-robust by answer (5 answers, design effect 1.22), t with 4 df.",
        },
        "ppi": {
            "value": 0.6851851851851851,
            "ci": [0.07441766030611718, 1.0],
            "method": "PPI++ (power-tuned per stratum), rectifier clustered by answer (5 audited "
            "answers, design effect 1.21), t with 4 df.",
        },
        "headline": {
            "choice": "gold_only",
            "value": 0.6666666666666666,
            "ci": [0.1621458970504947, 0.9538514240541149],
            "reason": "The audit sample alone is the better estimate (±0.40); the judge's "
            "verdicts on the other claims do not narrow it (±0.46).",
        },
    },
]


def _wilson(k, n):
    return [pytest.approx(end) for end in proportion_confint(k, n, method="wilson")]


@pytest.mark.django_db
def test_trend_rows_whole_with_and_without_a_judge():
    project, judge = _trend_world()
    rows = systems_trend(project=project, judge=judge)
    assert [row["system"] for row in rows] == ["rag@1", "rag@2", "rag@10", "zeta"]
    # Claims of answers that are not abstentions; gold claims: by hand from the plant.
    assert [(row["claims"], row["gold_claims"]) for row in rows] == [
        (11, 10),
        (7, 6),
        (5, 5),
        (4, 0),
    ]
    # rag@1: gold S on 6 of 10 (q1..q6 one S each; q1 C, q3 N, q4 N, q7 N; q5's other: none);
    # rag@2: 4 of 6; rag@10: 3 of 5, every answer one claim → Wilson's interval.
    assert rows[0]["gold_only"]["value"] == pytest.approx(6 / 10)
    assert rows[1]["gold_only"]["value"] == pytest.approx(4 / 6)
    assert rows[:2] == approx_tree(TREND_GOLDEN)
    assert rows[2] == approx_tree(
        {
            "system": "rag@10",
            "name": "rag",
            "version": "10",
            "claims": 5,
            "gold_claims": 5,
            "judge": "j (no model, prompt imported)",
            "gold_only": {
                "value": 0.6,
                "ci": list(proportion_confint(3, 5, method="wilson")),
                "method": "Wilson interval, one claim per answer.",
            },
            "ppi": None,
            "headline": {
                "choice": "gold_only",
                "value": 0.6,
                "ci": list(proportion_confint(3, 5, method="wilson")),
                "reason": rows[2]["headline"]["reason"],
            },
        }
    )
    assert rows[3] == {
        "system": "zeta",
        "name": "zeta",
        "version": "",
        "claims": 4,
        "gold_claims": 0,
        "judge": "j (no model, prompt imported)",
        "gold_only": None,
        "ppi": None,
        "headline": {
            "choice": None,
            "value": None,
            "ci": [None, None],
            "reason": rows[3]["headline"]["reason"],
        },
    }
    for row in rows[:2]:
        assert row["ppi"] is not None
        assert set(row["ppi"]) == {"value", "ci", "method"}
        assert row["headline"]["choice"] in ("ppi", "gold_only")
        chosen = row[row["headline"]["choice"]]
        assert (row["headline"]["value"], row["headline"]["ci"]) == (chosen["value"], chosen["ci"])
    assert trend_points(rows) == [
        (row["system"], row["headline"]["value"], *row["headline"]["ci"]) for row in rows[:3]
    ]
    plain = systems_trend(project=project)
    assert [row["judge"] for row in plain] == [""] * 4
    assert [row["ppi"] for row in plain] == [None] * 4
    assert [row["headline"]["choice"] for row in plain] == ["gold_only"] * 3 + [None]
    assert plain[2]["headline"]["ci"] == _wilson(3, 5)


@pytest.mark.django_db
def test_trend_of_a_project_without_systems_is_empty():
    assert systems_trend(project=ProjectFactory()) == []
    assert trend_points([]) == []


def test_version_key_whole():
    assert version_key("v10.2") == ((1, 0, "v"), (0, 10, ""), (1, 0, "."), (0, 2, ""))
    assert version_key("") == ()
    assert version_key(7) == ((0, 7, ""),)
    assert sorted(["b", "10", "a", "9"], key=version_key) == ["9", "10", "a", "b"]


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
