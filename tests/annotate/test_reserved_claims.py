"""A claim the queue reserved for one analyst is theirs to label while the reservation is live
(issue 34): a colleague who reaches it another way (j/k, a link, the API) is refused, told why
and given their own next claim, so the holder's save is never the one refused."""

from datetime import timedelta

import pytest
from django.contrib.messages import get_messages
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotate.models import Label, Membership, Reservation, Verdict
from annotate.services.labels import ClaimHeld, label_save, label_save_and_next
from annotate.services.queue import claim_next_for_user
from api.tokens import token_create
from tests.annotate.test_labelling import HTMX, build, save_url
from tests.factories import MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db
HELD = "A colleague has this claim reserved while they label it; your label was not saved."


@pytest.fixture
def held():
    """Ana took the queue's first claim (reserved for her); Ben is a second analyst."""
    project, ana, claims, _ = build()
    ben = UserFactory()
    MembershipFactory(project=project, user=ben)
    assert claim_next_for_user(project=project, user=ana) == claims[0]
    return project, ana, ben, claims


def save(project, user, claim):
    return label_save_and_next(
        project=project,
        membership=Membership.objects.get(project=project, user=user),
        annotator=user,
        claim_id=claim.pk,
        verdict=Verdict.NOT_IN_PILE,
    )


def test_a_colleague_cannot_save_a_claim_held_for_another_and_the_holder_still_can(held):
    project, ana, ben, claims = held
    with pytest.raises(ClaimHeld, match="A colleague has this claim reserved"):
        save(project, ben, claims[0])
    with pytest.raises(ClaimHeld):  # the plain service too
        label_save(claim=claims[0], annotator=ben, verdict=Verdict.NOT_IN_PILE)
    assert not Label.objects.filter(annotator=ben).exists()
    label, _ = save(project, ana, claims[0])
    assert (label.claim_id, label.annotator) == (claims[0].pk, ana)


def test_once_the_reservation_lapses_a_colleague_may_save_it(held):
    project, ana, ben, claims = held
    Reservation.objects.filter(user=ana).update(expires_at=timezone.now() - timedelta(seconds=1))
    label, _ = save(project, ben, claims[0])
    assert label.annotator == ben


def test_a_claim_needing_two_labels_takes_a_colleagues_beside_the_holders(held):
    project, ana, ben, claims = held
    type(claims[0]).objects.filter(pk=claims[0].pk).update(labels_required=2)
    assert save(project, ben, claims[0])[0].annotator == ben  # room for one more
    assert save(project, ana, claims[0])[0].annotator == ana  # and the holder's still fits


def test_the_screen_gives_the_colleague_their_next_claim_and_says_why(held):
    project, ana, ben, claims = held
    client = Client()
    client.force_login(ben)
    response = client.post(save_url(project, claims[0]), {"verdict": "NOT_IN_PILE"}, **HTMX)
    assert response.status_code == 200
    page = response.content.decode()
    assert f"{HELD} Here is the next claim from your queue." in page
    assert f'data-claim-id="{claims[1].pk}"' in page  # Ben's own next claim, not Ana's
    assert response["HX-Push-Url"] == reverse("annotate:label-next", args=[project.slug])
    assert not Label.objects.filter(annotator=ben).exists()
    # Ana's save goes through.
    mine = Client()
    mine.force_login(ana)
    saved = mine.post(save_url(project, claims[0]), {"verdict": "NOT_IN_PILE"}, **HTMX)
    assert saved.status_code == 200
    assert "labelSaved" in saved["HX-Trigger"]
    assert Label.objects.get(claim=claims[0]).annotator == ana


def test_without_javascript_the_colleague_is_sent_to_their_next_claim(held):
    project, _, ben, claims = held
    client = Client()
    client.force_login(ben)
    response = client.post(save_url(project, claims[0]), {"verdict": "NOT_IN_PILE"})
    assert response.status_code == 302
    assert response["Location"] == reverse("annotate:label-next", args=[project.slug])
    assert [str(m) for m in get_messages(response.wsgi_request)] == [
        f"{HELD} Here is the next claim from your queue."
    ]
    following = client.get(response["Location"]).content.decode()
    assert f'data-claim-id="{claims[1].pk}"' in following


def test_the_api_answers_409_naming_the_next_claim(held):
    project, ana, ben, claims = held
    url = f"/api/v1/projects/{project.slug}/claims/{claims[0].pk}/labels"

    def post(user):
        token = token_create(user=user, name="t").secret
        return Client().post(
            url,
            {"verdict": "NOT_IN_PILE"},
            content_type="application/json",
            headers={"Authorization": f"Bearer {token}"},
        )

    refused = post(ben)
    assert refused.status_code == 409
    problem = refused.json()
    assert problem["detail"] == f"{HELD} Label the claim given as next_claim instead."
    assert problem["next_claim"] == claims[1].pk
    assert Reservation.objects.get(claim=claims[1]).user == ben  # his, as on the screen
    assert post(ana).status_code == 201
