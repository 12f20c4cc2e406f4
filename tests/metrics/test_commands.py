"""`manage.py report` and `manage.py export_audit`."""

import csv
import io
import json

import pytest
from django.core.management import CommandError, call_command

from tests.metrics.factories_report import GOLD, build_planted_project

pytestmark = pytest.mark.django_db


def test_report_command_writes_the_report_json(tmp_path):
    build_planted_project()
    path = tmp_path / "report.json"
    call_command("report", "--project", "planted", "--judge", "lenient", "--output", str(path))
    report = json.loads(path.read_text())
    assert report["project"]["slug"] == "planted"
    assert report["claims"]["SUPPORTED"] == GOLD.count("SUPPORTED")
    assert report["judge"]["name"] == "lenient"
    assert report["judge"]["n_audited"] == 40
    assert "_instrument_crc_inputs" not in report


def test_report_command_without_judge_to_stdout():
    build_planted_project()
    out = io.StringIO()
    call_command("report", "--project", "planted", "--format", "json", stdout=out)
    report = json.loads(out.getvalue())
    assert "judge" not in report
    assert report["faithfulness"]["pooled"]["denominator"] == 40


def test_report_command_names_a_missing_project_or_judge():
    build_planted_project()
    with pytest.raises(CommandError, match="no project with slug 'nope'"):
        call_command("report", "--project", "nope")
    with pytest.raises(CommandError, match="no judge named 'ghost'.*lenient"):
        call_command("report", "--project", "planted", "--judge", "ghost")


def test_export_audit_json_and_csv(tmp_path):
    build_planted_project()
    json_path, csv_path = tmp_path / "card.json", tmp_path / "card.csv"
    call_command(
        "export_audit",
        "--project",
        "planted",
        "--judge",
        "lenient",
        "--format",
        "json",
        "--output",
        str(json_path),
    )
    card = json.loads(json_path.read_text())
    assert card["judge"] == "lenient"
    assert card["prompt_version"] == "p-1"
    assert card["audit_sample_size"] == 40
    assert card["sensitivity"]["n"] == GOLD.count("SUPPORTED")
    assert card["crc"]["alpha"] == 0.1
    assert "Rogan–Gladen" in card["method"]
    call_command(
        "export_audit",
        "--project",
        "planted",
        "--judge",
        "lenient",
        "--format",
        "csv",
        "--output",
        str(csv_path),
    )
    rows = {row[0]: row[1] for row in csv.reader(io.StringIO(csv_path.read_text()))}
    assert rows["judge"] == "lenient"
    assert rows["audit_sample_size"] == "40"
    assert rows["headline_estimate"] == card["headline_estimate"]


def test_export_audit_unwritable_output_is_a_clear_error(tmp_path):
    build_planted_project()
    target = tmp_path / "missing-dir" / "card.json"
    with pytest.raises(CommandError, match="cannot write"):
        call_command(
            "export_audit", "--project", "planted", "--judge", "lenient", "--output", str(target)
        )
    assert not target.exists()
