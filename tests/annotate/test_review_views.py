"""Adjudication, facts and contradictions pages: roles, htmx and plain forms, downloads."""

import csv
import io

import pytest
from django.urls import reverse

from annotate.models import Gold, Role, Verdict
from annotate.services.labels import label_save
from annotate.services.review import fact_add
from tests.factories import ClaimFactory, MembershipFactory, PassageFactory, UserFactory

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}
PASSAGE = "Refunds are processed within 14 days. They are issued to the original card."


def _member(project, role=Role.ANALYST, name=None):
    user = UserFactory(username=name) if name else UserFactory()
    MembershipFactory(project=project, user=user, role=role)
    return user


@pytest.fixture
def disagreement():
    """A claim two analysts labelled differently, each with a quote and a note."""
    claim = ClaimFactory(
        text="Refunds take 30 days.",
        labels_required=2,
        answer__text="Refunds take 30 days.",
        span_start=0,
        span_end=21,
    )
    passage = PassageFactory(answer=claim.answer, text=PASSAGE, title="Refund policy")
    ana, bo = _member(claim.project, name="ana"), _member(claim.project, name="bo")
    start = PASSAGE.index("14 days")
    label_save(
        claim=claim,
        annotator=ana,
        verdict=Verdict.CONTRADICTED,
        passage=passage,
        start=start,
        end=start + 7,
        quote="14 days",
        note="The policy says 14.",
    )
    label_save(claim=claim, annotator=bo, verdict=Verdict.NOT_IN_PILE, note="Could not find it.")
    return claim


def test_adjudicate_list_shows_disagreements_side_by_side(client, disagreement):
    lead = _member(disagreement.project, Role.LEAD)
    client.force_login(lead)
    response = client.get(reverse("annotate:adjudicate", args=[disagreement.project.slug]))
    html = response.content.decode()
    assert response.status_code == 200
    assert "1 waiting" in html
    assert "“Refunds take 30 days.”" in html
    assert html.count('data-testid="analyst-verdict"') == 2
    assert 'Refunds are processed within <mark class="quote">14 days</mark>.' in html
    assert "The policy says 14." in html
    assert "Could not find it." in html
    assert '<span class="verdict verdict-CONTRADICTED">Contradicted</span>' in html


def test_adjudication_pages_are_404_for_analysts(client, disagreement):
    analyst = disagreement.labels.first().annotator
    client.force_login(analyst)
    slug = disagreement.project.slug
    assert client.get(reverse("annotate:adjudicate", args=[slug])).status_code == 404
    url = reverse("annotate:adjudicate-claim", args=[slug, disagreement.pk])
    assert client.get(url).status_code == 404
    assert client.post(url, {"verdict": "SUPPORTED", "reason": "x"}).status_code == 404
    assert client.get(reverse("annotate:contradictions", args=[slug])).status_code == 404
    assert not Gold.objects.exists()


def test_adjudicate_with_htmx_swaps_the_card_to_its_decision(client, disagreement):
    lead = _member(disagreement.project, Role.LEAD)
    client.force_login(lead)
    url = reverse("annotate:adjudicate-claim", args=[disagreement.project.slug, disagreement.pk])
    response = client.post(
        url, {"verdict": "CONTRADICTED", "reason": "The policy says 14 days."}, **HTMX
    )
    html = response.content.decode()
    assert html.lstrip().startswith(f'<article id="card-{disagreement.pk}"')
    assert "Gold verdict saved" in html
    gold = Gold.objects.get(claim=disagreement)
    assert (gold.verdict, gold.source, gold.decided_by) == (
        Verdict.CONTRADICTED,
        Gold.Source.ADJUDICATED,
        lead,
    )


def test_adjudicate_without_a_reason_is_refused_and_keeps_the_choice(client, disagreement):
    client.force_login(_member(disagreement.project, Role.LEAD))
    url = reverse("annotate:adjudicate-claim", args=[disagreement.project.slug, disagreement.pk])
    response = client.post(url, {"verdict": "NOT_IN_PILE", "reason": ""})
    assert response.status_code == 422
    html = response.content.decode()
    assert "Give the reason for the gold verdict." in html
    assert 'value="NOT_IN_PILE" id="gold-' in html
    assert "checked" in html
    assert not Gold.objects.exists()


def test_adjudicate_without_htmx_moves_on_to_the_next_disagreement(client, disagreement):
    other = ClaimFactory(answer=disagreement.answer, labels_required=2, text="Other claim.")
    a, b = disagreement.labels.all()[0].annotator, disagreement.labels.all()[1].annotator
    label_save(claim=other, annotator=a, verdict=Verdict.NOT_IN_PILE)
    label_save(claim=other, annotator=b, verdict=Verdict.CONTRADICTED, require_quote=False)
    client.force_login(_member(disagreement.project, Role.LEAD))
    slug = disagreement.project.slug
    response = client.post(
        reverse("annotate:adjudicate-claim", args=[slug, disagreement.pk]),
        {"verdict": "CONTRADICTED", "reason": "14, not 30."},
    )
    assert response.status_code == 302
    assert response["Location"] == reverse("annotate:adjudicate-claim", args=[slug, other.pk])
    page = client.get(response["Location"]).content.decode()
    assert "Gold for claim" in page
    assert "“Other claim.”" in page


def test_facts_page_marks_a_selection_after_an_emoji_with_utf16_offsets(client):
    passage = PassageFactory(text="Refunds 💳 take 14 days. Fees apply.")
    analyst = _member(passage.answer.project)
    client.force_login(analyst)
    slug = passage.answer.project.slug
    page = client.get(reverse("annotate:facts", args=[slug, passage.answer.pk]))
    assert page.status_code == 200
    assert f'data-passage="{passage.pk}"' in page.content.decode()
    # The browser counts the emoji as two units: "take 14 days" starts at 11 in UTF-16.
    response = client.post(
        reverse("annotate:fact-add", args=[slug, passage.answer.pk]),
        {"passage": passage.pk, "quote": "take 14 days", "start_utf16": 11, "end_utf16": 23},
        **HTMX,
    )
    html = response.content.decode()
    assert html.lstrip().startswith('<div id="facts"')
    assert '<mark class="fact">take 14 days</mark>' in html
    fact = passage.facts.get()
    assert (fact.start, fact.end, fact.text) == (10, 22, "take 14 days")


def test_facts_page_without_js_finds_the_typed_text_and_rejects_text_not_in_the_passage(client):
    passage = PassageFactory(text=PASSAGE)
    client.force_login(_member(passage.answer.project))
    url = reverse("annotate:fact-add", args=[passage.answer.project.slug, passage.answer.pk])
    response = client.post(url, {"passage": passage.pk, "quote": "the original card"})
    assert response.status_code == 302
    assert passage.facts.get().start == PASSAGE.index("the original card")
    response = client.post(url, {"passage": passage.pk, "quote": "within 30 days"}, **HTMX)
    assert "does not contain &#x27;within 30 days&#x27;" in response.content.decode()
    # Offsets that do not hold the quote are refused by the server, whatever the browser says.
    response = client.post(
        url, {"passage": passage.pk, "quote": "Refunds", "start_utf16": 1, "end_utf16": 8}, **HTMX
    )
    assert "not in the pile at that place" in response.content.decode()
    assert passage.facts.count() == 1


def test_fact_delete_by_another_analyst_is_refused(client):
    passage = PassageFactory(text=PASSAGE)
    project = passage.answer.project
    author, other = _member(project), _member(project)
    fact = fact_add(passage=passage, start=0, end=7, quote="Refunds", user=author)
    client.force_login(other)
    url = reverse("annotate:fact-delete", args=[project.slug, fact.pk])
    response = client.post(url, **HTMX)
    assert "Only a lead or the analyst who marked" in response.content.decode()
    client.force_login(author)
    client.post(url)
    assert not passage.facts.exists()


def test_contradictions_page_and_downloads(client, disagreement):
    client.force_login(_member(disagreement.project, Role.LEAD))
    url = reverse("annotate:contradictions", args=[disagreement.project.slug])
    html = client.get(url).content.decode()
    assert html.count('data-testid="contradiction-row"') == 1
    assert '<mark class="claim-span">Refunds take 30 days.</mark>' in html
    assert 'Refunds are processed within <mark class="quote">14 days</mark>.' in html
    assert "no gold yet" in html

    response = client.get(url, {"format": "csv"})
    assert response["Content-Type"] == "text/csv"
    assert "attachment" in response["Content-Disposition"]
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert len(rows) == 1
    assert rows[0]["answer_says"] == "Refunds take 30 days."
    assert rows[0]["passage_says"] == "Refunds are processed within 14 days."
    assert rows[0]["quote"] == "14 days"
    assert rows[0]["analyst"] == "ana"

    markdown = client.get(url, {"format": "md"}).content.decode()
    assert "**The answer says:** “Refunds take 30 days.”" in markdown
    passage = disagreement.answer.passages.get()
    assert (
        f"**The passage #{passage.rank} ({passage.source_id}) says:** "
        "“Refunds are processed within 14 days.”"
    ) in markdown
