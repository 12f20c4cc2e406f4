"""The report, its snapshots, the audit card and the gate; figures from statsmodels."""

import json
from io import StringIO

import pytest
from django.core.management import call_command
from statsmodels.stats.proportion import proportion_confint

from annotate.models import Verdict
from tests.factories import AnswerFactory, ClaimFactory, GoldFactory


def _gold(project, supported: int, other: int):
    for n in range(supported + other):
        answer = AnswerFactory(project=project, external_id=f"g{n}")
        claim = ClaimFactory(answer=answer, text=f"Claim {n}.")
        GoldFactory(
            claim=claim, verdict=Verdict.SUPPORTED if n < supported else Verdict.CONTRADICTED
        )


def test_report_is_the_commands_json(api_world):
    _gold(api_world.project, 18, 2)
    response = api_world.client("lead").get("/api/v1/projects/shop/report")
    assert response.status_code == 200
    out = StringIO()
    call_command("report", "--project", "shop", stdout=out, stderr=StringIO())
    command = json.loads(out.getvalue())
    api = response.json()
    for report in (command, api):
        report.pop("computed_at")
    assert api == command


def test_report_with_unknown_judge_is_a_404_problem(api_world):
    response = api_world.client("lead").get("/api/v1/projects/shop/report", {"judge": "nope"})
    assert response.status_code == 404
    assert response.json()["errors"][0]["field"] == "judge"


@pytest.mark.parametrize(("minimum", "passes"), [(0.9, False), (0.65, True)])
def test_gate_on_the_wilson_lower_end(api_world, minimum, passes):
    _gold(api_world.project, 18, 2)
    low, high = proportion_confint(18, 20, alpha=0.05, method="wilson")
    response = api_world.client("lead").get(
        "/api/v1/projects/shop/gate", {"metric": "faithfulness", "min": minimum, "on": "lower"}
    )
    assert response.status_code == 200
    gate = response.json()
    assert gate["pass"] is passes
    assert gate["figure"] == pytest.approx(0.9)
    assert gate["interval"] == pytest.approx([low, high])
    assert "Wilson" in gate["method"]
    # the command's gate agrees (exit status 1 on a fail)
    args = ["report", "--project", "shop", "--fail-under", str(minimum), "--on", "lower"]
    if passes:
        call_command(*args, stdout=StringIO(), stderr=StringIO())
    else:
        with pytest.raises(SystemExit) as exit_:
            call_command(*args, stdout=StringIO(), stderr=StringIO())
        assert exit_.value.code == 1


def test_gate_on_value_and_max(api_world):
    _gold(api_world.project, 18, 2)
    client = api_world.client("lead")
    gate = client.get("/api/v1/projects/shop/gate", {"min": 0.9, "on": "value"}).json()
    assert gate["pass"] is True  # 0.9 >= 0.9
    low, high = proportion_confint(2, 20, alpha=0.05, method="wilson")
    gate = client.get(
        "/api/v1/projects/shop/gate", {"metric": "contradiction_rate", "max": 0.25, "on": "upper"}
    ).json()
    assert gate["interval"] == pytest.approx([low, high])
    assert gate["pass"] is (high <= 0.25)


def test_gate_without_gold_fails_and_bad_parameters_are_problems(api_world):
    client = api_world.client("lead")
    gate = client.get("/api/v1/projects/shop/gate", {"min": 0.5}).json()
    assert gate["pass"] is False
    response = client.get("/api/v1/projects/shop/gate", {"metric": "speed", "min": 0.5})
    assert response.status_code == 422
    assert response.json()["errors"][0]["field"] == "metric"
    response = client.get("/api/v1/projects/shop/gate", {"min": "high"})
    assert response.status_code == 422
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["errors"][0]["field"] == "min"


def test_snapshot_request_and_poll(api_world, django_capture_on_commit_callbacks):
    _gold(api_world.project, 3, 1)
    client = api_world.client("lead")
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/api/v1/projects/shop/report/snapshots")
    assert response.status_code == 202
    snapshot = response.json()
    polled = client.get(f"/api/v1/projects/shop/report/snapshots/{snapshot['id']}").json()
    assert polled["status"] == "done"  # eager tasks in tests
    assert polled["report"]["faithfulness"]["pooled"]["value"] == pytest.approx(0.75)
    assert "_crc_inputs" not in json.dumps(list(polled["report"]))


def test_analyst_cannot_read_figures(api_world):
    client = api_world.client("analyst")
    for path in ("report", "gate?min=0.5", "audit-card?judge=x"):
        assert client.get(f"/api/v1/projects/shop/{path}").status_code == 404


def test_compare_is_the_commands_json_with_scipys_paired_interval(api_world):
    """Two systems on 30 shared questions, one gold claim per answer: B − A is scipy's paired
    t interval; the API answers what `manage.py compare --format json` prints."""
    import numpy as np
    from scipy import stats as scipy_stats

    from tests.compare.builders import answer_record, import_records

    rng = np.random.default_rng(8)
    a = rng.random(30) < 0.5
    b = np.where(rng.random(30) < 0.7, a, ~a) | (rng.random(30) < 0.3)
    verdict = {True: "SUPPORTED", False: "NOT_IN_PILE"}
    records = []
    for i, (x, y) in enumerate(zip(a, b, strict=True)):
        records.append(answer_record(f"q{i}", "rag@1", [(verdict[bool(x)], None)]))
        records.append(answer_record(f"q{i}", "rag@2", [(verdict[bool(y)], None)]))
    import_records(api_world.project, records)
    lead = api_world.client("lead")
    response = lead.get("/api/v1/projects/shop/compare", {"a": "rag@1", "b": "rag@2"})
    assert response.status_code == 200
    faith = response.json()["rates"]["faithfulness"]["gold_only"]
    lo, hi = scipy_stats.ttest_rel(b.astype(float), a.astype(float)).confidence_interval()
    assert faith["value"] == pytest.approx(b.mean() - a.mean())
    assert faith["ci"] == [pytest.approx(lo), pytest.approx(hi)]
    out = StringIO()
    call_command(
        "compare",
        "--project",
        "shop",
        "--a",
        "rag@1",
        "--b",
        "rag@2",
        "--format",
        "json",
        stdout=out,
        stderr=StringIO(),
    )
    api, command = response.json(), json.loads(out.getvalue())
    for result in (api, command):
        result.pop("computed_at")
    assert api == command

    unknown = lead.get("/api/v1/projects/shop/compare", {"a": "rag@1", "b": "rag@9"})
    assert unknown.status_code == 404
    assert unknown.json()["errors"][0]["field"] == "b"
    same = lead.get("/api/v1/projects/shop/compare", {"a": "rag@1", "b": "rag@1"})
    assert same.status_code == 422
    assert same.json()["errors"][0]["field"] == "b"
    analyst = api_world.client("analyst")
    assert (
        analyst.get("/api/v1/projects/shop/compare", {"a": "rag@1", "b": "rag@2"}).status_code
        == 404
    )


def test_report_snapshot_and_audit_card_take_a_system(
    api_world, django_capture_on_commit_callbacks
):
    """A project of two systems: `system` picks whose answers (NAME@VERSION, or all); the
    gold counts are read from the database; an unknown system is a 404 naming the field."""
    from annotate.models import Gold
    from tests.compare.builders import answer_record, import_records

    records = [
        answer_record("q1", "rag@1", [("SUPPORTED", "SUPPORTED"), ("NOT_IN_PILE", "SUPPORTED")]),
        answer_record("q1", "rag@2", [("SUPPORTED", "SUPPORTED")]),
        answer_record("q2", "rag@2", [("CONTRADICTED", "CONTRADICTED")]),
    ]
    import_records(api_world.project, records)
    lead = api_world.client("lead")
    url = "/api/v1/projects/shop/report"
    b = lead.get(url, {"system": "rag@2"}).json()
    assert b["system"]["version"] == "2"
    assert b["claims"]["total"] == Gold.objects.filter(claim__answer__system__version="2").count()
    pooled = lead.get(url, {"system": "all"}).json()
    assert pooled["system_scope"] == "all"
    assert pooled["claims"]["total"] == Gold.objects.count()
    missing = lead.get(url, {"system": "rag@9"})
    assert missing.status_code == 404
    assert missing.json()["errors"][0]["field"] == "system"
    with django_capture_on_commit_callbacks(execute=True):
        created = lead.post("/api/v1/projects/shop/report/snapshots?system=rag@2")
    assert created.status_code == 202
    polled = lead.get(f"/api/v1/projects/shop/report/snapshots/{created.json()['id']}").json()
    assert polled["report"]["system"]["version"] == "2"
    card = lead.get("/api/v1/projects/shop/audit-card", {"judge": "j", "system": "rag@2"})
    assert card.status_code == 200
    assert card.json()["system"] == "rag@2"
    assert card.json()["audit_sample_size"] == 2
