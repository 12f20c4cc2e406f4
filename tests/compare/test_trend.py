"""The trend across versions: systems in version order, each with its headline faithfulness."""

import pytest

from metrics.services.trend import systems_trend, version_key
from metrics.stats.intervals import wilson_interval
from metrics.trend_chart import trend_chart
from tests.compare.builders import answer_record, import_records
from tests.factories import ProjectFactory

pytestmark = pytest.mark.django_db
S, N = "SUPPORTED", "NOT_IN_PILE"


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
