"""Systems on answers: the native `system` and `question_id` fields, `--system` for RAGAS and
RAGChecker files (command and upload form), and the native export's round trip."""

import io
import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from annotate.models import Answer, System
from interchange.importers.issues import ImportFailed
from interchange.importers.systems import system_from_option
from interchange.services.exports import claims_export
from interchange.services.imports import answers_import
from tests.factories import ProjectFactory

DATA = Path(__file__).parents[1] / "annotate" / "data"
pytestmark = pytest.mark.django_db


def record(answer_id, *, system=None, question_id=None, answer="Refunds take 14 days."):
    row = {
        "id": answer_id,
        "question": "How long do refunds take?",
        "answer": answer,
        "pile": [{"id": "p1", "title": "Policy", "text": "Refunds take 14 days."}],
        "claims": [{"text": "Refunds take 14 days."}],
    }
    if system is not None:
        row["system"] = system
    if question_id is not None:
        row["question_id"] = question_id
    return row


def jsonl(*rows):
    return io.BytesIO("".join(json.dumps(row) + "\n" for row in rows).encode())


def test_native_system_object_and_string_with_question_id():
    project = ProjectFactory()
    answers_import(
        project=project,
        path_or_file=jsonl(
            record(
                "a-1",
                system={"name": "rag", "version": "1", "retriever": "bm25", "generator_model": "x"},
                question_id="q1",
            ),
            record("b-1", system="rag-b", question_id="q1"),
        ),
        format="native",
    )
    a, b = Answer.objects.filter(project=project).order_by("external_id")
    assert (a.system.name, a.system.version) == ("rag", "1")
    assert a.system.metadata == {"retriever": "bm25", "generator_model": "x"}
    assert (b.system.name, b.system.version, b.system.metadata) == ("rag-b", "", {})
    assert a.question_id == b.question_id == "q1"


def test_native_without_system_leaves_answers_without_one():
    project = ProjectFactory()
    answers_import(project=project, path_or_file=jsonl(record("a-1")), format="native")
    answer = Answer.objects.get(project=project)
    assert answer.system is None
    assert answer.question_id == ""
    assert not System.objects.filter(project=project).exists()


def test_one_system_with_two_metadata_in_a_file_is_refused_and_nothing_written():
    project = ProjectFactory()
    with pytest.raises(ImportFailed) as failed:
        answers_import(
            project=project,
            path_or_file=jsonl(
                record("a-1", system={"name": "rag", "retriever": "bm25"}),
                record("a-2", system={"name": "rag", "retriever": "dense"}),
            ),
            format="native",
        )
    issue = failed.value.issues[0]
    assert issue.field == "system"
    assert "line 1" in issue.message
    assert issue.location == "line 2"
    assert not Answer.objects.filter(project=project).exists()
    assert not System.objects.filter(project=project).exists()


@pytest.mark.parametrize(
    ("value", "field", "words"),
    [
        (7, "system", "expected a system name or an object"),
        ({"version": "1"}, "system.name", "missing"),
        ({"name": "  "}, "system.name", "must not be empty"),
        ({"name": "rag", "metadata": [1]}, "system.metadata", "expected an object"),
    ],
)
def test_bad_system_names_its_field(value, field, words):
    project = ProjectFactory()
    with pytest.raises(ImportFailed) as failed:
        answers_import(
            project=project, path_or_file=jsonl(record("a-1", system=value)), format="native"
        )
    issue = failed.value.issues[0]
    assert (issue.location, issue.field) == ("line 1", field)
    assert words in issue.message


def test_ragchecker_files_of_two_systems_pair_by_query_id():
    project = ProjectFactory()
    for name in ("rag@1", "rag@2"):
        answers_import(
            project=project,
            path_or_file=str(DATA / "ragchecker.json"),
            format="ragchecker",
            system=system_from_option(name),
        )
    rows = list(
        Answer.objects.filter(project=project)
        .order_by("external_id")
        .values_list("external_id", "question_id", "system__name", "system__version")
    )
    with open(DATA / "ragchecker.json", encoding="utf-8") as handle:
        query_ids = [item["query_id"] for item in json.load(handle)["results"]]
    expected = sorted([(f"rag@{v}:{q}", q, "rag", v) for q in query_ids for v in ("1", "2")])
    assert rows == expected


def test_import_command_takes_system_for_ragas(tmp_path):
    project = ProjectFactory(slug="cmp")
    call_command("import_answers", str(DATA / "ragas.jsonl"), "--project", "cmp", "--system", "v2")
    answers = Answer.objects.filter(project=project)
    assert answers.exists()
    assert set(answers.values_list("system__name", flat=True)) == {"v2"}
    with pytest.raises(CommandError, match="needs a name"):
        call_command(
            "import_answers", str(DATA / "ragas.jsonl"), "--project", "cmp", "--system", "@3"
        )


def test_export_round_trip_keeps_system_and_question_id():
    source = ProjectFactory()
    answers_import(
        project=source,
        path_or_file=jsonl(
            record("a-1", system={"name": "rag", "version": "1", "prompt": "v3"}, question_id="q1"),
            record("a-2"),
        ),
        format="native",
    )
    out = io.StringIO()
    claims_export(project=source, format="jsonl", out=out)
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert lines[0]["system"] == {"name": "rag", "version": "1", "metadata": {"prompt": "v3"}}
    assert lines[0]["question_id"] == "q1"
    assert "system" not in lines[1]
    assert "question_id" not in lines[1]
    target = ProjectFactory()
    answers_import(
        project=target, path_or_file=io.BytesIO(out.getvalue().encode()), format="native"
    )
    answer = Answer.objects.get(project=target, external_id="a-1")
    assert (answer.system.name, answer.system.version, answer.system.metadata) == (
        "rag",
        "1",
        {"prompt": "v3"},
    )
    assert answer.question_id == "q1"
    again = io.StringIO()
    claims_export(project=target, format="jsonl", out=again)

    def without_claim_ids(text):
        rows = [json.loads(line) for line in text.splitlines()]
        for row in rows:
            for claim in row["claims"]:
                claim.pop("claim_id")
        return rows

    assert without_claim_ids(again.getvalue()) == without_claim_ids(out.getvalue())


def test_upload_form_takes_a_system():
    from django.contrib.auth import get_user_model
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.test import Client
    from django.urls import reverse

    from annotate.models import Membership, Role

    project = ProjectFactory(slug="up")
    user = get_user_model().objects.create(username="lea")
    Membership.objects.create(project=project, user=user, role=Role.LEAD)
    client = Client()
    client.force_login(user)
    url = reverse("annotate:import", args=[project.slug])
    content = (DATA / "ragchecker.json").read_bytes()
    page = client.get(url).content.decode()
    assert 'name="system"' in page
    bad = client.post(
        url, {"file": SimpleUploadedFile("r.json", content), "format": "auto", "system": "@1"}
    )
    assert bad.status_code == 400
    assert not Answer.objects.filter(project=project).exists()
    response = client.post(
        url,
        {"file": SimpleUploadedFile("r.json", content), "format": "auto", "system": "rag@2"},
    )
    assert response.status_code == 200
    systems = set(
        Answer.objects.filter(project=project).values_list("system__name", "system__version")
    )
    assert systems == {("rag", "2")}
    assert all(
        external_id.startswith("rag@2:")
        for external_id in Answer.objects.filter(project=project).values_list(
            "external_id", flat=True
        )
    )
