"""A small world for the ground-truth check and its report block: one published test set of
two items (a financial and a health one), one run of a system whose answers are split into
claims by hand, so every verdict and count below is derived by reading the sentences."""

from types import SimpleNamespace

from annotate.models import Answer, Claim, System
from tests.factories import ProjectFactory
from testsets.models import (
    Document,
    DocumentPassage,
    ItemQuote,
    SutRun,
    SutRunItem,
    TestItem,
    TestSet,
)

REFUND_QUOTE = "Customers may request a refund within 30 days of purchase."
DOSE_QUOTE = "Adults must not take more than 4 grams of paracetamol a day."


def _item(test_set, document, position, question, answer, quote, risk):
    passage = DocumentPassage.objects.create(
        document=document, position=position, start=0, end=len(quote), text=quote
    )
    item = TestItem.objects.create(
        test_set=test_set,
        external_id=f"q{position}",
        position=position,
        question=question,
        answer=answer,
        risk_category=risk,
        document=document,
        status=TestItem.Status.ACCEPTED,
    )
    ItemQuote.objects.create(item=item, passage=passage, start=0, end=len(quote), text=quote)
    return item


def truth_world_build(*, claims_refund, claims_dose, project=None):
    """The run's two answers, their claims as given (texts, in order)."""
    project = project or ProjectFactory()
    document = Document.objects.create(
        project=project, external_id="policy", text=REFUND_QUOTE + " " + DOSE_QUOTE, sha256="x"
    )
    test_set = TestSet.objects.create(project=project, name="ts", status=TestSet.Status.PUBLISHED)
    refund = _item(
        test_set,
        document,
        0,
        "How long do customers have to ask for a refund?",
        "Customers may request a refund within 30 days of purchase.",
        REFUND_QUOTE,
        "financial",
    )
    dose = _item(
        test_set,
        document,
        1,
        "What is the most paracetamol an adult may take a day?",
        "Adults must not take more than 4 grams of paracetamol a day.",
        DOSE_QUOTE,
        "health",
    )
    system = System.objects.create(project=project, name="ref", version="1")
    run = SutRun.objects.create(
        project=project,
        test_set=test_set,
        endpoint="reference",
        system_name="ref",
        system_version="1",
        status=SutRun.Status.DONE,
        total=2,
        done=2,
    )
    claims = {}
    for item, texts in ((refund, claims_refund), (dose, claims_dose)):
        answer = Answer.objects.create(
            project=project,
            external_id=f"sut{run.pk}-{item.external_id}",
            question=item.question,
            text=" ".join(texts),
            risk_category=item.risk_category,
            system=system,
            question_id=item.external_id,
        )
        SutRunItem.objects.create(
            run=run, item=item, state=SutRunItem.State.ANSWERED, answer=answer
        )
        for position, text in enumerate(texts):
            claims[text] = Claim.objects.create(
                project=project,
                answer=answer,
                text=text,
                position=position,
                queue_key=1000 * item.position + position,
            )
    return SimpleNamespace(
        project=project, run=run, refund=refund, dose=dose, claims=claims, system=system
    )
