"""The trend across versions: systems in version order, each with its headline faithfulness."""

import math

import numpy as np
import pytest
from statsmodels.stats.proportion import proportion_confint

from judges.models import Judge
from metrics.services.trend import systems_trend, trend_points, version_key
from metrics.stats.intervals import wilson_interval
from metrics.trend_chart import trend_chart
from tests.compare.builders import answer_record, import_records
from tests.compare.test_compare_service import approx_tree, plant
from tests.factories import ProjectFactory
from tests.metrics import independent as ref

pytestmark = pytest.mark.django_db
S, C, N = "SUPPORTED", "CONTRADICTED", "NOT_IN_PILE"


def test_version_key_orders_numbers_as_numbers():
    assert sorted(["v10", "v2", "v1"], key=version_key) == ["v1", "v2", "v10"]
    assert sorted(["2024-10", "2024-07"], key=version_key) == ["2024-07", "2024-10"]


def test_trend_rows_in_version_order_with_wilson_for_one_claim_per_answer():
    project = ProjectFactory()
    records = []
    # Imported out of order: v10 first. One gold claim per answer: the estimate is Wilson's.
    for version, supported in (("10", 9), ("2", 3), ("1", 5)):
        for i in range(10):
            verdict = S if i < supported else N
            records.append(answer_record(f"q{i}", f"rag@{version}", [(verdict, None)]))
    import_records(project, records)
    rows = systems_trend(project=project)
    assert [row["system"] for row in rows] == ["rag@1", "rag@2", "rag@10"]
    first = rows[0]
    assert first["headline"]["choice"] == "gold_only"
    assert first["headline"]["value"] == pytest.approx(0.5)
    assert first["headline"]["ci"] == [pytest.approx(end) for end in wilson_interval(5, 10)]
    svg = trend_chart([(r["system"], r["headline"]["value"], *r["headline"]["ci"]) for r in rows])
    assert svg.count('class="trend-point"') == 3
    assert "style=" not in svg
    assert "<script" not in svg


def test_version_key_reads_only_ascii_digits_as_numbers():
    """ "²".isdigit() is true but int("²") raised: a system version "²" broke the trend."""
    assert sorted(["v²", "²", "v2"], key=version_key) == ["v2", "v²", "²"]
    assert version_key("7" * 5000) == ((1, 0, "7" * 5000),)


# --- metrics.services.trend: the PPI branch of a system's trend row ------------------------


def _cr1_mean_variance(x, answer_ids) -> float:
    """CR1 variance of a claim mean clustered by answer, by hand: G/(G−1)·Σ_g (Σ_i (x_i − x̄))²/n²."""
    x = np.asarray(x, dtype=float)
    sums: dict = {}
    for value, answer in zip(x - x.mean(), answer_ids, strict=True):
        sums[answer] = sums.get(answer, 0.0) + value
    g = len(sums)
    return g / (g - 1) * sum(v**2 for v in sums.values()) / x.size**2


# 12 answers of 2 claims each; answers 0–7 are audited (gold on both claims), 8–11 are not.
# The judge judged every claim; it errs on a few audited ones.
GOLD = [(S, S), (S, N), (N, N), (S, S), (S, S), (N, S), (S, S), (S, N)]


JUDGE = [(S, S), (S, S), (N, N), (S, S), (S, N), (N, S), (S, S), (S, N)] + [
    (S, S),
    (N, S),
    (S, S),
    (S, N),
]


@pytest.mark.django_db
def test_trend_row_with_audited_and_unaudited_judged_claims_carries_the_ppi_estimate():
    project = ProjectFactory()
    records = []
    for i, said in enumerate(JUDGE):
        gold = GOLD[i] if i < len(GOLD) else (None, None)
        records.append(answer_record(f"q{i}", "rag@1", list(zip(gold, said, strict=True))))
    import_records(project, records)
    rows = systems_trend(project=project, judge=Judge.objects.get(name="j"))
    assert len(rows) == 1
    row = rows[0]
    assert row["claims"] == 24
    assert row["gold_claims"] == 16

    y = np.array([v == S for pair in GOLD for v in pair], dtype=float)
    fg = np.array([v == S for pair in JUDGE[:8] for v in pair], dtype=float)
    fr = np.array([v == S for pair in JUDGE[8:] for v in pair], dtype=float)
    ids, rest_ids = np.arange(16) // 2, 8 + np.arange(8) // 2
    # By hand: 11 of 16 gold supported, the judge says 11 of 16 on them (agreeing on 14) and
    # 6 of 8 on the rest.
    assert (y.sum(), fg.sum(), fr.sum()) == (11, 11, 6)
    theta, _, lam = ref.ppi(y, fg, fr)  # ppi_py's point estimate and λ
    from scipy.stats import t as student_t

    var = _cr1_mean_variance(y - lam * fg, ids) + lam**2 * _cr1_mean_variance(fr, rest_ids)
    half = student_t.ppf(0.975, 8 - 1) * math.sqrt(var)
    ppi = row["ppi"]
    assert ppi is not None
    assert ppi["value"] == pytest.approx(theta, abs=1e-9)
    assert ppi["ci"] == [
        pytest.approx(max(theta - half, 0.0), abs=1e-9),
        pytest.approx(min(theta + half, 1.0), abs=1e-9),
    ]
    assert row["gold_only"]["value"] == pytest.approx(11 / 16)
    # The headline is the narrower of the two valid intervals.
    widths = {k: row[k]["ci"][1] - row[k]["ci"][0] for k in ("gold_only", "ppi")}
    assert row["headline"]["choice"] == min(widths, key=widths.get)


# --- metrics.services.trend.trend_points: the chart's points --------------------------------


def test_trend_points_are_the_rows_with_a_headline():
    from metrics.services.trend import trend_points

    rows = [
        {"system": "rag@1", "headline": {"choice": "gold_only", "value": 0.5, "ci": [0.3, 0.7]}},
        {"system": "rag@2", "headline": {"choice": None, "value": None, "ci": [None, None]}},
        {"system": "rag@3", "headline": {"choice": "ppi", "value": 0.8, "ci": [0.7, 0.9]}},
    ]
    assert trend_points(rows) == [("rag@1", 0.5, 0.3, 0.7), ("rag@3", 0.8, 0.7, 0.9)]


# --- metrics.services.trend: a system's gold-only interval is clustered by answer -------------


@pytest.mark.django_db
def test_trend_gold_only_interval_is_clustered_by_answer():
    """trend `systems_trend` `_80` (`design_proportion(…, None)`: the trend's gold-only interval
    treated an answer's claims as independent). Eight answers of three gold claims, alike within
    an answer: the interval is the hand CR1 clustered Wilson (tests.metrics.independent), wider
    than the independent-claims Wilson."""
    import numpy as np

    from metrics.services.trend import systems_trend
    from tests.compare.builders import answer_record, import_records
    from tests.metrics import independent as ref

    answers = [
        [S, S, S], [N, N, N], [S, S, N], [S, S, S], [N, N, S], [S, S, S], [S, N, N], [S, S, S],
    ]  # fmt: skip
    project = ProjectFactory()
    import_records(
        project,
        [answer_record(f"q{i}", "rag@1", [(v, None) for v in a]) for i, a in enumerate(answers)],
    )
    (row,) = systems_trend(project=project)
    y = np.array([v == S for a in answers for v in a], dtype=float)
    ids = np.repeat(np.arange(8), 3)
    lo, hi = ref.clustered_wilson(y, ids)
    assert row["gold_only"]["value"] == pytest.approx(16 / 24)
    assert row["gold_only"]["ci"] == [pytest.approx(lo, abs=1e-9), pytest.approx(hi, abs=1e-9)]
    w_lo, w_hi = ref.wilson(16, 24)
    assert hi - lo > w_hi - w_lo + 0.05  # clustering matters here


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
