"""The claims editor page (leads): split, edit, split at, merge, delete, add, abstention; with
and without htmx."""

import pytest
from django.urls import reverse

from annotate.models import Claim, LabelHistory, Role, Verdict
from annotate.services.claims import claims_split
from annotate.services.labels import label_save
from tests.factories import AnswerFactory, JudgeFactory, MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def setup(client):
    lead = UserFactory(username="lead")
    answer = AnswerFactory(
        text="Refunds take 14 days and are issued to the original card. I hope this helps."
    )
    MembershipFactory(project=answer.project, user=lead, role=Role.LEAD)
    client.force_login(lead)
    return client, answer, lead


def _url(name, answer_or_claim, project):
    return reverse(f"annotate:{name}", args=[project.slug, answer_or_claim.pk])


def test_claims_edit_page_shows_the_answer_and_split_form(setup):
    client, answer, _ = setup
    response = client.get(_url("claims-edit", answer, answer.project))
    assert response.status_code == 200
    html = response.content.decode()
    assert "Split into claims" in html
    assert "No claims yet" in html


def test_claims_edit_is_404_for_an_analyst(client):
    answer = AnswerFactory()
    analyst = UserFactory()
    MembershipFactory(project=answer.project, user=analyst, role=Role.ANALYST)
    client.force_login(analyst)
    assert client.get(_url("claims-edit", answer, answer.project)).status_code == 404
    response = client.post(_url("claims-split", answer, answer.project), {"method": "rule"})
    assert response.status_code == 404
    assert not answer.claims.exists()


def test_split_without_htmx_redirects_back_with_a_message(setup):
    client, answer, _ = setup
    response = client.post(_url("claims-split", answer, answer.project), {"method": "rule"})
    assert response.status_code == 302
    assert response["Location"] == _url("claims-edit", answer, answer.project)
    page = client.get(response["Location"]).content.decode()
    assert "Split into 2 new claims." in page
    assert "Refunds are issued to the original card." in page
    assert answer.claims.count() == 2


def test_split_with_htmx_returns_only_the_claims_region(setup):
    client, answer, _ = setup
    response = client.post(_url("claims-split", answer, answer.project), {"method": "rule"}, **HTMX)
    html = response.content.decode()
    assert response.status_code == 200
    assert html.lstrip().startswith('<div id="claims"')
    assert "<html" not in html
    assert "Refunds take 14 days." in html
    # The answer text is shown with each claim's source highlighted.
    assert (
        '<mark class="claim-span" title="Claim 2">are issued to the original card.</mark>' in html
    )


def test_resplit_is_refused_with_a_clear_error_in_place(setup):
    client, answer, lead = setup
    claims_split(answer=answer, user=lead)
    response = client.post(_url("claims-split", answer, answer.project), {"method": "rule"}, **HTMX)
    assert response.status_code == 200
    assert "already has 2 claims" in response.content.decode()


def test_llm_split_is_not_made_in_the_claims_request(setup):
    """Splitting by LLM calls an endpoint: the claims page hands it to a job (judges)."""
    client, answer, _ = setup
    JudgeFactory(project=answer.project)
    response = client.post(_url("claims-split", answer, answer.project), {"method": "llm"}, **HTMX)
    assert "runs as a job on a worker" in response.content.decode()
    assert not answer.claims.exists()
    page = client.get(_url("claims-edit", answer, answer.project)).content.decode()
    assert f"/p/{answer.project.slug}/answers/{answer.pk}/split-by-llm/" in page


def test_edit_a_labelled_claim_flags_it_and_says_so(setup):
    client, answer, lead = setup
    claim, _ = claims_split(answer=answer, user=lead)
    analyst = UserFactory()
    MembershipFactory(project=answer.project, user=analyst)
    label_save(claim=claim, annotator=analyst, verdict=Verdict.NOT_IN_PILE)
    response = client.post(
        _url("claim-edit", claim, answer.project), {"text": "Refunds take ten days."}, **HTMX
    )
    html = response.content.decode()
    assert "flagged for review" in html
    assert "needs review" in html
    claim.refresh_from_db()
    assert claim.text == "Refunds take ten days."
    assert LabelHistory.objects.filter(claim=claim, action="flagged").count() == 1


def test_split_at_by_typed_words_and_by_utf16_cursor(setup):
    client, answer, lead = setup
    answer.text = "Refunds 💳 take 14 days to the card."
    answer.save()
    claim = Claim.objects.create(
        project=answer.project, answer=answer, text="Refunds 💳 take 14 days to the card."
    )
    url = _url("claim-split-at", claim, answer.project)
    client.post(url, {"before": "to the card."})
    texts = list(answer.claims.order_by("position").values_list("text", flat=True))
    assert texts == ["Refunds 💳 take 14 days", "to the card."]
    # The browser's caret before "take" is 11 in UTF-16 (the emoji counts two).
    client.post(url, {"at_utf16": "11"}, **HTMX)
    texts = list(answer.claims.order_by("position").values_list("text", flat=True))
    assert texts == ["Refunds 💳", "take 14 days", "to the card."]


def test_merge_and_delete_and_add(setup):
    client, answer, lead = setup
    first, second = claims_split(answer=answer, user=lead)
    response = client.post(_url("claim-merge", first, answer.project), **HTMX)
    assert "Merged into claim 1." in response.content.decode()
    merged = answer.claims.get()
    assert merged.text == "Refunds take 14 days. Refunds are issued to the original card."

    client.post(_url("claim-add", answer, answer.project), {"text": "Shipping is free."})
    assert answer.claims.count() == 2
    response = client.post(_url("claim-delete", merged, answer.project))
    assert response.status_code == 302
    assert list(answer.claims.values_list("text", "position")) == [("Shipping is free.", 0)]


def test_delete_of_a_labelled_claim_needs_the_confirmation_box(setup):
    client, answer, lead = setup
    claim, _ = claims_split(answer=answer, user=lead)
    analyst = UserFactory()
    MembershipFactory(project=answer.project, user=analyst)
    label_save(claim=claim, annotator=analyst, verdict=Verdict.NOT_IN_PILE)
    url = _url("claim-delete", claim, answer.project)
    response = client.post(url, **HTMX)
    assert "confirm that they are to be deleted" in response.content.decode()
    assert Claim.objects.filter(pk=claim.pk).exists()
    client.post(url, {"discard_labels": "on"}, **HTMX)
    assert not Claim.objects.filter(pk=claim.pk).exists()


def test_lead_confirms_a_suggested_abstention(setup):
    client, answer, lead = setup
    answer.text = "I don't know how long refunds take."
    answer.save()
    client.post(_url("claims-split", answer, answer.project), {"method": "rule"})
    page = client.get(_url("claims-edit", answer, answer.project)).content.decode()
    assert "looks like an abstention" in page
    assert "I don&#x27;t know" in page
    client.post(_url("answer-abstention", answer, answer.project), {"abstention": "yes"})
    answer.refresh_from_db()
    assert answer.abstention
    assert not answer.abstention_suggested


def test_claims_of_another_project_are_404(setup):
    client, answer, lead = setup
    foreign = Claim.objects.create(
        project=AnswerFactory().project, answer=AnswerFactory(), text="x"
    )
    response = client.post(
        reverse("annotate:claim-edit", args=[answer.project.slug, foreign.pk]), {"text": "y"}
    )
    assert response.status_code == 404
