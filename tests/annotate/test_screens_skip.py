"""Skipping a claim with a reason: out of that analyst's queue (not another's), onto the
leads' list, back again when a lead says so; not atomic shows in the claims editor."""

import pytest
from django.urls import reverse

from annotate.models import ClaimSkip, Label, Reservation, Role
from tests.annotate.test_labelling import HTMX, build, logged_in
from tests.factories import MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db


def skip_url(project, claim):
    return reverse("annotate:label-skip", args=[project.slug, claim.pk])


def served_id(response) -> int:
    return int(response.content.decode().split('data-claim-id="')[1].split('"')[0])


def test_a_skipped_claim_leaves_that_analysts_queue_and_reaches_the_leads_list(client):
    project, ana, claims, _ = build()
    client = logged_in(client, ana)
    first = client.get(reverse("annotate:label-next", args=[project.slug]), **HTMX)
    assert served_id(first) == claims[0].pk
    response = client.post(
        skip_url(project, claims[0]),
        {"reason": "not_atomic", "note": "two facts in one"},
        **HTMX,
    )
    html = response.content.decode()
    assert "Skipped “Refunds go to the card within 14 days.” (Not atomic" in html
    assert served_id(response) == claims[1].pk  # the next claim, at once
    assert not Reservation.objects.filter(user=ana, claim=claims[0]).exists()
    assert not Label.objects.exists()
    # Labelling the other claim empties this analyst's queue: the skipped one never returns.
    client.post(
        reverse("annotate:label-save", args=[project.slug, claims[1].pk]),
        {"verdict": "NOT_IN_PILE"},
        **HTMX,
    )
    empty = client.get(reverse("annotate:label-next", args=[project.slug]))
    assert "Your queue is empty" in empty.content.decode()

    # Another analyst still gets it.
    bo = UserFactory()
    MembershipFactory(project=project, user=bo)
    client.force_login(bo)
    assert served_id(client.get(reverse("annotate:label-next", args=[project.slug]), **HTMX)) == (
        claims[0].pk
    )

    lead = UserFactory()
    MembershipFactory(project=project, user=lead, role=Role.LEAD)
    client.force_login(lead)
    listing = client.get(reverse("annotate:skipped", args=[project.slug])).content.decode()
    assert "Refunds go to the card within 14 days." in listing
    assert "two facts in one" in listing
    assert ana.get_username() in listing
    assert "split it" in listing
    editor = client.get(
        reverse("annotate:claims-edit", args=[project.slug, claims[0].answer_id])
    ).content.decode()
    assert editor.count('data-testid="flagged-not-atomic"') == 1

    skip = ClaimSkip.objects.get()
    client.post(reverse("annotate:skipped-return", args=[project.slug, skip.pk]))
    assert not ClaimSkip.objects.exists()
    Reservation.objects.filter(user=bo).delete()  # bo let it go without labelling
    client.force_login(ana)
    back = client.get(reverse("annotate:label-next", args=[project.slug]), **HTMX)
    assert served_id(back) == claims[0].pk


def test_a_skip_needs_a_reason_and_analysts_cannot_see_the_list(client):
    project, ana, claims, _ = build()
    client = logged_in(client, ana)
    response = client.post(skip_url(project, claims[0]), {"reason": ""}, **HTMX)
    assert "Say why you skip the claim." in response.content.decode()
    assert not ClaimSkip.objects.exists()
    assert client.get(reverse("annotate:skipped", args=[project.slug])).status_code == 404


def test_adjudicating_moves_the_waiting_count_and_a_claim_without_span_has_no_empty_mark(client):
    from annotate.models import Verdict
    from annotate.services.labels import label_save
    from tests.factories import ClaimFactory

    claim = ClaimFactory(text="Refunds take 30 days.", labels_required=2, answer__text="Yes.")
    assert claim.span_start is None
    project = claim.project
    ana, bo, lead = UserFactory(), UserFactory(), UserFactory()
    for user, role in ((ana, Role.ANALYST), (bo, Role.ANALYST), (lead, Role.LEAD)):
        MembershipFactory(project=project, user=user, role=role)
    label_save(claim=claim, annotator=ana, verdict=Verdict.CONTRADICTED, require_quote=False)
    label_save(claim=claim, annotator=bo, verdict=Verdict.NOT_IN_PILE)
    client.force_login(lead)
    listing = client.get(reverse("annotate:adjudicate", args=[project.slug])).content.decode()
    assert '<span id="adjudication-waiting" class="muted small">(1 waiting)</span>' in listing
    assert '<mark class="claim-span"></mark>' not in listing
    assert "<mark" not in listing.split("In the answer")[1].split("</p>")[1]
    decided = client.post(
        reverse("annotate:adjudicate-claim", args=[project.slug, claim.pk]),
        {"verdict": "NOT_IN_PILE", "reason": "No passage says 30 days."},
        **HTMX,
    ).content.decode()
    assert (
        '<span id="adjudication-waiting" class="muted small" hx-swap-oob="true">(0 waiting)</span>'
    ) in decided


def test_the_answers_list_searches_filters_by_risk_pages_on_the_server_and_shows_no_none(client):
    from tests.factories import AnswerFactory, ProjectFactory

    project = ProjectFactory()
    user = UserFactory()
    MembershipFactory(project=project, user=user)
    for n in range(60):
        AnswerFactory(
            project=project,
            external_id=f"q{n}",
            position=n,
            question=f"Question {n} about {'parking' if n % 3 == 0 else 'opening hours'}",
            risk_category="financial" if n % 2 == 0 else "none",
        )
    project.answers_count = 60
    project.save(update_fields=["answers_count"])
    client.force_login(user)
    url = reverse("annotate:project-detail", args=[project.slug])
    everything = client.get(url).content.decode()
    assert "<td>None</td>" not in everything
    assert "<td>—</td>" in everything
    found = client.get(url, {"q": "parking"}).content.decode()
    assert "(20 found)" in found  # n = 0, 3, …, 57
    both = client.get(url, {"q": "parking", "risk": "financial"}).content.decode()
    assert "(10 found)" in both  # n divisible by 6
    assert both.count("<td>Financial</td>") == 10
    paged = client.get(url, {"risk": "none", "page": 1}).content.decode()
    assert "(30 found)" in paged
    assert "Page 1 of 1" in paged
    many = client.get(url, {"q": "Question"}).content.decode()
    assert "Page 1 of 2" in many
    assert "?page=2&amp;q=Question" in many


def test_undo_after_a_skip_takes_back_the_skip_not_the_earlier_label(client):
    project, ana, claims, (first, _) = build()
    client = logged_in(client, ana)
    client.post(
        reverse("annotate:label-save", args=[project.slug, claims[0].pk]),
        {"verdict": "SUPPORTED", "passage": first.pk, "quote": "are paid within 14 days."},
        **HTMX,
    )
    client.post(skip_url(project, claims[1]), {"reason": "not_checkable"}, **HTMX)
    undo = reverse("annotate:label-undo", args=[project.slug])

    response = client.post(undo, **HTMX)
    html = response.content.decode()
    assert "Skip of claim “Cash is not refunded.” undone: it is back in your queue." in html
    assert served_id(response) == claims[1].pk
    assert not ClaimSkip.objects.exists()
    assert Reservation.objects.filter(user=ana, claim=claims[1]).exists()
    assert Label.objects.get(annotator=ana).claim == claims[0]  # the label is untouched
    # Its queue serves the claim again.
    again = client.get(reverse("annotate:label-next", args=[project.slug]), **HTMX)
    assert served_id(again) == claims[1].pk

    # The next undo reaches the label before it.
    html = client.post(undo, **HTMX).content.decode()
    assert "Label undone: your SUPPORTED label" in html
    assert not Label.objects.exists()


def test_undo_of_a_skip_without_htmx_redirects_to_the_claim_with_the_message(client):
    project, ana, claims, _ = build()
    client = logged_in(client, ana)
    client.post(skip_url(project, claims[0]), {"reason": "needs_expertise"})
    response = client.post(reverse("annotate:label-undo", args=[project.slug]), follow=True)
    assert response.redirect_chain[0][0] == reverse(
        "annotate:label-claim", args=[project.slug, claims[0].pk]
    )
    assert "Skip of claim “Refunds go to the card within 14 days.” undone" in (
        response.content.decode()
    )
    assert not ClaimSkip.objects.exists()
