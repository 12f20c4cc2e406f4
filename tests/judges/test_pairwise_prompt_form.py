"""The pairwise prompt on the judge's form: shown with its default, refused (naming what is
missing) without a placeholder the runner fills, stored, versioned by its hash, and what the
next pairwise run freezes."""

import hashlib

import pytest
from django.urls import reverse

from judges.models import Judge
from judges.prompts import DEFAULT_PAIRWISE_PROMPT
from judges.services import pairwise_run_start
from tests.factories import PASSWORD
from tests.judges.test_pairwise import _systems

pytestmark = pytest.mark.django_db

CUSTOM = (
    "Q: {question}\n1: {answer_1}\nits pile: {pile_1}\n2: {answer_2}\nits pile: {pile_2}\n"
    "Which is more faithful to its own pile? FIRST, SECOND or TIE."
)


def sha12(text):
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


@pytest.fixture
def lead_client(client, lead, llm_endpoints):
    llm_endpoints({"name": "local", "base_url": "http://127.0.0.1:9/v1", "models": ["gpt-x"]})
    client.login(username=lead.username, password=PASSWORD)
    return client


BASE = {
    "backend": "openai",
    "model": "gpt-x",
    "endpoint": "local",
    "temperature": 0,
    "max_concurrency": 4,
    "timeout_seconds": 10,
    "max_retries": 2,
}


def test_the_create_form_shows_the_default_pairwise_prompt(lead_client, project):
    page = lead_client.get(reverse("judges:judge-list", args=[project.slug])).content.decode()
    assert 'name="pairwise_prompt"' in page
    assert "Reply with exactly one word: FIRST if answer 1 is more faithful to its pile" in page
    assert "{answer_1}, {pile_1}, {answer_2}, {pile_2}, all required" in page


@pytest.mark.parametrize(
    ("drop", "named"),
    [
        (["{pile_2}"], "must contain {pile_2}:"),
        (["{pile_1}", "{pile_2}"], "must contain {pile_1} and {pile_2}:"),
        (["{question}"], "must contain {question}:"),
    ],
)
def test_a_pairwise_prompt_missing_a_placeholder_is_refused_naming_it(
    lead_client, project, drop, named
):
    text = CUSTOM
    for placeholder in drop:
        text = text.replace(placeholder, "")
    url = reverse("judges:judge-create", args=[project.slug])
    response = lead_client.post(url, {**BASE, "name": "pw", "pairwise_prompt": text})
    assert response.status_code == 400
    assert f"The pairwise prompt {named}" in response.content.decode()
    assert not Judge.objects.filter(name="pw").exists()


def test_a_custom_pairwise_prompt_is_stored_versioned_and_frozen_by_the_next_run(
    lead_client, project, django_capture_on_commit_callbacks
):
    url = reverse("judges:judge-create", args=[project.slug])
    response = lead_client.post(url, {**BASE, "name": "pw", "pairwise_prompt": CUSTOM})
    assert response.status_code == 302
    judge = Judge.objects.get(name="pw")
    assert judge.parameters["pairwise_prompt"] == CUSTOM
    page = lead_client.get(response["Location"]).content.decode()
    assert f'<code data-testid="pairwise-prompt-version">{sha12(CUSTOM)}</code>' in page
    assert "Which is more faithful to its own pile? FIRST, SECOND or TIE." in page  # edit form
    a, b = _systems(project, n=3)
    with django_capture_on_commit_callbacks(execute=False):
        run = pairwise_run_start(judge=judge, a=a, b=b)
    assert run.prompt_version == sha12(CUSTOM)
    assert run.parameters["pairwise_prompt"] == CUSTOM


def test_blank_is_the_default_and_an_edit_changes_the_version(lead_client, project):
    create = reverse("judges:judge-create", args=[project.slug])
    response = lead_client.post(create, {**BASE, "name": "pw", "pairwise_prompt": ""})
    assert response.status_code == 302
    judge = Judge.objects.get(name="pw")
    assert "pairwise_prompt" not in judge.parameters
    page = lead_client.get(response["Location"]).content.decode()
    assert f">{sha12(DEFAULT_PAIRWISE_PROMPT)}</code> <span class=" in page
    assert "(the default)" in page

    edit = reverse("judges:judge-update", args=[project.slug, judge.pk])
    form = {**BASE, "name": "pw", "verify_prompt": judge.verify_prompt}
    bad = lead_client.post(edit, {**form, "pairwise_prompt": "Which is better? {question}"})
    assert bad.status_code == 400
    assert "must contain {answer_1}, {pile_1}, {answer_2} and {pile_2}" in bad.content.decode()
    judge.refresh_from_db()
    assert "pairwise_prompt" not in judge.parameters
    done = lead_client.post(edit, {**form, "pairwise_prompt": CUSTOM}, follow=True)
    assert f"pairwise prompt version {sha12(CUSTOM)}" in done.content.decode()
    judge.refresh_from_db()
    assert judge.pairwise_prompt == CUSTOM
    # The verify prompt's version is untouched by the pairwise one.
    assert judge.prompt_version == sha12(judge.verify_prompt)


def test_add_judge_takes_a_pairwise_prompt_file_and_names_a_missing_placeholder(
    project, llm_endpoints, tmp_path
):
    from django.core.management import CommandError, call_command

    llm_endpoints({"name": "local", "base_url": "http://127.0.0.1:9/v1", "models": ["gpt-x"]})
    good, bad = tmp_path / "good.txt", tmp_path / "bad.txt"
    good.write_text(CUSTOM, encoding="utf-8")
    bad.write_text(CUSTOM.replace("{answer_2}", ""), encoding="utf-8")
    options = {"project": project.slug, "backend": "openai", "endpoint": "local", "model": "gpt-x"}
    with pytest.raises(
        CommandError, match=r"pairwise_prompt: The pairwise prompt must contain \{answer_2\}"
    ):
        call_command("add_judge", name="bad", pairwise_prompt_file=str(bad), **options)
    call_command("add_judge", name="good", pairwise_prompt_file=str(good), **options)
    assert Judge.objects.get(name="good").pairwise_prompt_version == sha12(CUSTOM)
