"""import_answers --create: no "Created project" for a project rolled back, the new project's
settings from the command line; unknown fields named in a warning (command and import page)."""

import io
import json
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse

from annotate.models import Label, Membership, Project, Role
from tests.factories import ProjectFactory

DATA = Path(__file__).parent / "data"
pytestmark = pytest.mark.django_db

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


def run(*args):
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
        run("import_answers", str(path), "--project", "fresh", "--create")
    assert "Created project" not in failed.value.out
    assert not Project.objects.filter(slug="fresh").exists()


def test_create_takes_the_projects_settings_from_the_command_line(tmp_path):
    out, _ = run(
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
        run("import_answers", _file(tmp_path, UNQUOTED), "--project", "ext2", "--create")
    assert not Project.objects.filter(slug="ext2").exists()


@pytest.mark.parametrize(
    ("option", "value"), [("--double-labelled-share", "1.5"), ("--analysts-per-claim", "0")]
)
def test_a_bad_setting_names_its_option_and_creates_nothing(option, value):
    with pytest.raises(CommandError, match=option) as failed:
        run("import_answers", str(DATA / "ragas.jsonl"), "--project", "bad", "--create",
            option, value)  # fmt: skip
    assert "Created project" not in failed.value.out
    assert not Project.objects.filter(slug="bad").exists()


def test_settings_flags_on_an_existing_project_are_refused(tmp_path):
    ProjectFactory(slug="there", quote_required=True)
    with pytest.raises(CommandError, match="exists: --quote-required/--no-quote-required"):
        run("import_answers", str(DATA / "ragas.jsonl"), "--project", "there",
            "--no-quote-required")  # fmt: skip
    assert Project.objects.get(slug="there").quote_required is True
    assert not Project.objects.get(slug="there").answers.exists()


def test_the_command_names_unknown_fields_with_their_line(tmp_path):
    other = dict(UNQUOTED, id="a2", extra_top=1)
    _, err = run(
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
    _, err = run("import_answers", str(DATA / "native.jsonl"), "--project", "refunds")
    assert "Warning" not in err
    target = tmp_path / "export.jsonl"
    run("export_claims", "--project", "refunds", "--format", "jsonl", "--output", str(target))
    ProjectFactory(slug="again")
    _, err = run("import_answers", str(target), "--project", "again")
    assert "Warning" not in err


def test_the_import_page_names_unknown_fields():
    project = ProjectFactory(slug="page", quote_required=False)
    user = get_user_model().objects.create(username="lea")
    Membership.objects.create(project=project, user=user, role=Role.LEAD)
    client = Client()
    client.force_login(user)
    content = (json.dumps(UNQUOTED) + "\n").encode()
    response = client.post(
        reverse("annotate:import", args=[project.slug]),
        {"file": SimpleUploadedFile("a.jsonl", content), "format": "auto"},
    )
    assert response.status_code == 200
    page = response.content.decode()
    assert 'data-testid="import-warnings"' in page
    assert "4 unknown fields ignored" in page
    assert "line 1, field claims[0].confidence_score: unknown field, ignored" in page
