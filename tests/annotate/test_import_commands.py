"""The import_answers and export_claims management commands."""

import io
import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from annotate.models import Answer, Claim, Project
from interchange.services import imports
from tests.factories import ProjectFactory

DATA = Path(__file__).parent / "data"
pytestmark = pytest.mark.django_db


def run(*args):
    out, err = io.StringIO(), io.StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_import_answers_command_imports_and_reports(monkeypatch):
    monkeypatch.setattr(imports, "BATCH_ANSWERS", 2)
    project = ProjectFactory(slug="refunds")
    out, err = run("import_answers", str(DATA / "native.jsonl"), "--project", "refunds")
    assert "Imported 3 answers (native, jsonl): 5 passages, 3 claims, 5 labels" in out
    # Progress, one line per batch.
    assert "2 answers read and checked" in err
    assert "3 answers read and checked" in err
    assert Answer.objects.filter(project=project).count() == 3


def test_import_answers_command_with_explicit_format():
    ProjectFactory(slug="rc")
    out, _ = run(
        "import_answers", str(DATA / "ragchecker.json"), "--project", "rc", "--format", "ragchecker"
    )
    assert "Imported 2 answers (ragchecker, json)" in out
    assert "4 judge verdicts in 1 judge run;" in out


def test_import_answers_command_creates_the_project():
    out, _ = run(
        "import_answers",
        str(DATA / "ragas.jsonl"),
        "--project",
        "new-one",
        "--create",
        "--name",
        "New one",
    )
    project = Project.objects.get(slug="new-one")
    assert project.name == "New one"
    assert project.answers.count() == 2
    assert "Created project 'new-one'" in out


def test_import_answers_command_unknown_project_without_create():
    with pytest.raises(CommandError, match="There is no project 'nope'; pass --create"):
        run("import_answers", str(DATA / "ragas.jsonl"), "--project", "nope")


def test_import_answers_command_with_create_rolls_back_the_project_on_a_bad_file(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"id": "a", "question": "q", "answer": "a", "pile": [{"text": null}]}\n')
    with pytest.raises(CommandError) as failed:
        run("import_answers", str(path), "--project", "fresh", "--create")
    assert "line 1, field pile[0].text: expected a string, got null" in str(failed.value)
    assert "Nothing was imported" in str(failed.value)
    assert not Project.objects.filter(slug="fresh").exists()


def test_import_answers_command_missing_file():
    ProjectFactory(slug="p")
    with pytest.raises(CommandError, match="No such file"):
        run("import_answers", "/nonexistent/file.jsonl", "--project", "p")


@pytest.mark.parametrize("format", ["csv", "jsonl"])
def test_export_claims_command_writes_a_file(tmp_path, format):
    project = ProjectFactory(slug="refunds")
    run("import_answers", str(DATA / "native.jsonl"), "--project", "refunds")
    target = tmp_path / f"claims.{format}"
    _, err = run(
        "export_claims", "--project", "refunds", "--format", format, "--output", str(target)
    )
    assert f"Wrote {target}" in err
    text = target.read_text(encoding="utf-8")
    if format == "jsonl":
        records = [json.loads(line) for line in text.splitlines()]
        assert [len(r["claims"]) for r in records] == [2, 1, 0]
        assert (
            records[1]["claims"][0]["labels"][0]["quote"]["text"] == "המינון המרבי הוא 4 גרם ביום"
        )
    else:
        assert len(text.splitlines()) == 1 + Claim.objects.filter(project=project).count()


def test_export_claims_command_to_standard_output():
    ProjectFactory(slug="refunds")
    run("import_answers", str(DATA / "ragchecker.json"), "--project", "refunds")
    out, _ = run("export_claims", "--project", "refunds", "--format", "csv")
    header = out.splitlines()[0]
    assert header.startswith("answer_id,claim_id,position,text")
    assert "judge:ragchecker@imported:verdict" in header


def test_export_claims_command_unknown_project():
    with pytest.raises(CommandError, match="There is no project 'nope'"):
        run("export_claims", "--project", "nope", "--format", "csv")
