"""Comments on a claim (issue 32): a thread a lead and analysts read after their own label.
An analyst reads colleagues' comments only once their own label is saved (a comment may name a
verdict), and reading them counts as a reveal; leads read them all, on adjudication too; an
empty or overlong comment is refused with the reason and nothing saved."""

import pytest
from django.urls import reverse

from annotate.models import COMMENT_LENGTH_MAX, ClaimComment, Label, Reveal, Role
from annotate.services.comments import comment_add
from tests.factories import (
    AnswerFactory,
    ClaimFactory,
    LabelFactory,
    MembershipFactory,
    PassageFactory,
    ProjectFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def world():
    project = ProjectFactory(quote_required=False, analysts_per_claim=2)
    answer = AnswerFactory(project=project)
    PassageFactory(answer=answer, rank=1, text="Refunds take 14 days.")
    claim = ClaimFactory(answer=answer, text="Refunds take two weeks.", labels_required=2)
    ana, bea, lead = UserFactory(username="ana"), UserFactory(username="bea"), UserFactory()
    MembershipFactory(project=project, user=ana)
    MembershipFactory(project=project, user=bea)
    MembershipFactory(project=project, user=lead, role=Role.LEAD)
    return {"project": project, "claim": claim, "ana": ana, "bea": bea, "lead": lead}


def _post(client, world, text, **extra):
    url = reverse("annotate:comment-post", args=[world["project"].slug, world["claim"].pk])
    return client.post(url, {"text": text}, **extra)


def _screen(client, world) -> str:
    url = reverse("annotate:label-claim", args=[world["project"].slug, world["claim"].pk])
    return client.get(url).content.decode()


def test_an_analyst_reads_colleagues_comments_only_after_their_own_label(client, world):
    client.force_login(world["ana"])
    response = _post(
        client, world, "I read 14 days as two weeks: CONTRADICTED? no, SUPPORTED.", **HTMX
    )
    assert response.status_code == 200
    assert "two weeks: CONTRADICTED" in response.content.decode()

    client.force_login(world["bea"])
    page = _screen(client, world)
    assert "two weeks: CONTRADICTED" not in page  # blind before her own label
    assert "1 comment by colleagues show once your own label" in page
    assert not Reveal.objects.filter(user=world["bea"]).exists()

    LabelFactory(claim=world["claim"], annotator=world["bea"], verdict="SUPPORTED")
    page = _screen(client, world)
    assert "two weeks: CONTRADICTED" in page
    # reading them is a reveal: a later change of her verdict is flagged for the leads
    assert Reveal.objects.get(user=world["bea"], claim=world["claim"]).verdict == "SUPPORTED"


def test_a_lead_reads_the_thread_on_adjudication(client, world):
    comment_add(claim=world["claim"], author=world["ana"], text="Which card?")
    for user in ("ana", "bea"):
        LabelFactory(claim=world["claim"], annotator=world[user], verdict="SUPPORTED")
    Label.objects.filter(annotator=world["bea"]).update(verdict="NOT_IN_PILE")
    client.force_login(world["lead"])
    url = reverse("annotate:adjudicate-claim", args=[world["project"].slug, world["claim"].pk])
    page = client.get(url).content.decode()
    assert "Which card?" in page
    assert "<strong>ana</strong>" in page
    response = _post(client, world, "Decided from passage #1.", follow=False)
    assert response.status_code == 302
    assert world["claim"].comments.count() == 2


def test_an_empty_or_overlong_comment_is_refused_and_nothing_saved(client, world):
    client.force_login(world["ana"])
    response = _post(client, world, "   ", **HTMX)
    assert "the comment is empty" in response.content.decode()
    long = "x" * (COMMENT_LENGTH_MAX + 1)
    response = _post(client, world, long, **HTMX)
    body = response.content.decode()
    assert f"a comment holds at most {COMMENT_LENGTH_MAX}" in body
    assert long in body  # the text comes back to be shortened, not lost
    assert not ClaimComment.objects.exists()


def test_a_non_member_cannot_comment(client, world):
    client.force_login(UserFactory())
    assert _post(client, world, "hello").status_code == 404
    assert not ClaimComment.objects.exists()
