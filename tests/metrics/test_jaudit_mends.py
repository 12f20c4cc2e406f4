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


def test_audit_card_csv_gives_intervals_as_two_numeric_columns_rounded():
    build_planted_project()
    card = json.loads(_card("json"))
    rows = list(csv.reader(io.StringIO(_card("csv"))))
    assert rows[0] == ["field", "value", "low", "high"]
    by_field = {row[0]: row[1:] for row in rows[1:]}
    assert all(len(row) == 4 for row in rows)
    value, low, high = by_field["sensitivity.ci"]
    assert value == ""
    assert float(low) == pytest.approx(card["sensitivity"]["ci"][0], abs=5e-5)
    assert float(high) == pytest.approx(card["sensitivity"]["ci"][1], abs=5e-5)
    assert by_field["headline_ci"][1:] == [
        str(round(card["headline_ci"][0], 4)),
        str(round(card["headline_ci"][1], 4)),
    ]
    # Floats rounded to 4 decimals for reading; the JSON card keeps full precision.
    kappa = by_field["kappa"][0]
    assert kappa == str(round(card["kappa"], 4))
    assert len(repr(card["kappa"]).split(".")[1]) > 4
    for field, (value, low, high) in by_field.items():
        for cell in (value, low, high):
            if cell.replace(".", "", 1).replace("-", "", 1).isdigit() and "." in cell:
                assert len(cell.split(".")[1]) <= 4, (field, cell)
    assert by_field["audit_sample_size"] == ["40", "", ""]
