"""Issue 19 item 4: the labelling screen renders the next claim ahead (GET …/following/), and
the queue stays right: the claim rendered ahead is reserved for that analyst, the save then
serves that very claim, and when it was lost meanwhile the save's own answer counts."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotate.models import Label, Reservation, Verdict
from annotate.services.labels import label_save
from tests.annotate.test_labelling import HTMX, logged_in
from tests.factories import (
    AnswerFactory,
    ClaimFactory,
    MembershipFactory,
    PassageFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def three_claims():
    """One answer, three claims in queue order (one label each), two analysts."""
    ana = MembershipFactory(user=UserFactory(username="ana"))
    project = ana.project
    project.quote_required = False
    project.save(update_fields=["quote_required"])
    bob = MembershipFactory(project=project, user=UserFactory(username="bob")).user
    answer = AnswerFactory(project=project, text="A. B. C.")
    PassageFactory(answer=answer, rank=1, text="Nothing relevant.")
    claims = [
        ClaimFactory(answer=answer, text=f"Claim text {name}.", position=i, queue_key=10 * i)
        for i, name in enumerate("ABC")
    ]
    return project, ana.user, bob, claims


def following_url(project, claim):
    return reverse("annotate:label-following", args=[project.slug, claim.pk])


def shown_claim(html: str) -> int | None:
    marker = 'id="screen" class="label-screen" data-claim-id="'
    if marker not in html:
        return None
    return int(html.split(marker, 1)[1].split('"', 1)[0])


def save(client, project, claim, verdict="NOT_IN_PILE"):
    url = reverse("annotate:label-save", args=[project.slug, claim.pk])
    return client.post(url, {"verdict": verdict}, **HTMX)


def test_the_following_screen_is_the_next_claim_reserved_for_the_analyst(client):
    project, ana, bob, claims = three_claims()
    client = logged_in(client, ana)
    first = client.get(reverse("annotate:label-next", args=[project.slug]), **HTMX)
    assert shown_claim(first.content.decode()) == claims[0].pk
    assert following_url(project, claims[0]) in first.content.decode()

    ahead = client.get(following_url(project, claims[0]), **HTMX)
    html = ahead.content.decode()
    assert ahead.status_code == 200
    assert shown_claim(html) == claims[1].pk
    assert "Claim text B." in html
    assert "<html" not in html  # the screen's partial only
    assert "no-store" in ahead["Cache-Control"]
    held = set(Reservation.objects.filter(user=ana).values_list("claim_id", flat=True))
    assert held == {claims[0].pk, claims[1].pk}

    # Another analyst is handed neither of ana's claims (each needs one label).
    client.force_login(bob)
    other = client.get(reverse("annotate:label-next", args=[project.slug]), **HTMX)
    assert shown_claim(other.content.decode()) == claims[2].pk

    # Ana's save-and-next serves the claim shown ahead, and stores her label.
    client.force_login(ana)
    saved = save(client, project, claims[0])
    assert shown_claim(saved.content.decode()) == claims[1].pk
    assert Label.objects.get(annotator=ana).claim_id == claims[0].pk
    # Asking again (a reload of the next screen) gives the same claim, not a third one.
    again = client.get(following_url(project, claims[0]), **HTMX)
    assert shown_claim(again.content.decode()) == claims[1].pk
    assert set(Reservation.objects.filter(user=ana).values_list("claim_id", flat=True)) == {
        claims[1].pk
    }


def test_nothing_follows_the_last_claim_of_a_queue(client):
    project, ana, _, claims = three_claims()
    client = logged_in(client, ana)
    for claim in claims[:2]:
        save(client, project, claim)
    response = client.get(following_url(project, claims[2]), **HTMX)
    assert response.status_code == 204
    assert response.content == b""
    assert not Reservation.objects.filter(user=ana).exclude(claim=claims[2]).exists()


def test_a_claim_rendered_ahead_and_lost_meanwhile_gives_way_to_the_servers_next(client):
    project, ana, bob, claims = three_claims()
    client = logged_in(client, ana)
    client.get(reverse("annotate:label-next", args=[project.slug]), **HTMX)
    ahead = client.get(following_url(project, claims[0]), **HTMX)
    assert shown_claim(ahead.content.decode()) == claims[1].pk
    # Ana's hold on B lapses (deleted here, as the expiry does) and bob labels B.
    Reservation.objects.filter(user=ana, claim=claims[1]).delete()
    label_save(claim=claims[1], annotator=bob, verdict=Verdict.NOT_IN_PILE)

    saved = save(client, project, claims[0])
    assert saved.status_code == 200
    assert shown_claim(saved.content.decode()) == claims[2].pk
    assert Label.objects.filter(annotator=ana, claim=claims[0]).exists()


def test_a_refused_save_keeps_the_claim_and_the_claim_ahead_stays_reserved(client):
    project, ana, bob, claims = three_claims()
    client = logged_in(client, ana)
    client.get(reverse("annotate:label-next", args=[project.slug]), **HTMX)
    client.get(following_url(project, claims[0]), **HTMX)
    refused = client.post(
        reverse("annotate:label-save", args=[project.slug, claims[0].pk]), {}, **HTMX
    )
    html = refused.content.decode()
    assert shown_claim(html) == claims[0].pk
    assert "Choose a verdict" in html
    assert not Label.objects.exists()
    assert Reservation.objects.filter(user=ana, claim=claims[1]).exists()


def test_the_following_screen_is_for_members_of_the_project(client):
    project, _, _, claims = three_claims()
    stranger = UserFactory(username="stranger")
    response = logged_in(client, stranger).get(following_url(project, claims[0]), **HTMX)
    assert response.status_code in (403, 404)
    assert not Reservation.objects.exists()


def test_a_claim_held_ahead_and_reached_by_j_is_labelled_outside_the_queue(client):
    project, ana, _, claims = three_claims()
    client = logged_in(client, ana)
    client.get(reverse("annotate:label-next", args=[project.slug]), **HTMX)
    client.get(following_url(project, claims[0]), **HTMX)  # B held ahead, not served
    client.get(reverse("annotate:label-claim", args=[project.slug, claims[1].pk]), **HTMX)
    save(client, project, claims[1])
    assert Label.objects.get(claim=claims[1]).stratum == {"outside_queue": True}
    # Its hold is released with the label, as a served claim's is.
    assert not Reservation.objects.filter(claim=claims[1]).exists()


def test_a_claim_held_ahead_is_served_by_the_save_and_then_labelled_in_the_queue(client):
    project, ana, _, claims = three_claims()
    client = logged_in(client, ana)
    client.get(reverse("annotate:label-next", args=[project.slug]), **HTMX)
    client.get(following_url(project, claims[0]), **HTMX)
    assert Reservation.objects.get(claim=claims[1]).ahead is True
    saved = save(client, project, claims[0])
    assert shown_claim(saved.content.decode()) == claims[1].pk
    assert Reservation.objects.get(claim=claims[1]).ahead is False  # served now
    # The screen ahead of B asked again does not turn the served hold back into one ahead.
    client.get(following_url(project, claims[0]), **HTMX)
    assert Reservation.objects.get(claim=claims[1]).ahead is False
    save(client, project, claims[1])
    assert Label.objects.get(claim=claims[0]).stratum == {}
    assert Label.objects.get(claim=claims[1]).stratum == {}


def _save_statements(client, project, claim) -> tuple[int, int | None]:
    """The statements (round trips) a save-and-next POST sends, and the claim it serves; the
    test's own transaction makes the save's a savepoint, which is not counted."""
    with CaptureQueriesContext(connection) as queries:
        saved = save(client, project, claim)
    sent = [q for q in queries if not q["sql"].startswith(("SAVEPOINT", "RELEASE SAVEPOINT"))]
    return len(sent), shown_claim(saved.content.decode())


def test_a_save_holding_the_claim_ahead_takes_no_more_statements_than_one_without(client):
    project, ana, bob, claims = three_claims()
    client = logged_in(client, ana)
    client.get(reverse("annotate:label-next", args=[project.slug]), **HTMX)
    without, served = _save_statements(client, project, claims[0])
    assert served == claims[1].pk
    # Now B is served and held; C is taken ahead of it, as label.js asks once B is shown.
    client.get(following_url(project, claims[1]), **HTMX)
    holding, served = _save_statements(client, project, claims[1])
    assert served == claims[2].pk
    assert holding == without
    if connection.vendor == "postgresql":
        # The session with its user, member and project (one statement); the claim's lock and
        # read; the label's writes with the queue's search; the reservation with the next
        # screen's reads. (5 before the session row named its user, 2026-12-07.)
        assert without == 4


def save_shown_ahead(client, project, claim, ahead):
    """A save as label.js posts it while `ahead`'s screen (rendered ahead) is shown."""
    url = reverse("annotate:label-save", args=[project.slug, claim.pk])
    return client.post(url, {"verdict": "NOT_IN_PILE"}, HTTP_X_SCREEN_AHEAD=str(ahead.pk), **HTMX)


def test_a_save_of_a_claim_whose_next_screen_is_shown_ahead_answers_only_what_label_js_takes(
    client,
):
    project, ana, _bob, claims = three_claims()
    client = logged_in(client, ana)
    client.get(reverse("annotate:label-next", args=[project.slug]), **HTMX)
    client.get(following_url(project, claims[0]), **HTMX)  # B rendered ahead, reserved
    answer = save_shown_ahead(client, project, claims[0], claims[1])
    html = answer.content.decode()
    assert answer.status_code == 200
    assert shown_claim(html) == claims[1].pk
    assert "data-confirmation" in html
    # The counters after the save and the "Saved …" line, as the whole screen has them.
    assert 'data-testid="my-count">1</strong>' in html
    assert (
        f'class="last-saved" role="status" aria-label="Last save" data-saved-claim="{claims[0].pk}"'
        in html
    )
    assert "Claim text A." in html
    # Not B's screen again: its form, text and pile came with the GET ahead.
    assert 'id="label-form"' not in html
    assert "Claim text B." not in html
    assert "Nothing relevant." not in html
    assert answer["HX-Push-Url"] == reverse("annotate:label-next", args=[project.slug])
    assert "labelSaved" in answer["HX-Trigger"]
    assert Label.objects.get(claim=claims[0], annotator=ana).verdict == Verdict.NOT_IN_PILE
    # And the queue goes on from B: its save serves C.
    client.get(following_url(project, claims[1]), **HTMX)
    after_b = save_shown_ahead(client, project, claims[1], claims[2])
    assert shown_claim(after_b.content.decode()) == claims[2].pk


def test_a_save_whose_claim_shown_ahead_is_not_what_follows_gets_the_whole_screen(client):
    project, ana, _bob, claims = three_claims()
    client = logged_in(client, ana)
    client.get(reverse("annotate:label-next", args=[project.slug]), **HTMX)
    # The browser claims C is shown ahead, but the queue serves B: the server's screen wins.
    answer = save_shown_ahead(client, project, claims[0], claims[2])
    html = answer.content.decode()
    assert shown_claim(html) == claims[1].pk
    assert "data-confirmation" not in html
    assert 'id="label-form"' in html
    assert "Claim text B." in html
    # Without htmx (no JavaScript) the header changes nothing: the save redirects.
    url = reverse("annotate:label-save", args=[project.slug, claims[1].pk])
    plain = client.post(url, {"verdict": "NOT_IN_PILE"}, HTTP_X_SCREEN_AHEAD=str(claims[2].pk))
    assert plain.status_code == 302


def test_the_read_ahead_takes_the_next_claim_with_the_queues_own_search(client):
    """The GET …/following/ of the unrestricted queue leaves the claim on the screen out of
    the hand-written search the save uses (no ORM-compiled queue query: it cost the read-ahead
    about 5 ms per save at 100k claims, bench/profile_save_next.py --ahead), with the expired
    reservations' cleanup in the search's round trip."""
    project, ana, bob, claims = three_claims()
    client = logged_in(client, ana)
    client.get(reverse("annotate:label-next", args=[project.slug]), **HTMX)  # A, reserved
    with CaptureQueriesContext(connection) as queries:
        ahead = client.get(following_url(project, claims[0]), **HTMX)
    assert shown_claim(ahead.content.decode()) == claims[1].pk
    sent = [q["sql"] for q in queries if "SAVEPOINT" not in q["sql"]]
    # the ORM's rendering of the queue's conditions, on the claims table
    assert not [s for s in sent if '"annotate_claim"."label_count" <' in s]
    assert Reservation.objects.get(claim=claims[1], user=ana).ahead
    if connection.vendor == "postgresql":
        # The session with its user, member and project (one statement); the claim's check in
        # the project, the expired cleanup and the search of the analyst's own reservations
        # (A left out) in one round trip; the open claims' search; the reservation with the
        # screen's reads.
        assert len(sent) == 4
        # Only reservations are written: the commit does not wait for its WAL flush.
        assert "set_config('synchronous_commit', 'off', true)" in sent[1]


def test_the_read_ahead_of_a_claim_of_another_project_is_not_found_and_reserves_nothing(client):
    project, ana, _bob, _claims = three_claims()
    elsewhere = ClaimFactory(text="Another project's claim.")
    assert elsewhere.answer.project_id != project.pk
    MembershipFactory(project=elsewhere.answer.project, user=ana)
    client = logged_in(client, ana)
    response = client.get(following_url(project, elsewhere), **HTMX)
    assert response.status_code == 404
    assert not Reservation.objects.exists()


def test_a_save_confirmed_against_its_screen_ahead_does_not_read_that_screen_again(client):
    project, ana, _bob, claims = three_claims()
    client = logged_in(client, ana)
    client.get(reverse("annotate:label-next", args=[project.slug]), **HTMX)
    client.get(following_url(project, claims[0]), **HTMX)  # B rendered ahead, reserved
    with CaptureQueriesContext(connection) as queries:
        answer = save_shown_ahead(client, project, claims[0], claims[1])
    assert "data-confirmation" in answer.content.decode()
    sent = " ".join(q["sql"] for q in queries)
    # Neither B's pile nor its answer's claims: the browser has them from the GET ahead.
    assert "FROM annotate_passage" not in sent
    assert "Nothing relevant." not in answer.content.decode()
    # A label is written durably: its transaction keeps synchronous_commit as configured.
    assert "synchronous_commit" not in sent
    assert Reservation.objects.get(claim=claims[1], user=ana).ahead is False  # served now
