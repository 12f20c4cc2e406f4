"""The labelling screen's evidence and undo as issue 19 asks: a NOT_IN_PILE label takes no
quote, undo names what it undid and gives the form back, and the counters follow the undo."""

import pytest
from django.urls import reverse

from annotate.models import Label, Verdict
from annotate.services.labels import LabelError, label_save
from tests.annotate.test_labelling import EMOJI_PASSAGE, HTMX, build, logged_in, save_url

pytestmark = pytest.mark.django_db


def _utf16(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


@pytest.mark.parametrize("headers", [{}, HTMX])
def test_not_in_pile_with_a_quote_is_refused_with_the_reason_and_the_form_kept(client, headers):
    project, user, claims, (first, _) = build()
    quote = "are paid within 14 days."
    start = _utf16(EMOJI_PASSAGE[: EMOJI_PASSAGE.index(quote)])
    response = logged_in(client, user).post(
        save_url(project, claims[0]),
        {
            "verdict": "NOT_IN_PILE",
            "passage": first.pk,
            "start_utf16": start,
            "end_utf16": start + len(quote),
            "quote": quote,
        },
        **headers,
    )
    html = response.content.decode()
    assert response.status_code == (200 if headers else 422)
    assert "A NOT_IN_PILE label says no passage of the pile decides the claim" in html
    assert quote in html  # the quote is still in the form
    assert not Label.objects.exists()


def test_label_save_refuses_a_not_in_pile_label_with_a_quote():
    project, user, claims, (first, _) = build()
    quote = "Cash refunds are not offered."
    start = EMOJI_PASSAGE.index(quote)
    with pytest.raises(LabelError, match="NOT_IN_PILE"):
        label_save(
            claim=claims[0],
            annotator=user,
            verdict=Verdict.NOT_IN_PILE,
            passage=first,
            start=start,
            end=start + len(quote),
            quote=quote,
        )
    assert not Label.objects.exists()


def test_undo_names_what_it_undid_restores_the_form_and_the_counters(client):
    project, user, claims, (first, _) = build()
    client = logged_in(client, user)
    client.get(reverse("annotate:label-next", args=[project.slug]))
    quote = "are paid within 14 days."
    start = _utf16(EMOJI_PASSAGE[: EMOJI_PASSAGE.index(quote)])
    saved = client.post(
        save_url(project, claims[0]),
        {
            "verdict": "SUPPORTED",
            "passage": first.pk,
            "start_utf16": start,
            "end_utf16": start + len(quote),
            "quote": quote,
            "note": "the second sentence",
        },
        **HTMX,
    ).content.decode()
    assert 'data-testid="my-count">1<' in saved
    assert "1 of 2</strong>" in saved

    html = client.post(reverse("annotate:label-undo", args=[project.slug]), **HTMX)
    html = html.content.decode()
    assert (
        "Label undone: your SUPPORTED label with the quote “are paid within 14 days.” on "
        "“Refunds go to the card within 14 days.”"
    ) in html
    assert 'data-testid="my-count">0<' in html  # was stuck at 1
    assert "0 of 2</strong>" in html
    assert 'value="SUPPORTED" checked' in html
    assert f">{quote}</textarea>" in html
    assert "the second sentence</textarea>" in html
    assert f'id="quote-start" name="start_utf16" value="{start}"' in html
    assert f'<option value="{first.pk}" selected' in html
    assert not Label.objects.exists()


def test_undoing_a_change_says_so_and_shows_the_label_as_it_was(client):
    project, user, claims, _ = build()
    client = logged_in(client, user)
    client.post(save_url(project, claims[1]), {"verdict": "NOT_IN_PILE"}, **HTMX)
    client.post(
        save_url(project, claims[1]), {"verdict": "NOT_IN_PILE", "note": "second look"}, **HTMX
    )
    html = client.post(reverse("annotate:label-undo", args=[project.slug]), **HTMX)
    html = html.content.decode()
    assert "Label undone: your change to NOT_IN_PILE on “Cash is not refunded.”" in html
    assert 'value="NOT_IN_PILE" checked' in html
    assert "second look" not in html
    assert Label.objects.get().note == ""


def test_the_quote_passage_list_and_the_pile_name_each_passage_by_title_or_source(client):
    """The quote's passage list names a passage "#rank title", cut to 60 characters with an
    ellipsis, or by its source id when it has no title; the pile's headings name both."""
    project, user, claims, (first, second) = build()
    long_title = "A" * 30 + " " + "B" * 39  # 70 characters
    first.title, first.source_id = long_title, "doc-7"
    first.save()
    second.title, second.source_id = "", "doc-untitled"
    second.save()
    html = logged_in(client, user).get(reverse("annotate:label-next", args=[project.slug]))
    html = html.content.decode()
    cut = long_title[:59] + "…"  # Django's truncatechars: 59 characters and the ellipsis
    assert f'<option value="{first.pk}">#1 {cut}</option>' in html
    assert f'<option value="{second.pk}">#2 doc-untitled</option>' in html
    assert f'#1 {long_title} <span class="muted small">doc-7</span></h3>' in html
    assert f'id="passage-{second.pk}-title">#2 doc-untitled</h3>' in html
