"""Spreadsheet formula injection and download names, in every CSV the product writes.

A text a user or an import file supplies that starts with = + - @ tab or carriage return must
come out of the claims export, the contradictions CSV and the audit card CSV with a leading
single quote (OWASP's rule), read back with Python's csv module; numbers the product writes
from numeric columns stay numbers. File names are slugs only, whatever a judge is called.
"""

import csv
import io
import re

import pytest
from django.core.management import call_command
from django.urls import reverse

from annotate.models import Role
from interchange.services.exports import claims_export
from metrics.services import snapshot_compute, snapshot_create
from tests.factories import (
    AnswerFactory,
    ClaimFactory,
    GoldFactory,
    JudgeRunFactory,
    JudgeVerdictFactory,
    LabelFactory,
    MembershipFactory,
    PassageFactory,
    ProjectFactory,
    UserFactory,
)
from tests.metrics.factories_report import build_planted_project

pytestmark = pytest.mark.django_db
TRIGGERS = ["=", "+", "-", "@", "\t", "\r"]
PAYLOAD = 'HYPERLINK("http://127.0.0.1/x","click")'
SAFE_NAME = re.compile(r'^attachment; filename="[a-z0-9-]+\.(csv|json|md|jsonl)"$')


def neutral(text: str) -> str:
    """What a neutralised cell reads as (the expectation, written from OWASP's rule)."""
    return "'" + text


def parse(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text, newline="")))


def assert_no_formula(rows):
    for row in rows:
        for cell in row:
            assert cell[:1] not in TRIGGERS, (cell, row)


def _lead(project):
    return MembershipFactory(project=project, role=Role.LEAD).user


@pytest.mark.parametrize("trigger", TRIGGERS, ids=repr)
def test_claims_export_neutralises_every_user_text(trigger, client):
    text = f"{trigger}{PAYLOAD}"
    project = ProjectFactory(slug="inj")
    answer = AnswerFactory(project=project, external_id=f"{trigger}id")
    passage = PassageFactory(answer=answer, rank=1, source_id=f"{trigger}src")
    claim = ClaimFactory(answer=answer, text=text, tags=[text])
    claim.cited_passages.add(passage)
    LabelFactory(
        claim=claim,
        annotator=UserFactory(username="ana"),
        verdict="CONTRADICTED",
        evidence_passage=passage,
        evidence_start=0,
        evidence_end=len(text),
        evidence_quote=text,
        note=text,
    )
    GoldFactory(claim=claim, verdict="CONTRADICTED", reason=text)
    run = JudgeRunFactory(judge__project=project, judge__name=text, prompt_version="p1")
    JudgeVerdictFactory(run=run, claim=claim, verdict="SUPPORTED", confidence=0.25)

    out = io.StringIO()
    claims_export(project=project, format="csv", out=out)
    header, row = parse(out.getvalue())
    cells = dict(zip(header, row, strict=True))
    assert_no_formula([header, row])
    assert cells["answer_id"] == neutral(f"{trigger}id")
    for column in ("text", "tags", "gold_reason"):
        assert cells[column] == neutral(text), column
    assert cells["citations"] == neutral(f"{trigger}src")
    assert cells["label:ana:quote_text"] == neutral(text)
    assert cells["label:ana:note"] == neutral(text)
    assert cells["label:ana:quote_passage"] == neutral(f"{trigger}src")
    # Numbers the product writes stay numbers.
    assert cells["label:ana:quote_start"] == "0"
    assert [v for k, v in cells.items() if k.endswith(":confidence")] == ["0.25"]

    # The download is the same export, under a slug-only name.
    client.force_login(_lead(project))
    response = client.get(reverse("annotate:export", args=["inj"]), {"format": "csv"})
    assert parse(b"".join(response.streaming_content).decode()) == [header, row]
    assert SAFE_NAME.match(response["Content-Disposition"]), response["Content-Disposition"]


@pytest.mark.parametrize("trigger", TRIGGERS, ids=repr)
def test_contradictions_csv_neutralises_every_user_text(trigger, client):
    text = f"{trigger}{PAYLOAD}"
    project = ProjectFactory(slug="contra")
    answer = AnswerFactory(project=project, question=text, text=text, external_id=f"{trigger}a")
    passage = PassageFactory(answer=answer, rank=2, source_id=f"{trigger}doc", text=text)
    claim = ClaimFactory(answer=answer, text=text, span_start=0, span_end=len(text))
    analyst = UserFactory(username=f"{trigger}analyst".replace("\t", "t").replace("\r", "r"))
    LabelFactory(
        claim=claim,
        annotator=analyst,
        verdict="CONTRADICTED",
        evidence_passage=passage,
        evidence_start=0,
        evidence_end=len(text),
        evidence_quote=text,
    )
    client.force_login(_lead(project))
    response = client.get(reverse("annotate:contradictions", args=["contra"]), {"format": "csv"})
    assert response.status_code == 200
    rows = parse(response.content.decode())
    assert_no_formula(rows)
    cells = dict(zip(rows[0], rows[1], strict=True))
    for column in ("question", "claim", "answer_says", "quote"):
        assert cells[column] == neutral(text), column
    assert cells["passage_source"] == neutral(f"{trigger}doc")
    assert cells["answer_id"] == neutral(f"{trigger}a")
    assert cells["passage_rank"] == "2"
    assert SAFE_NAME.match(response["Content-Disposition"]), response["Content-Disposition"]


@pytest.fixture
def planted_report():
    planted = build_planted_project()
    return planted


def _compute(planted):
    snapshot = snapshot_create(project=planted.project, judge=planted.judge)
    snapshot_compute(snapshot_id=snapshot.pk)


@pytest.mark.parametrize("trigger", TRIGGERS, ids=repr)
def test_audit_card_csv_neutralises_the_judge_name_view_and_command(
    trigger, client, planted_report, tmp_path
):
    planted = planted_report
    name = f"{trigger}{PAYLOAD}"
    planted.judge.name = name
    planted.judge.save(update_fields=["name"])
    _compute(planted)
    client.force_login(planted.lead)
    response = client.get(
        reverse("metrics:audit-card", args=[planted.project.slug]),
        {"judge": planted.judge.pk, "format": "csv"},
    )
    assert response.status_code == 200
    rows = parse(response.content.decode())
    assert_no_formula(rows)
    card = {row[0]: row[1] for row in rows[1:]}
    assert card["judge"] == neutral(name)
    assert SAFE_NAME.match(response["Content-Disposition"]), response["Content-Disposition"]

    output = tmp_path / "card.csv"
    call_command(
        "export_audit",
        f"--project={planted.project.slug}",
        f"--judge={name}",  # "=" form: a name starting with "-" is not an option
        "--format=csv",
        f"--output={output}",
    )
    with open(output, newline="", encoding="utf-8") as written:
        rows = parse(written.read())
    assert_no_formula(rows)
    assert {row[0]: row[1] for row in rows[1:]}["judge"] == neutral(name)


def test_audit_card_csv_keeps_numbers_numeric(client, planted_report):
    planted = planted_report
    _compute(planted)
    client.force_login(planted.lead)
    response = client.get(
        reverse("metrics:audit-card", args=[planted.project.slug]),
        {"judge": planted.judge.pk, "format": "csv"},
    )
    card = {row[0]: row[1] for row in parse(response.content.decode())[1:]}
    assert card["audit_sample_size"] == "40"
    assert not any(value.startswith("'") and value[1:2].isdigit() for value in card.values())


@pytest.mark.parametrize(
    "name",
    ['evil.html"; x=', "évïl\u202ename.html", "two\nlines\r\nX-Injected: 1", "../../etc/passwd"],
    ids=["quote", "non-ascii", "newlines", "path"],
)
def test_download_names_are_slugs_whatever_the_judge_is_called(name, client, planted_report):
    planted = planted_report
    planted.judge.name = name
    planted.judge.save(update_fields=["name"])
    _compute(planted)
    client.force_login(planted.lead)
    for route, params in (
        ("metrics:audit-card", {"format": "csv"}),
        ("metrics:audit-card", {"format": "json"}),
        ("metrics:report-download", {}),
    ):
        response = client.get(
            reverse(route, args=[planted.project.slug]), {"judge": planted.judge.pk, **params}
        )
        assert response.status_code == 200, route
        disposition = response["Content-Disposition"]
        assert SAFE_NAME.match(disposition), disposition
        assert "\n" not in disposition
        assert "\r" not in disposition
        assert ".html" not in disposition
        assert "X-Injected" not in response
