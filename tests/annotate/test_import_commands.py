"""The import_answers and export_claims management commands."""

import io
import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from annotate.models import Answer, Claim, Label, Project
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


# A SUPPORTED label without a quote, and fields the native format does not know.
UNQUOTED = {
    "id": "a1",
    "question": "How long do refunds take?",
    "answer": "Fourteen days.",
    "pile": [{"id": "p1", "text": "Refunds take 14 days.", "url": "https://x"}],
    "claims": [
        {
            "text": "Refunds take 14 days.",
            "confidence_score": 0.9,
            "labels": [{"annotator": "ext", "verdict": "SUPPORTED", "rater_id": 7}],
        }
    ],
    "source_dataset": "third-party",
}


def run_attaching_output(*args):
    out, err = io.StringIO(), io.StringIO()
    try:
        call_command(*args, stdout=out, stderr=err)
    except CommandError as error:
        error.out, error.err = out.getvalue(), err.getvalue()
        raise
    return out.getvalue(), err.getvalue()


def _file(tmp_path, *records) -> str:
    path = tmp_path / "answers.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return str(path)


def test_a_rolled_back_create_does_not_say_created(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"id": "a", "question": "q", "answer": "a", "pile": [{"text": null}]}\n')
    with pytest.raises(CommandError) as failed:
        run_attaching_output("import_answers", str(path), "--project", "fresh", "--create")
    assert "Created project" not in failed.value.out
    assert not Project.objects.filter(slug="fresh").exists()


def test_create_takes_the_projects_settings_from_the_command_line(tmp_path):
    out, _ = run_attaching_output(
        "import_answers",
        _file(tmp_path, UNQUOTED),
        "--project",
        "ext",
        "--create",
        "--no-quote-required",
        "--analysts-per-claim",
        "2",
        "--double-labelled-share",
        "0.25",
    )
    project = Project.objects.get(slug="ext")
    assert project.quote_required is False
    assert project.analysts_per_claim == 2
    assert project.double_labelled_share == 0.25
    assert "Created project 'ext'" in out
    # Gold without quotes came in because the new project does not require them.
    assert Label.objects.filter(claim__project=project, verdict="SUPPORTED").count() == 1


def test_without_the_flag_a_new_project_requires_quotes_and_rolls_back(tmp_path):
    with pytest.raises(CommandError, match="needs a quote"):
        run_attaching_output(
            "import_answers", _file(tmp_path, UNQUOTED), "--project", "ext2", "--create"
        )
    assert not Project.objects.filter(slug="ext2").exists()


@pytest.mark.parametrize(
    ("option", "value"), [("--double-labelled-share", "1.5"), ("--analysts-per-claim", "0")]
)
def test_a_bad_setting_names_its_option_and_creates_nothing(option, value):
    with pytest.raises(CommandError, match=option) as failed:
        run_attaching_output("import_answers", str(DATA / "ragas.jsonl"), "--project", "bad", "--create",
            option, value)  # fmt: skip
    assert "Created project" not in failed.value.out
    assert not Project.objects.filter(slug="bad").exists()


def test_settings_flags_on_an_existing_project_are_refused(tmp_path):
    ProjectFactory(slug="there", quote_required=True)
    with pytest.raises(CommandError, match="exists: --quote-required/--no-quote-required"):
        run_attaching_output("import_answers", str(DATA / "ragas.jsonl"), "--project", "there",
            "--no-quote-required")  # fmt: skip
    assert Project.objects.get(slug="there").quote_required is True
    assert not Project.objects.get(slug="there").answers.exists()


def test_the_command_names_unknown_fields_with_their_line(tmp_path):
    other = dict(UNQUOTED, id="a2", extra_top=1)
    _, err = run_attaching_output(
        "import_answers",
        _file(tmp_path, UNQUOTED, other),
        "--project",
        "warn",
        "--create",
        "--no-quote-required",
    )
    for text in (
        "line 1, field source_dataset: unknown field, ignored",
        "line 1, field pile[0].url: unknown field, ignored",
        "line 1, field claims[0].confidence_score: unknown field, ignored",
        "line 1, field claims[0].labels[0].rater_id: unknown field, ignored",
        "line 2, field extra_top: unknown field, ignored",
    ):
        assert f"Warning: {text}" in err
    assert Project.objects.get(slug="warn").answers.count() == 2


def test_a_known_file_and_its_own_export_give_no_warning(tmp_path):
    ProjectFactory(slug="refunds")
    _, err = run_attaching_output(
        "import_answers", str(DATA / "native.jsonl"), "--project", "refunds"
    )
    assert "Warning" not in err
    target = tmp_path / "export.jsonl"
    run_attaching_output(
        "export_claims", "--project", "refunds", "--format", "jsonl", "--output", str(target)
    )
    ProjectFactory(slug="again")
    _, err = run_attaching_output("import_answers", str(target), "--project", "again")
    assert "Warning" not in err
