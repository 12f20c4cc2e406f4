"""The queue-design page's judge-run menu (issue 32 item 7): it opens on the newest finished
verify run (a run imported without a finish time comes after the timed ones), keeps the run the
applied design uses while that run is offered, and where no run has finished says why the menu
is empty and where to start one, or which run is still judging."""

import re
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from annotate.models import Project, Role
from judges.models import JudgeRun
from tests.factories import JudgeRunFactory, MembershipFactory, ProjectFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def lead_client(client):
    def login(project):
        client.force_login(MembershipFactory(project=project, role=Role.LEAD).user)
        return client

    return login


def _menu(client, project) -> tuple[list[tuple[str, str]], str, str]:
    """(options as (value, text), the selected value, the page's text)."""
    html = client.get(reverse("metrics:queue-design", args=[project.slug])).content.decode()
    select = re.search(r'<select name="design_run_id".*?</select>', html, re.S).group(0)
    options = re.findall(r'<option value="([^"]*)"( selected)?>([^<]*)</option>', select)
    selected = [value for value, chosen, _ in options if chosen]
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", html))
    return [(value, label) for value, _, label in options], selected[0] if selected else "", text


def _finished(project, name, minutes_ago):
    when = None if minutes_ago is None else timezone.now() - timedelta(minutes=minutes_ago)
    return JudgeRunFactory(
        judge__project=project, judge__name=name, project=project, finished_at=when
    )


def test_the_menu_opens_on_the_newest_finished_run(lead_client):
    project = ProjectFactory()
    imported = _finished(project, "imported", None)
    older = _finished(project, "older", 60)
    newest = _finished(project, "newest", 5)
    client = lead_client(project)
    options, selected, _ = _menu(client, project)
    assert selected == str(newest.pk)
    assert [value for value, _ in options] == [
        "",
        str(newest.pk),
        str(older.pk),
        str(imported.pk),
    ]
    assert options[0][1] == "— none (the uniform design needs no run)"

    Project.objects.filter(pk=project.pk).update(queue_design="stratified", design_run_id=older.pk)
    assert _menu(client, project)[1] == str(older.pk)  # the run the design uses
    JudgeRun.objects.filter(pk=older.pk).update(status=JudgeRun.Status.RUNNING)  # a retry
    assert _menu(client, project)[1] == str(newest.pk)


def test_without_a_finished_run_the_page_says_where_to_start_one(lead_client):
    project = ProjectFactory()
    client = lead_client(project)
    options, selected, text = _menu(client, project)
    assert options == [("", "— no finished judge run yet")]
    assert selected == ""
    assert (
        "No judge run has finished in this project yet: the active and stratified designs "
        "need one. Start a judge run on the Judges page."
    ) in text


def test_a_run_still_judging_is_named_until_it_has_finished(lead_client):
    project = ProjectFactory()
    running = JudgeRunFactory(
        judge__project=project,
        judge__name="slow",
        project=project,
        status=JudgeRun.Status.RUNNING,
        total=54,
        done=20,
    )
    client = lead_client(project)
    options, _, text = _menu(client, project)
    assert options == [("", "— no finished judge run yet")]
    assert (
        f"Run {running.pk} of slow is still judging (20 of 54 claims): it is offered here once "
        "it has finished (its progress)."
    ) in text
    assert "No judge run has finished" not in text
