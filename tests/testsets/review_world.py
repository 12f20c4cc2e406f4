"""A small knowledge base and a draft test set made by hand with the ORM, for the review,
interchange and system-under-test page tests (every count a test expects is from here)."""

from dataclasses import dataclass

from django.test import Client

from annotate.models import Membership, Project, Role
from tests.factories import UserFactory
from testsets.models import Document, DocumentPassage, GenerationDrop, ItemQuote, TestItem, TestSet

REFUNDS = "Refunds are paid within 14 days. Gift cards cannot be refunded."
AGES = "Applicants must be at least 18 years old. A guardian may sign for a minor."
DOSE = "Take no more than 4 tablets in 24 hours."


@dataclass
class ReviewWorld:
    project: Project
    lead: object
    analyst: object
    documents: dict  # external id -> Document
    passages: dict  # (document external id, position) -> DocumentPassage
    test_set: TestSet
    items: list

    def client(self, who: str) -> Client:
        client = Client()
        client.force_login(self.lead if who == "lead" else self.analyst)
        return client


def passage_add(document: Document, position: int, text: str) -> DocumentPassage:
    start = document.text.index(text)
    return DocumentPassage.objects.create(
        document=document, position=position, start=start, end=start + len(text), text=text
    )


def item_add(test_set, n, question, answer, passage, quote, risk="none", status="pending"):
    item = TestItem.objects.create(
        test_set=test_set,
        external_id=f"q{n}",
        position=n,
        question=question,
        answer=answer,
        risk_category=risk,
        language="en",
        document=passage.document,
        status=status,
    )
    start = passage.text.index(quote)
    ItemQuote.objects.create(
        item=item, passage=passage, start=start, end=start + len(quote), text=quote
    )
    return item


def review_world_build(slug: str = "kb") -> ReviewWorld:
    """Two documents (three passages), a draft of three pending items (financial,
    eligibility, health) and four generation drops: two quote_not_found, one not_supported,
    one duplicate."""
    project = Project.objects.create(slug=slug, name=f"Project {slug}")
    lead = UserFactory(username=f"{slug}-lead")
    analyst = UserFactory(username=f"{slug}-analyst")
    Membership.objects.create(project=project, user=lead, role=Role.LEAD)
    Membership.objects.create(project=project, user=analyst, role=Role.ANALYST)
    policy = Document.objects.create(
        project=project, external_id="policy", title="Policy", language="en",
        text=f"{REFUNDS}\n\n{AGES}", sha256="a" * 64,
    )  # fmt: skip
    leaflet = Document.objects.create(
        project=project, external_id="leaflet", title="Leaflet", language="en", text=DOSE,
        sha256="b" * 64,
    )  # fmt: skip
    passages = {
        ("policy", 0): passage_add(policy, 0, REFUNDS),
        ("policy", 1): passage_add(policy, 1, AGES),
        ("leaflet", 0): passage_add(leaflet, 0, DOSE),
    }
    test_set = TestSet.objects.create(
        project=project, name="critical", generator={"kind": "offline", "prompt_version": "rules-1"}
    )
    items = [
        item_add(test_set, 0, "How long do refunds take?", "Within 14 days.",
                 passages[("policy", 0)], "Refunds are paid within 14 days.", "financial"),
        item_add(test_set, 1, "How old must an applicant be?", "At least 18.",
                 passages[("policy", 1)], "Applicants must be at least 18 years old.",
                 "eligibility"),
        item_add(test_set, 2, "How many tablets a day at most?", "4 in 24 hours.",
                 passages[("leaflet", 0)], "Take no more than 4 tablets in 24 hours.", "health"),
    ]  # fmt: skip
    for reason, document in (
        (GenerationDrop.Reason.QUOTE_NOT_FOUND, policy),
        (GenerationDrop.Reason.QUOTE_NOT_FOUND, leaflet),
        (GenerationDrop.Reason.NOT_SUPPORTED, policy),
        (GenerationDrop.Reason.DUPLICATE, policy),
    ):
        GenerationDrop.objects.create(test_set=test_set, reason=reason, document=document)
    return ReviewWorld(project, lead, analyst, {"policy": policy, "leaflet": leaflet},
                       passages, test_set, items)  # fmt: skip
