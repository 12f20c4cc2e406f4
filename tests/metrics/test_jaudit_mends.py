"""Mends of issue 13 item 5 on the report side: `labels_at_compute` is this project's, and the
audit card CSV gives each interval as two numeric columns, floats rounded for reading."""

import csv
import io
import json

import pytest
from django.core.management import call_command

from annotate.models import LabelHistory, Role
from annotate.services.labels import label_save
from metrics.services import report_compute
from tests.factories import ClaimFactory, MembershipFactory
from tests.metrics.factories_report import build_planted_project

pytestmark = pytest.mark.django_db


def test_labels_at_compute_is_this_projects_newest_label_not_any_projects():
    planted = build_planted_project()
    claim = ClaimFactory(answer=planted.answers[0])
    label_save(claim=claim, annotator=planted.analyst, verdict="NOT_IN_PILE")
    own = LabelHistory.objects.filter(claim__project=planted.project).order_by("-id").first().id
    elsewhere = MembershipFactory(role=Role.ANALYST)
    for _ in range(3):
        other = ClaimFactory(answer__project=elsewhere.project)
        label_save(claim=other, annotator=elsewhere.user, verdict="NOT_IN_PILE")
    newest = LabelHistory.objects.order_by("-id").first().id
    assert newest > own
    report = report_compute(project=planted.project)
    assert report["labels_at_compute"] == own
    assert report_compute(project=elsewhere.project)["labels_at_compute"] == newest


def _card(fmt: str) -> str:
    out = io.StringIO()
    call_command(
        "export_audit", "--project", "planted", "--judge", "lenient", "--format", fmt, stdout=out
    )
    return out.getvalue()


def test_audit_card_csv_gives_intervals_as_two_numeric_columns_at_full_precision():
    build_planted_project()
    card = json.loads(_card("json"))
    rows = list(csv.reader(io.StringIO(_card("csv"))))
    assert rows[0] == ["field", "value", "low", "high"]
    by_field = {row[0]: row[1:] for row in rows[1:]}
    assert all(len(row) == 4 for row in rows), [row for row in rows if len(row) != 4]
    value, low, high = by_field["sensitivity.ci"]
    assert value == ""
    # Full precision, as the JSON card: each number reads back to the very same float.
    assert float(low) == card["sensitivity"]["ci"][0]
    assert float(high) == card["sensitivity"]["ci"][1]
    assert [float(cell) for cell in by_field["headline_ci"][1:]] == card["headline_ci"]
    assert len(repr(card["kappa"]).split(".")[1]) > 4  # a figure rounding would change
    assert float(by_field["kappa"][0]) == card["kappa"]
    # The date row has its four columns too (two runs of the command: two clocks).
    assert by_field["date"][0][:10] == card["date"][:10]
    assert by_field["date"][1:] == ["", ""]
    assert by_field["audit_sample_size"] == ["40", "", ""]
