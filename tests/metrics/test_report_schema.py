"""The report's JSON Schema, made from its section dataclasses: every report the app writes
validates against it (the golden ones, and fresh ones with a judge of two instruments, with a
grounding-bits judge, with two systems, with ground truth), a report with a key renamed does
not, and it is the report routes' response schema in the OpenAPI. Also the section assembly's
rules: a section needs only inputs and sections built before it, and no private key reaches a
report or a snapshot."""

import json
from pathlib import Path

import jsonschema_rs
import pytest

from annotate.models import System
from metrics.models import ReportSnapshot
from metrics.services import snapshot_compute, snapshot_create
from metrics.services.report import LAYOUT, SECTIONS, report_compute
from metrics.services.report_schema import report_json_schema
from metrics.services.sections import Section, SectionOrderError, sections_build
from tests.metrics.factories_bits import build_bits_project
from tests.metrics.factories_report import add_second_instrument, build_planted_project
from tests.metrics.test_report_ground_truth import _world

GOLDEN = Path(__file__).parent / "golden"


def _errors(report: dict) -> list[str]:
    validator = jsonschema_rs.validator_for(report_json_schema())
    return [str(error) for error in validator.iter_errors(report)]


def _golden(name: str) -> dict:
    report = json.loads((GOLDEN / name).read_text())
    report["labels_at_compute"] = 7  # the golden file holds a placeholder for the row id
    return report


def _private_keys(value, path="") -> list[str]:
    if isinstance(value, dict):
        found = [f"{path}/{key}" for key in value if str(key).startswith("_")]
        for key, item in value.items():
            found += _private_keys(item, f"{path}/{key}")
        return found
    if isinstance(value, list):
        return [key for index, item in enumerate(value) for key in _private_keys(item, f"{index}")]
    return []


@pytest.mark.parametrize("name", ["demo_report.json", "demo_report_baseline.json"])
def test_the_golden_reports_validate(name):
    assert _errors(_golden(name)) == []


@pytest.mark.parametrize(
    ("path", "key"),
    [
        ((), "faithfulness"),  # a top-level section
        ((), "judge"),  # an optional key of a spread section (only with a judge)
        (("design", "outside_queue"), "text"),  # a nested dataclass's field
        (("coverage",), "f1"),  # a TypedDict's key
        (("method",), "design"),  # the method string built after the section it describes
    ],
)
def test_a_renamed_key_fails_validation(path, key):
    report = _golden("demo_report_baseline.json")
    block = report
    for part in path:
        block = block[part]
    block[key + "_renamed"] = block.pop(key)
    errors = _errors(report)
    assert errors, f"renaming {key!r} went unnoticed"
    assert any(key in error for error in errors), errors


def test_a_wrong_type_fails_validation():
    report = _golden("demo_report.json")
    report["claims"]["total"] = "forty"
    assert _errors(report)


@pytest.mark.django_db
def test_fresh_reports_validate_with_judge_instruments_systems_and_truth():
    planted = build_planted_project()
    add_second_instrument(planted)
    with_judge = report_compute(project=planted.project, judge=planted.judge)
    assert len(with_judge["instruments"]) == 2
    assert "active_audit" in with_judge
    assert _errors(with_judge) == []

    System.objects.create(project=planted.project, name="rag", version="2")
    System.objects.create(project=planted.project, name="rag", version="1")
    one_system = report_compute(project=planted.project, judge=planted.judge)
    pooled = report_compute(project=planted.project, judge=planted.judge, all_systems=True)
    assert "system" in one_system
    assert pooled["system_scope"] == "all"
    assert _errors(one_system) == []
    assert _errors(pooled) == []

    bits = build_bits_project()
    with_bits = report_compute(project=bits.project, judge=bits.judge)
    assert "grounding_bits" in with_bits
    assert _errors(with_bits) == []

    truth = report_compute(project=_world().project)
    assert "ground_truth" in truth
    assert _errors(truth) == []
    for report in (with_judge, one_system, pooled, with_bits, truth):
        assert _private_keys(report) == []


@pytest.mark.django_db
def test_the_snapshot_holds_no_private_key():
    planted = build_planted_project()
    snapshot = snapshot_create(project=planted.project, judge=planted.judge)
    snapshot_compute(snapshot_id=snapshot.pk)
    stored = ReportSnapshot.objects.get(pk=snapshot.pk)
    assert stored.status == ReportSnapshot.Status.DONE
    assert _private_keys(stored.data) == []
    assert _errors(stored.data) == []


@pytest.mark.django_db
def test_the_openapi_publishes_the_schema_for_the_report_routes(client):
    schema = client.get("/api/v1/openapi.json").json()
    report = schema["paths"]["/api/v1/projects/{slug}/report"]["get"]["responses"]["200"]
    assert report["content"]["application/json"]["schema"] == report_json_schema()
    snapshot = schema["components"]["schemas"]["SnapshotOut"]["properties"]["report"]
    assert report_json_schema() in snapshot["anyOf"]


def test_every_report_key_is_in_the_schema_in_the_layouts_order():
    """The schema's properties follow the JSON's own order, so a reader sees the report."""
    golden = _golden("demo_report_baseline.json")
    properties = list(report_json_schema()["properties"])
    assert [key for key in properties if key in golden] == list(golden)


def test_a_section_needing_what_is_not_built_before_it_is_refused():
    late = Section("late", lambda design: design, ("design",))
    with pytest.raises(SectionOrderError, match="'late' needs design"):
        sections_build((late, *SECTIONS), {})


def test_a_builder_receives_exactly_its_needs():
    seen = []

    def first(data):
        seen.append(("first", data))
        return "typed-first"

    def second(first):
        seen.append(("second", first))
        return None

    sections_build(
        (Section("first", first, ("data",)), Section("second", second, ("first",))),
        {"data": 1, "other": 2},
    )
    assert seen == [("first", 1), ("second", "typed-first")]


def test_the_layout_shows_each_section_once():
    assert len(LAYOUT) == len(set(LAYOUT))
    assert set(LAYOUT) <= {section.name for section in SECTIONS}
