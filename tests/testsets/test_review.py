"""The review queue, publication and the card of a test set, through the pages (Django client):
what a reviewer and a lead see and what ends up stored."""

import json
import re

import pytest
from django.urls import reverse

from annotate.models import Membership, Project, Role
from tests.factories import UserFactory
from tests.testsets.review_world import REFUNDS, item_add, passage_add, review_world_build
from testsets.models import Document, ItemQuote, TestItem, TestSet
from testsets.services.review import SetFrozen, item_accept, set_publish

pytestmark = pytest.mark.django_db
HX = {"HX-Request": "true"}


def _url(world, name, item=None):
    args = [world.project.slug, world.test_set.pk] + ([item.pk] if item else [])
    return reverse(f"testsets:{name}", args=args)


def _edit(world, item, *, question, answer, quotes):
    return {
        "question": question,
        "answer": answer,
        "quote_passage": [str(p.pk) for p, _ in quotes] + [""],
        "quote_text": [t for _, t in quotes] + [""],
    }


def test_review_screen_shows_the_item_with_its_quote_marked_in_the_passage():
    world = review_world_build()
    page = world.client("analyst").get(_url(world, "review")).content.decode()
    assert "How long do refunds take?" in page
    assert "Within 14 days." in page
    assert '<mark class="claim-mark">Refunds are paid within 14 days.</mark> Gift cards' in page
    assert "risk: Financial" in page
    assert "language: en" in page
    assert "Accept and next <kbd>a</kbd>" in page
    assert "js/review.js" in page


def test_accept_records_the_reviewer_and_serves_the_next_pending_item():
    world = review_world_build()
    first, second, _ = world.items
    client = world.client("analyst")
    response = client.post(_url(world, "item-accept", first), headers=HX)
    assert response.status_code == 200
    text = response.content.decode()
    assert "How old must an applicant be?" in text  # the next item, swapped in
    assert "<html" not in text  # only the #review partial
    assert response["HX-Push-Url"] == _url(world, "review-item", second)
    first.refresh_from_db()
    assert first.status == TestItem.Status.ACCEPTED
    assert first.reviewed_by == world.analyst
    assert first.reviewed_at is not None
    assert first.edited is False
    # Without JavaScript: a redirect to the next pending one.
    response = client.post(_url(world, "item-accept", second))
    assert response.status_code == 302
    assert response["Location"] == _url(world, "review-item", world.items[2])


def test_reject_needs_a_reason_and_keeps_it():
    world = review_world_build()
    item = world.items[2]
    client = world.client("analyst")
    response = client.post(_url(world, "item-reject", item), {"reason": "  "})
    assert response.status_code == 422
    assert "Give the reason for rejecting this item" in response.content.decode()
    item.refresh_from_db()
    assert item.status == TestItem.Status.PENDING
    client.post(_url(world, "item-reject", item), {"reason": "Dose depends on age."}, headers=HX)
    item.refresh_from_db()
    assert item.status == TestItem.Status.REJECTED
    assert item.reject_reason == "Dose depends on age."
    assert item.reviewed_by == world.analyst


def test_an_edited_quote_found_verbatim_is_saved_with_its_offsets_and_the_item_accepted():
    world = review_world_build()
    item = world.items[0]
    passage = world.passages[("policy", 0)]
    data = _edit(
        world, item, question="Can a gift card be refunded?", answer="No.",
        quotes=[(passage, "Gift cards cannot be refunded.")],
    )  # fmt: skip
    response = world.client("analyst").post(_url(world, "item-edit", item), data, headers=HX)
    assert response.status_code == 200
    item.refresh_from_db()
    assert (item.question, item.answer) == ("Can a gift card be refunded?", "No.")
    assert item.edited is True
    assert item.status == TestItem.Status.ACCEPTED
    # "Refunds are paid within 14 days. " is 33 code points; the quote is 30 long.
    quote = item.quotes.get()
    assert (quote.passage_id, quote.start, quote.end) == (passage.pk, 33, 63)
    assert quote.text == "Gift cards cannot be refunded."


def test_an_edited_quote_that_is_not_verbatim_is_refused_and_nothing_is_written():
    world = review_world_build()
    item = world.items[0]
    passage = world.passages[("policy", 0)]
    before = list(ItemQuote.objects.values_list("item_id", "passage_id", "start", "end", "text"))
    data = _edit(
        world, item, question="Changed question?", answer="Changed.",
        quotes=[(passage, "Refunds are paid within 15 days.")],
    )  # fmt: skip
    client = world.client("analyst")
    response = client.post(_url(world, "item-edit", item), data)
    assert response.status_code == 422
    page = response.content.decode()
    assert "Quote 1 is not found verbatim in passage #0 of Policy" in page
    assert "Nothing was saved" in page
    assert "Changed question?" in page  # the reviewer's text is kept in the form
    assert page.count('name="quote_text"') == 2  # the quote sent and one empty row to add one
    # htmx: the screen swapped in with the message
    response = client.post(_url(world, "item-edit", item), data, headers=HX)
    assert response.status_code == 200
    assert "not found verbatim" in response.content.decode()
    item.refresh_from_db()
    assert item.question == "How long do refunds take?"
    assert item.answer == "Within 14 days."
    assert (item.status, item.edited, item.reviewed_by) == (TestItem.Status.PENDING, False, None)
    after = list(ItemQuote.objects.values_list("item_id", "passage_id", "start", "end", "text"))
    assert after == before


def test_a_quote_from_another_projects_passage_is_refused():
    world = review_world_build()
    other = Project.objects.create(slug="other", name="Other")
    document = Document.objects.create(project=other, external_id="d", text=REFUNDS, sha256="c")
    foreign = passage_add(document, 0, REFUNDS)
    data = _edit(world, world.items[0], question="Q?", answer="A.",
                 quotes=[(foreign, "Refunds are paid within 14 days.")])  # fmt: skip
    response = world.client("analyst").post(_url(world, "item-edit", world.items[0]), data)
    assert response.status_code == 422
    assert "Quote 1: choose the passage it comes from." in response.content.decode()
    assert world.items[0].quotes.get().passage == world.passages[("policy", 0)]


def test_publish_freezes_the_set_and_every_edit_is_refused_after():
    world = review_world_build()
    first, second, _ = world.items
    lead = world.client("lead")
    lead.post(_url(world, "item-accept", first))
    response = lead.post(_url(world, "publish"))
    assert response.status_code == 302
    world.test_set.refresh_from_db()
    assert world.test_set.status == TestSet.Status.PUBLISHED
    assert world.test_set.published_by == world.lead
    assert world.test_set.published_at is not None
    page = lead.get(response["Location"]).content.decode()
    assert "Published critical v1: it is frozen. 2 item(s) not accepted stay out" in page
    analyst = world.client("analyst")
    for name, data in (
        ("item-accept", {}),
        ("item-reject", {"reason": "late"}),
        ("item-edit", _edit(world, second, question="Q?", answer="A.",
                            quotes=[(world.passages[("policy", 1)], "Applicants")])),
    ):  # fmt: skip
        response = analyst.post(_url(world, name, second), data)
        assert response.status_code == 422, name
        assert "critical v1 is published, so it is frozen" in response.content.decode()
    second.refresh_from_db()
    assert (second.status, second.question, second.edited) == ("pending", world.items[1].question,
                                                                False)  # fmt: skip
    page = analyst.get(_url(world, "review-item", second)).content.decode()
    assert 'data-testid="frozen"' in page
    assert "Accept and next" not in page
    with pytest.raises(SetFrozen):
        item_accept(item=second, user=world.lead)
    with pytest.raises(SetFrozen):
        set_publish(test_set=world.test_set, user=world.lead)


def test_publish_needs_an_accepted_item():
    world = review_world_build()
    response = world.client("lead").post(_url(world, "publish"), follow=True)
    assert "has no accepted item yet" in response.content.decode()
    world.test_set.refresh_from_db()
    assert world.test_set.status == TestSet.Status.DRAFT


def test_an_analyst_may_review_but_not_publish_nor_make_a_version():
    """Below the role the project's pages answer 404, never 403 (tests/reliability)."""
    world = review_world_build()
    analyst = world.client("analyst")
    assert analyst.post(_url(world, "publish")).status_code == 404
    assert analyst.post(_url(world, "new-version")).status_code == 404
    world.test_set.refresh_from_db()
    assert world.test_set.status == TestSet.Status.DRAFT
    page = analyst.get(_url(world, "detail")).content.decode()
    assert "Publish" not in page
    # An owner of another project does not reach this one's review queue.
    outsider = UserFactory(username="outsider")
    other = Project.objects.create(slug="theirs", name="Theirs")
    Membership.objects.create(project=other, user=outsider, role=Role.OWNER)
    analyst.force_login(outsider)
    assert analyst.get(_url(world, "review")).status_code == 404


def test_new_version_copies_a_published_set_into_a_draft():
    world = review_world_build()
    first, second, third = world.items
    item_accept(item=first, user=world.lead)
    set_publish(test_set=world.test_set, user=world.lead)
    response = world.client("lead").post(_url(world, "new-version"))
    copy = TestSet.objects.get(project=world.project, name="critical", version=2)
    assert response["Location"] == reverse("testsets:detail", args=[world.project.slug, copy.pk])
    assert copy.status == TestSet.Status.DRAFT
    assert copy.generator["from_version"] == 1
    assert list(copy.items.values_list("external_id", "status")) == [
        ("q0", "accepted"), ("q1", "pending"), ("q2", "pending"),
    ]  # fmt: skip
    assert copy.items.get(external_id="q1").quotes.get().text == (
        "Applicants must be at least 18 years old."
    )
    assert copy.drops.count() == 4
    assert world.test_set.items.count() == 3  # the published one is untouched
    item_accept(item=copy.items.get(external_id="q1"), user=world.analyst)  # the copy is a draft


def _count(page: str, name: str) -> int:
    return int(re.search(rf'data-count="{name}">(\d+)<', page).group(1))


def test_the_card_counts_equal_what_was_made_and_reviewed_by_hand():
    world = review_world_build()
    first, second, third = world.items
    analyst = world.client("analyst")
    analyst.post(_url(world, "item-accept", first))
    analyst.post(
        _url(world, "item-edit", second),
        _edit(world, second, question="Who may sign for a minor?", answer="A guardian.",
              quotes=[(world.passages[("policy", 1)], "A guardian may sign for a minor.")]),
    )  # fmt: skip
    analyst.post(_url(world, "item-reject", third), {"reason": "unclear"})
    page = analyst.get(_url(world, "detail")).content.decode()
    # By hand: 3 items kept + 4 drops = 7 generated; drops 2 quote_not_found, 1 not_supported,
    # 1 duplicate; q0 accepted, q1 edited (so accepted), q2 rejected.
    expected = {"generated": 7, "dropped-quote_not_found": 2, "dropped-not_supported": 1,
                "dropped-malformed": 0, "deduplicated": 1, "kept": 3, "accepted": 2,
                "edited": 1, "rejected": 1, "pending": 0}  # fmt: skip
    assert {name: _count(page, name) for name in expected} == expected
    assert "Generator: offline (the offline baseline" in page
    assert "unclear" in page  # the rejected item's reason is listed
    card = json.loads(analyst.get(_url(world, "card")).content)
    assert card["risk_categories"] == {
        "financial": {"items": 1, "accepted": 1, "rejected": 0, "pending": 0},
        "health": {"items": 1, "accepted": 0, "rejected": 1, "pending": 0},
        "eligibility": {"items": 1, "accepted": 1, "rejected": 0, "pending": 0},
    }
    assert card["documents"] == {
        "leaflet": {"items": 1, "accepted": 0, "rejected": 1, "pending": 0, "dropped": 1},
        "policy": {"items": 2, "accepted": 2, "rejected": 0, "pending": 0, "dropped": 3},
    }
    assert card["counts"]["dropped"]["quote_not_found"] == 2
    markdown = analyst.get(_url(world, "card") + "?format=md").content.decode()
    assert "| generated | 7 |" in markdown
    assert "| of them edited | 1 |" in markdown
    assert "| policy | 2 | 2 | 3 |" in markdown


def test_the_test_set_list_shows_each_version_with_its_counts():
    world = review_world_build()
    item_add(world.test_set, 3, "Extra?", "Yes.", world.passages[("leaflet", 0)], "Take",
             status="accepted")  # fmt: skip
    page = world.client("analyst").get(reverse("testsets:index", args=["kb"])).content.decode()
    row = re.search(r"<tr>\s*<td><a href=\"[^\"]+\">critical</a></td>(.*?)</tr>", page, re.S)
    cells = re.findall(r'<td class="num">(\d+)</td>', row.group(1))
    assert cells == ["1", "4", "1", "0", "0", "3"]  # version, items, accepted, edited, ...
    assert "Run a system" not in page  # an analyst, and the set is a draft


def test_a_quote_typed_without_its_passage_is_found_in_the_items_document():
    world = review_world_build()
    item = world.items[1]
    client = world.client("analyst")
    data = {"question": item.question, "answer": "A guardian.", "quote_passage": ["", ""],
            "quote_text": ["A guardian may sign for a minor.", ""]}  # fmt: skip
    assert client.post(_url(world, "item-edit", item), data).status_code == 302
    quote = item.quotes.get()
    # "Applicants must be at least 18 years old. " is 42 code points; the quote is 32.
    assert (quote.passage, quote.start, quote.end) == (world.passages[("policy", 1)], 42, 74)
    data["quote_text"] = ["Take no more than 4 tablets in 24 hours.", ""]  # another document's
    response = client.post(_url(world, "item-edit", item), data)
    assert response.status_code == 422
    assert "no passage of the item&#x27;s document holds it" in response.content.decode()
    assert item.quotes.get().text == "A guardian may sign for a minor."
