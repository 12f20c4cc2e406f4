"""The dashboard of a project with two systems: a picker (all systems / one system), a snapshot
stored per system, and the report download and audit card of the system picked. The expected
counts come from the database directly (gold claims of each system's answers)."""

import io
import json

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from annotate.models import Gold, System, Verdict
from judges.models import Judge, JudgeVerdict
from metrics.models import ReportSnapshot

pytestmark = pytest.mark.django_db


@pytest.fixture
def demo(demo_project):
    return demo_project


@pytest.fixture
def lead():
    client = Client()
    client.force_login(get_user_model().objects.get(username="lead"))
    return client


def gold_counts(project, system=None):
    """(gold claims, SUPPORTED among them) outside abstentions, of `system`'s answers (None:
    every answer), counted in the database."""
    gold = Gold.objects.filter(claim__project=project, claim__answer__abstention=False)
    if system is not None:
        gold = gold.filter(claim__answer__system=system)
    return gold.count(), gold.filter(verdict=Verdict.SUPPORTED).count()


def recompute(client, project, capture, **params):
    with capture(execute=True):
        response = client.post(reverse("metrics:recompute", args=[project.slug]), params)
    assert response.status_code == 302
    return response


def test_the_picker_recomputes_and_shows_each_systems_report(
    demo, lead, django_capture_on_commit_callbacks
):
    a, b = System.objects.filter(project=demo).order_by("id")
    judge = Judge.objects.get(project=demo)
    url = reverse("metrics:dashboard", args=["demo"])
    page = lead.get(url, {"judge": judge.pk}).content.decode()
    assert '<nav class="dash-systems" aria-label="Answers of">' in page
    assert 'data-system="all" aria-current="page"' in page  # the default: every system
    assert f'data-system="{a.pk}" >' in page

    response = recompute(
        lead, demo, django_capture_on_commit_callbacks, judge=judge.pk, system=b.pk
    )
    assert response["Location"].endswith(f"?judge={judge.pk}&system={b.pk}")
    snapshot = ReportSnapshot.objects.filter(project=demo, judge=judge, system=b).latest("id")
    assert (snapshot.status, snapshot.all_systems) == ("done", False)
    total, supported = gold_counts(demo, b)
    assert snapshot.data["claims"]["total"] == total
    assert snapshot.data["claims"]["SUPPORTED"] == supported
    page = lead.get(url, {"judge": judge.pk, "system": b.pk}).content.decode()
    assert "This report covers the answers of system <strong>assistant@2024-07</strong>" in page
    assert f'data-system="{b.pk}" aria-current="page"' in page
    assert f"{total} gold claims of" in page
    # Links keep the system: the judge picker, the downloads, the audit card.
    assert f"?judge=none&amp;system={b.pk}" in page
    assert f'name="system" value="{b.pk}"' in page
    first = lead.get(url, {"judge": judge.pk, "system": a.pk}).content.decode()
    assert "This report covers the answers of system <strong>assistant@2024-06</strong>" in first
    # B has one SUPPORTED gold claim more than A (the demo fixes the refund deadline and the
    # dose, and invents a fee): the two snapshots are the two systems' figures.
    assert gold_counts(demo, a)[1] == supported - 1


def test_all_systems_pools_every_answer(demo, lead, django_capture_on_commit_callbacks):
    recompute(lead, demo, django_capture_on_commit_callbacks, judge="none", system="all")
    snapshot = ReportSnapshot.objects.get(project=demo, judge=None, all_systems=True)
    total, supported = gold_counts(demo)
    assert (snapshot.data["claims"]["total"], snapshot.data["claims"]["SUPPORTED"]) == (
        total,
        supported,
    )
    assert snapshot.data["system_scope"] == "all"
    assert "system" not in snapshot.data
    page = lead.get(
        reverse("metrics:dashboard", args=["demo"]), {"judge": "none", "system": "all"}
    ).content.decode()
    assert "This report covers the answers of all the project's 2 systems pooled" in page
    assert 'data-system="all" aria-current="page"' in page


def _half_up_percent(numerator: int, denominator: int) -> int:
    """A share in whole percents, halves up, by integer arithmetic (the pages' rule)."""
    return (200 * numerator + denominator) // (2 * denominator)


def test_the_default_dashboard_pools_every_system_with_each_ones_headline_beside_it(
    demo, lead, django_capture_on_commit_callbacks
):
    a, b = System.objects.filter(project=demo).order_by("id")
    url = reverse("metrics:dashboard", args=["demo"])
    # Gold only: no report of that scope yet, so no headline to show beside it.
    page = lead.get(url, {"judge": "none"}).content.decode()
    assert 'data-testid="systems-headlines"' not in page  # no pooled report to head either
    recompute(lead, demo, django_capture_on_commit_callbacks, judge="none", system="all")
    # One press computed the pooled report and each system's own.
    done = ReportSnapshot.objects.filter(project=demo, judge=None, status="done")
    assert sorted((s.all_systems, s.system_id or 0) for s in done) == [
        (False, a.pk),
        (False, b.pk),
        (True, 0),
    ]
    page = lead.get(url, {"judge": "none"}).content.decode()
    assert "This report covers the answers of all the project's 2 systems pooled" in page
    assert 'data-testid="systems-headlines"' in page
    assert page.count('<circle cx="') == 3  # the pooled dot and one per system
    for key, system in (("all", None), (a.pk, a), (b.pk, b)):
        total, supported = gold_counts(demo, system)
        row = page.split(f'data-system-row="{key}">')[1].split("</tr>")[0]
        assert f'<td class="num">{_half_up_percent(supported, total)}%</td>' in row, key
        assert f'<td class="num">{total}</td>' in row, key
    assert "not computed yet" not in page


def test_each_systems_headline_is_the_figure_of_its_own_dashboard(demo, lead):
    """With the demo's judge (its snapshots computed by demo_load): the row beside the pooled
    report reads what the system's own dashboard reads in its summary."""
    judge = Judge.objects.get(project=demo)
    url = reverse("metrics:dashboard", args=["demo"])
    pooled = lead.get(url, {"judge": judge.pk}).content.decode()
    figure = 'data-figure="summary-faithfulness">'
    for system in System.objects.filter(project=demo):
        own = lead.get(url, {"judge": judge.pk, "system": system.pk}).content.decode()
        value = own.split(figure)[1].split("<")[0]
        row = pooled.split(f'data-system-row="{system.pk}">')[1].split("</tr>")[0]
        assert f'<td class="num">{value}</td>' in row
    headline = pooled.split(figure)[1].split("<")[0]
    row = pooled.split('data-system-row="all">')[1].split("</tr>")[0]
    assert f'<td class="num">{headline}</td>' in row


def test_one_systems_dashboard_pictures_its_estimates_on_the_first_screen(demo, lead):
    """With a judge, one system's dashboard draws its estimates side by side, the headline
    first and equal to the summary's figure; the gold-only one has no such picture."""
    judge = Judge.objects.get(project=demo)
    system = System.objects.filter(project=demo).order_by("id").first()
    url = reverse("metrics:dashboard", args=["demo"])
    page = lead.get(url, {"judge": judge.pk, "system": system.pk}).content.decode()
    picture = page.split('data-testid="estimates-picture"')[1].split("</table>")[0]
    rows = picture.split("<tbody>")[1].split("<tr")[1:]
    assert len(rows) == 3  # gold only, PPI++, Rogan–Gladen
    assert rows[0].startswith(' class="pooled">')
    assert "(headline)" in rows[0]
    figure = page.split('data-figure="summary-faithfulness">')[1].split("<")[0]
    assert f'<td class="num">{figure}</td>' in rows[0]
    assert picture.count('<circle cx="') == 3
    assert 'data-testid="systems-headlines"' not in page


def test_report_download_and_audit_card_are_of_the_system_picked(
    demo, lead, django_capture_on_commit_callbacks
):
    a, b = System.objects.filter(project=demo).order_by("id")
    judge = Judge.objects.get(project=demo)
    recompute(lead, demo, django_capture_on_commit_callbacks, judge=judge.pk, system=b.pk)
    params = {"judge": judge.pk, "system": b.pk}
    download = lead.get(reverse("metrics:report-download", args=["demo"]), params)
    report = json.loads(download.content)
    assert report["system"]["version"] == "2024-07"
    assert "assistant-2024-07" in download["Content-Disposition"]
    card = json.loads(
        lead.get(reverse("metrics:audit-card", args=["demo"]), {**params, "format": "json"}).content
    )
    assert card["system"] == "assistant@2024-07"
    # Audited: B's gold claims (outside abstentions) that the judge judged.
    audited = (
        JudgeVerdict.objects.filter(
            run__judge=judge,
            claim__answer__system=b,
            claim__answer__abstention=False,
            claim__gold__isnull=False,
        )
        .values("claim_id")
        .distinct()
        .count()
    )
    assert card["audit_sample_size"] == audited
    page = lead.get(reverse("metrics:audit-card-page", args=["demo"]), params).content.decode()
    assert "Answers of" in page
    assert "assistant@2024-07" in page
    assert f"&amp;system={b.pk}" in page  # its downloads keep the system
    assert lead.get(reverse("metrics:dashboard", args=["demo"]), {"system": 0}).status_code == 404


def test_a_project_of_one_system_has_no_picker_and_stores_no_system(
    django_capture_on_commit_callbacks,
):
    from annotate.models import Membership, Role
    from tests.compare.builders import answer_record, import_records
    from tests.factories import ProjectFactory

    project = ProjectFactory(slug="solo")
    Membership.objects.create(
        project=project, user=get_user_model().objects.create_user("solo"), role=Role.LEAD
    )
    import_records(project, [answer_record("q1", "only", [("SUPPORTED", None)])])
    client = Client()
    client.force_login(get_user_model().objects.get(username="solo"))
    recompute(client, project, django_capture_on_commit_callbacks, judge="none")
    snapshot = ReportSnapshot.objects.get(project=project)
    assert (snapshot.system, snapshot.all_systems) == (None, False)
    assert "system" not in snapshot.data
    assert "systems" not in snapshot.data
    page = client.get(reverse("metrics:dashboard", args=["solo"])).content.decode()
    assert "dash-systems" not in page
    assert "&amp;system=" not in page
    only = System.objects.get(project=project)
    assert (
        client.get(reverse("metrics:dashboard", args=["solo"]), {"system": only.pk}).status_code
        == 404
    )


def test_commands_take_system_all(demo):
    out = io.StringIO()
    call_command("report", "--project", "demo", "--system", "all", stdout=out, stderr=io.StringIO())
    report = json.loads(out.getvalue())
    assert report["system_scope"] == "all"
    assert report["claims"]["total"] == gold_counts(demo)[0]
    out = io.StringIO()
    call_command(
        "export_audit",
        "--project",
        "demo",
        "--judge",
        "baseline",
        "--system",
        "assistant@2024-07",
        stdout=out,
    )
    assert json.loads(out.getvalue())["system"] == "assistant@2024-07"
