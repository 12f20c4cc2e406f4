"""The marking guidelines beside the task: rendered and sanitised, versioned, the version
recorded on every label saved and shown to leads."""

import pytest
from django.urls import reverse

from annotate.guidelines import guidelines_html
from annotate.models import Label, Project, Role, Verdict
from annotate.services.labels import label_save
from annotate.services.projects import project_settings_update
from tests.annotate.test_labelling import HTMX, build, logged_in, save_url
from tests.factories import ClaimFactory, MembershipFactory, UserFactory


def test_guidelines_markdown_is_rendered_and_everything_active_is_removed():
    html = guidelines_html(
        "# Deciding\n\nQuote **one sentence**.\n\n"
        "<script>alert(1)</script><img src=x onerror=alert(2)>"
        '<p style="color:red" onclick="steal()">styled</p>\n\n'
        "[bad](javascript:alert(3)) [good](https://example.org/guide)\n\n1. first\n2. second"
    )
    assert "<h3>Deciding</h3>" in html  # the page has its own h1 and h2
    assert "<strong>one sentence</strong>" in html
    assert '<a href="https://example.org/guide" rel="noopener noreferrer nofollow">good</a>' in html
    assert "<ol>\n<li>first</li>\n<li>second</li>\n</ol>" in html
    for active in ("<script", "alert(1)", "<img", "onerror", "javascript:", "style=", "onclick"):
        assert active not in html
    assert guidelines_html("  \n") == ""


@pytest.mark.django_db
def test_the_version_goes_up_only_when_the_guidelines_text_changes():
    project, *_ = build(guidelines="Quote the deciding sentence.")
    assert project.guidelines_version == 1
    project_settings_update(project=project, name="Renamed", guidelines=project.guidelines)
    assert Project.objects.get(pk=project.pk).guidelines_version == 1
    project_settings_update(project=project, guidelines="Quote the whole deciding sentence.")
    assert project.guidelines_version == 2
    assert Project.objects.get(pk=project.pk).guidelines_version == 2
    project_settings_update(project=project, reveal_after_save=True)
    assert Project.objects.get(pk=project.pk).guidelines_version == 2


@pytest.mark.django_db
def test_every_label_saved_records_the_guidelines_version_and_leads_see_older_ones(client):
    project, user, claims, _ = build(guidelines="v1 text")
    client = logged_in(client, user)
    client.post(save_url(project, claims[0]), {"verdict": "NOT_IN_PILE"}, **HTMX)
    assert Label.objects.get(claim=claims[0]).guideline_version == 1
    project_settings_update(project=project, guidelines="v2 text")
    client.post(save_url(project, claims[1]), {"verdict": "NOT_IN_PILE"}, **HTMX)
    assert Label.objects.get(claim=claims[1]).guideline_version == 2

    owner = UserFactory()
    MembershipFactory(project=project, user=owner, role=Role.OWNER)
    client.force_login(owner)
    html = client.get(reverse("annotate:settings", args=[project.slug])).content.decode()
    assert "<strong>version 2</strong>" in html
    assert '<tr><td>version 2 (current)</td><td class="num">1</td></tr>' in html
    assert 'version 1 <span class="tag review-flag">before the current guidelines</span>' in html


@pytest.mark.django_db
def test_the_adjudication_page_names_labels_saved_under_older_guidelines(client):
    claim = ClaimFactory(text="Refunds take 30 days.", labels_required=2)
    project = claim.project
    ana, bo, lead = UserFactory(), UserFactory(), UserFactory()
    for user, role in ((ana, Role.ANALYST), (bo, Role.ANALYST), (lead, Role.LEAD)):
        MembershipFactory(project=project, user=user, role=role)
    label_save(claim=claim, annotator=ana, verdict=Verdict.CONTRADICTED, require_quote=False)
    project_settings_update(project=project, guidelines="New rule")
    claim.project.refresh_from_db()
    label_save(claim=claim, annotator=bo, verdict=Verdict.NOT_IN_PILE)
    client.force_login(lead)
    html = client.get(reverse("annotate:adjudicate", args=[project.slug])).content.decode()
    assert html.count('data-testid="guideline-version"') == 2
    assert html.count('data-testid="predates-guidelines"') == 1
    assert "before the current guidelines (v2)" in html


@pytest.mark.django_db
def test_the_labelling_page_shows_the_guidelines_but_a_save_does_not_render_them(client):
    project, user, claims, _ = build(guidelines="## Quotes\n\nQuote **whole** sentences.")
    client = logged_in(client, user)
    html = client.get(reverse("annotate:label-next", args=[project.slug])).content.decode()
    assert '<details id="guidelines"' in html
    assert "<h4>Quotes</h4>" in html
    assert "<strong>whole</strong>" in html
    assert 'href="#guidelines" class="guidelines-open"' in html  # from the keys dialog
    saved = client.post(save_url(project, claims[0]), {"verdict": "NOT_IN_PILE"}, **HTMX)
    assert "Quote <strong>whole</strong>" not in saved.content.decode()
