"""The labelling screen's views, with and without htmx, and blind labelling."""

import json
from datetime import timedelta

import pytest
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from django.utils import timezone

from annotate.models import Claim, Label, Reservation, Role, Verdict
from annotate.services.labels import label_save
from tests.factories import (
    AnswerFactory,
    ClaimFactory,
    JudgeRunFactory,
    JudgeVerdictFactory,
    MembershipFactory,
    PassageFactory,
    ProjectFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


EMOJI_PASSAGE = "Card refunds 💳 are paid within 14 days. Cash refunds are not offered."
HTMX = {"HTTP_HX_REQUEST": "true"}


def build(**project_fields):
    """One answer with two claims (the first spanning its sentence) and a two-passage pile."""
    project = ProjectFactory(**project_fields)
    answer = AnswerFactory(
        project=project,
        question="How are refunds paid?",
        text="Refunds go to the card within 14 days. Cash is not refunded.",
    )
    second = PassageFactory(answer=answer, rank=2, title="Cash policy", text="No cash back.")
    first = PassageFactory(answer=answer, rank=1, title="Card policy", text=EMOJI_PASSAGE)
    claims = [
        ClaimFactory(
            answer=answer,
            text="Refunds go to the card within 14 days.",
            position=0,
            span_start=0,
            span_end=38,
            queue_key=10,
        ),
        ClaimFactory(answer=answer, text="Cash is not refunded.", position=1, queue_key=20),
    ]
    user = UserFactory()
    MembershipFactory(project=project, user=user)
    return project, user, claims, (first, second)


def logged_in(client, user):
    client.force_login(user)
    return client


def save_url(project, claim):
    return reverse("annotate:label-save", args=[project.slug, claim.pk])


def test_screen_shows_question_highlighted_claim_and_pile_in_rank_order(client):
    project, user, claims, (first, second) = build()
    response = logged_in(client, user).get(reverse("annotate:label-next", args=[project.slug]))
    html = response.content.decode()
    assert response.status_code == 200
    assert "<html" in html
    assert "How are refunds paid?" in html
    assert '<mark class="claim-mark">Refunds go to the card within 14 days.</mark>' in html
    assert html.index("Card policy") < html.index("Cash policy")  # rank 1 before rank 2
    assert 'method="post"' in html
    assert 'dir="auto"' in html
    assert Reservation.objects.filter(user=user, claim=claims[0]).exists()


def test_screen_with_htmx_returns_only_the_screen_partial(client):
    project, user, claims, _ = build()
    response = logged_in(client, user).get(
        reverse("annotate:label-next", args=[project.slug]), **HTMX
    )
    html = response.content.decode().strip()
    assert html.startswith('<div id="screen"')
    assert "<html" not in html
    assert "Refunds go to the card within 14 days." in html


def test_save_without_htmx_stores_the_quote_after_an_emoji_and_redirects(client):
    project, user, claims, (first, _) = build()
    quote = "are paid within 14 days."
    # The browser counts the card emoji as two UTF-16 units.
    utf16_start = len(EMOJI_PASSAGE[: EMOJI_PASSAGE.index(quote)].encode("utf-16-le")) // 2
    response = logged_in(client, user).post(
        save_url(project, claims[0]),
        {
            "verdict": "SUPPORTED",
            "passage": first.pk,
            "start_utf16": utf16_start,
            "end_utf16": utf16_start + len(quote),
            "quote": quote,
            "note": "clear",
        },
    )
    assert response.status_code == 302
    assert response["Location"].endswith(f"/label/?saved={claims[0].pk}")
    label = Label.objects.get(claim=claims[0], annotator=user)
    assert label.evidence_quote == quote
    assert EMOJI_PASSAGE[label.evidence_start : label.evidence_end] == quote
    assert label.evidence_start == utf16_start - 1
    follow = client.get(response["Location"]).content.decode()
    assert "Saved" in follow
    assert "Cash is not refunded." in follow  # the next claim


def test_save_with_htmx_returns_the_next_claim_and_triggers_label_saved(client):
    project, user, claims, _ = build()
    client = logged_in(client, user)
    client.get(reverse("annotate:label-next", args=[project.slug]))
    response = client.post(save_url(project, claims[0]), {"verdict": "NOT_IN_PILE"}, **HTMX)
    html = response.content.decode()
    assert response.status_code == 200
    assert html.strip().startswith('<div id="screen"')
    assert "Cash is not refunded." in html
    assert 'data-testid="my-count">1<' in html
    assert "labelSaved" in json.loads(response["HX-Trigger"])
    assert response["HX-Push-Url"] == reverse("annotate:label-next", args=[project.slug])


@pytest.mark.parametrize(("headers", "status"), [({}, 422), (HTMX, 200)])
def test_supported_without_a_quote_is_refused_and_the_choice_kept(client, headers, status):
    project, user, claims, _ = build()
    response = logged_in(client, user).post(
        save_url(project, claims[0]), {"verdict": "SUPPORTED", "note": "my note"}, **headers
    )
    html = response.content.decode()
    assert response.status_code == status
    assert "needs a quote" in html
    assert 'value="SUPPORTED" checked' in html
    assert "my note" in html
    assert not Label.objects.exists()


def test_supported_without_a_quote_is_accepted_when_the_project_does_not_require_one(client):
    project, user, claims, _ = build(quote_required=False)
    response = logged_in(client, user).post(save_url(project, claims[0]), {"verdict": "SUPPORTED"})
    assert response.status_code == 302
    assert Label.objects.get().verdict == Verdict.SUPPORTED


def test_a_quote_not_in_the_passage_is_refused_with_the_reason(client):
    project, user, claims, (first, _) = build()
    response = logged_in(client, user).post(
        save_url(project, claims[0]),
        {"verdict": "CONTRADICTED", "passage": first.pk, "quote": "within 30 days"},
        **HTMX,
    )
    assert "does not contain the quote" in response.content.decode()
    assert not Label.objects.exists()


def test_typed_quote_without_offsets_is_located_in_the_passage(client):
    project, user, claims, (first, _) = build()
    logged_in(client, user).post(
        save_url(project, claims[1]),
        {"verdict": "CONTRADICTED", "passage": first.pk, "quote": "Cash refunds are not offered."},
    )
    label = Label.objects.get()
    assert EMOJI_PASSAGE[label.evidence_start : label.evidence_end] == label.evidence_quote


def test_undo_with_htmx_shows_the_undone_claim_again(client):
    project, user, claims, _ = build()
    client = logged_in(client, user)
    client.post(save_url(project, claims[0]), {"verdict": "NOT_IN_PILE"}, **HTMX)
    response = client.post(reverse("annotate:label-undo", args=[project.slug]), **HTMX)
    html = response.content.decode()
    assert (
        "Label undone: your NOT_IN_PILE label on “Refunds go to the card within 14 days.”" in html
    )
    assert f'data-claim-id="{claims[0].pk}"' in html
    assert not Label.objects.exists()
    assert Reservation.objects.filter(user=user, claim=claims[0]).exists()


def test_undo_without_htmx_redirects_to_the_undone_claim(client):
    project, user, claims, _ = build()
    client = logged_in(client, user)
    client.post(save_url(project, claims[0]), {"verdict": "NOT_IN_PILE"})
    response = client.post(reverse("annotate:label-undo", args=[project.slug]))
    assert response.status_code == 302
    assert response["Location"] == reverse(
        "annotate:label-claim", args=[project.slug, claims[0].pk]
    )
    nothing = client.post(reverse("annotate:label-undo", args=[project.slug]), follow=True)
    assert "no save or skip of yours to undo" in nothing.content.decode()


def test_moving_within_the_answer_and_labelling_off_queue_is_recorded(client):
    project, user, claims, _ = build()
    client = logged_in(client, user)
    first = client.get(reverse("annotate:label-next", args=[project.slug])).content.decode()
    claim_url = reverse("annotate:label-claim", args=[project.slug, claims[1].pk])
    assert f'id="claim-next" href="{claim_url}"' in first
    second = client.get(claim_url, **HTMX).content.decode()
    assert "Claim 2 of 2" in second
    assert 'id="claim-prev"' in second
    client.post(save_url(project, claims[1]), {"verdict": "NOT_IN_PILE"})
    assert Label.objects.get(claim=claims[1]).stratum == {"outside_queue": True}


def test_empty_queue_says_so(client):
    project, user, claims, _ = build()
    Claim.objects.filter(pk__in=[c.pk for c in claims]).update(labels_required=1)
    other = UserFactory()
    MembershipFactory(project=project, user=other)
    for claim in claims:
        label_save(claim=claim, annotator=other, verdict=Verdict.NOT_IN_PILE)
    html = logged_in(client, user).get(reverse("annotate:label-next", args=[project.slug]))
    assert "Your queue is empty" in html.content.decode()
    assert "2 of 2" in html.content.decode()


def test_outsiders_get_404(client):
    project, _, claims, _ = build()
    stranger = UserFactory()
    client = logged_in(client, stranger)
    assert client.get(reverse("annotate:label-next", args=[project.slug])).status_code == 404
    assert client.post(save_url(project, claims[0]), {"verdict": "NOT_IN_PILE"}).status_code == 404


# Blind labelling ---------------------------------------------------------------------------

JUDGE_NAME = "oracle-judge-5531"
COLLEAGUE_NOTE = "colleague-note-zebra-7781"


def blind_setup(*, reveal_after_save: bool):
    project, user, claims, _ = build(reveal_after_save=reveal_after_save)
    claim = claims[0]
    Claim.objects.filter(pk=claim.pk).update(labels_required=2)
    run = JudgeRunFactory(judge__project=project, judge__name=JUDGE_NAME, project=project)
    JudgeVerdictFactory(run=run, claim=claim, verdict=Verdict.CONTRADICTED, confidence=0.1234)
    colleague = UserFactory(username="colleague-walrus")
    MembershipFactory(project=project, user=colleague)
    label_save(claim=claim, annotator=colleague, verdict=Verdict.NOT_IN_PILE, note=COLLEAGUE_NOTE)
    return project, user, claim


def _args(name, project, claim):
    return {
        "label-next": [project.slug],
        "label-claim": [project.slug, claim.pk],
        "answer-detail": [project.slug, claim.answer_id],
        "facts": [project.slug, claim.answer_id],
    }[name]


SECRETS = (JUDGE_NAME, COLLEAGUE_NOTE, "colleague-walrus", "0.12")


def analyst_get_urls(project, claim) -> list[str]:
    """Every GET page an analyst can open about this claim, found from the URL resolver."""
    found = []

    def walk(patterns, prefix):
        for entry in patterns:
            if isinstance(entry, URLResolver):
                walk(entry.url_patterns, prefix + str(entry.pattern))
            elif isinstance(entry, URLPattern):
                route = prefix + str(entry.pattern)
                role = getattr(entry.callback, "required_role", None)
                if role == Role.ANALYST or (route == "" and role is None):
                    found.append(route)

    walk(get_resolver().url_patterns, "")
    urls = []
    for route in found:
        path = route.replace("<slug:slug>", project.slug)
        path = path.replace("<int:claim_id>", str(claim.pk))
        path = path.replace("<int:answer_id>", str(claim.answer_id))
        if "<" not in path:  # ids of other objects (facts, ...) are not about this claim
            urls.append("/" + path)
    return urls


def analyst_pages_before_saving(client, project, claim):
    for url in analyst_get_urls(project, claim):
        response = client.get(url)
        if response.status_code != 405:  # POST-only actions are not pages
            yield response
        yield client.get(url, **HTMX)
    yield client.get(reverse("annotate:label-next", args=[project.slug]))
    yield client.get(reverse("annotate:label-next", args=[project.slug]), **HTMX)
    yield client.get(reverse("annotate:label-claim", args=[project.slug, claim.pk]))
    yield client.get(reverse("annotate:label-claim", args=[project.slug, claim.pk]), **HTMX)
    yield client.post(save_url(project, claim), {"verdict": "SUPPORTED"}, **HTMX)  # refused
    yield client.post(save_url(project, claim), {"verdict": "SUPPORTED"})  # refused


@pytest.mark.parametrize("reveal_after_save", [False, True])
def test_analyst_pages_never_show_judge_or_colleague_before_saving(client, reveal_after_save):
    project, user, claim = blind_setup(reveal_after_save=reveal_after_save)
    client = logged_in(client, user)
    paths = analyst_get_urls(project, claim)
    for expected in ("label-next", "label-claim", "answer-detail", "facts"):
        assert any(
            p.endswith(reverse(f"annotate:{expected}", args=_args(expected, project, claim)))
            for p in paths
        )
    for response in analyst_pages_before_saving(client, project, claim):
        html = response.content.decode()
        if response.status_code == 405:
            continue
        assert response.status_code in (200, 422), response.request["PATH_INFO"]
        for secret in SECRETS:
            assert secret not in html, f"{response.request['PATH_INFO']} shows {secret!r}"
    assert not Label.objects.filter(annotator=user).exists()


def test_after_saving_the_judge_and_colleague_are_revealed_when_the_project_says_so(client):
    project, user, claim = blind_setup(reveal_after_save=True)
    client = logged_in(client, user)
    saved = client.post(
        save_url(project, claim), {"verdict": "NOT_IN_PILE"}, **HTMX
    ).content.decode()
    assert JUDGE_NAME in saved
    assert COLLEAGUE_NOTE in saved
    again = client.get(
        reverse("annotate:label-claim", args=[project.slug, claim.pk])
    ).content.decode()
    assert JUDGE_NAME in again
    assert "colleague-walrus" in again
    assert "0.12" in again


def test_after_saving_nothing_is_revealed_by_default(client):
    project, user, claim = blind_setup(reveal_after_save=False)
    client = logged_in(client, user)
    responses = [
        client.post(save_url(project, claim), {"verdict": "NOT_IN_PILE"}, **HTMX),
        client.get(reverse("annotate:label-claim", args=[project.slug, claim.pk])),
        client.get(f"{reverse('annotate:label-next', args=[project.slug])}?saved={claim.pk}"),
    ]
    assert Label.objects.filter(annotator=user).exists()
    for response in responses:
        html = response.content.decode()
        for secret in SECRETS:
            assert secret not in html


def test_queue_restricted_to_a_stratum_records_it_on_labels_saved_from_the_screen(client):
    project, user, claims, _ = build()
    other = AnswerFactory(project=project, risk_category="health", question="Is it safe?")
    PassageFactory(answer=other, rank=1)
    health_claim = ClaimFactory(answer=other, text="It is safe.", position=0, queue_key=99)
    user.memberships.filter(project=project).update(queue_stratum={"risk_category": "health"})
    client = logged_in(client, user)
    html = client.get(reverse("annotate:label-next", args=[project.slug])).content.decode()
    assert "It is safe." in html  # the health claim, though it is last in the seeded order
    client.post(save_url(project, health_claim), {"verdict": "NOT_IN_PILE"})
    assert Label.objects.get(annotator=user).stratum == {"risk_category": "health"}
    html = client.get(reverse("annotate:label-next", args=[project.slug])).content.decode()
    assert "Your queue is empty" in html


def test_own_label_is_shown_with_browser_offsets_and_saving_it_again_keeps_the_quote(client):
    project, user, claims, (first, _) = build()
    quote = "are paid within 14 days."
    start = EMOJI_PASSAGE.index(quote)
    label_save(
        claim=claims[0],
        annotator=user,
        verdict=Verdict.SUPPORTED,
        passage=first,
        start=start,
        end=start + len(quote),
        quote=quote,
    )
    client = logged_in(client, user)
    html = client.get(reverse("annotate:label-claim", args=[project.slug, claims[0].pk]))
    html = html.content.decode()
    assert f'name="start_utf16" value="{start + 1}"' in html  # the emoji: two UTF-16 units
    assert 'value="SUPPORTED" checked' in html
    client.post(
        save_url(project, claims[0]),
        {
            "verdict": "SUPPORTED",
            "passage": first.pk,
            "start_utf16": start + 1,
            "end_utf16": start + 1 + len(quote),
            "quote": quote,
        },
    )
    label = Label.objects.get(annotator=user)
    assert (label.evidence_start, label.evidence_quote) == (start, quote)
    assert label.claim.label_history.count() == 2


def test_save_and_next_serves_a_claim_the_analyst_still_holds_before_the_queue_order(client):
    project, user, claims, _ = build()
    held = ClaimFactory(answer=claims[0].answer, text="Held claim.", position=2, queue_key=30)
    Reservation.objects.create(
        claim=held, user=user, expires_at=timezone.now() + timedelta(minutes=5)
    )
    client = logged_in(client, user)
    html = client.post(save_url(project, claims[0]), {"verdict": "NOT_IN_PILE"}, **HTMX)
    assert f'data-claim-id="{held.pk}"' in html.content.decode()  # not claims[1], key 20
    assert Label.objects.get(annotator=user).stratum == {"outside_queue": True}


def test_save_and_next_reads_the_database_a_bounded_number_of_times(
    client, django_assert_max_num_queries
):
    project, user, claims, _ = build()
    client = logged_in(client, user)
    client.get(reverse("annotate:label-next", args=[project.slug]))
    # The session with its user and membership (one statement); then three batches
    # (annotate.batch): the claim's lock and state; the label's writes and the next claim's
    # search; its reservation, the counters and the next screen's reads. On PostgreSQL a batch is one round trip; SQLite runs its
    # statements one by one (14). Inside the test's own transaction the save's becomes a
    # savepoint: two statements more here than in production. Was 33 before the screen and
    # the queue were one transaction, 20 before the batches, 6 before the user's read joined
    # the membership's, 5 and 15 before the session row named its user.
    from django.db import connection

    with django_assert_max_num_queries(2 + (4 if connection.vendor == "postgresql" else 14)):
        response = client.post(save_url(project, claims[0]), {"verdict": "NOT_IN_PILE"}, **HTMX)
    html = response.content.decode()
    assert f'data-claim-id="{claims[1].pk}"' in html
    # The siblings read with the next claim: its place in the answer and the way back (j).
    assert "Claim 2 of 2" in html
    assert reverse("annotate:label-claim", args=[project.slug, claims[0].pk]) in html
    assert 'id="claim-next"' not in html


# Issue 34: numbers the label form cannot read are refused with the field named, never a 500
# ("²".isdigit() is true but int("²") raises; int() of 5,000 digits raises; a 30-digit passage
# id overflowed SQLite's integer).
BAD_NUMBERS = [
    ("more_passage", "²", "Span 2: passage_id must be a whole number, not &#x27;²&#x27;"),
    ("more_start_utf16", "7" * 5000, "Span 2: start_utf16 is too large (at most 2,147,483,647)"),
    ("more_end_utf16", "٣", "Span 2: end_utf16 must be a whole number, not &#x27;٣&#x27;"),
    (
        "more_passage",
        "9" * 30,
        "Span 2: passage_id is too large (at most 9,223,372,036,854,775,807)",
    ),
    (
        "passage",
        "9" * 30,
        "passage: Ensure this value is less than or equal to 9223372036854775807.",
    ),
    ("passage", "²", "passage: Enter a whole number."),
    ("start_utf16", "7" * 5000, "start_utf16: Enter a whole number."),
    (
        "end_utf16",
        "4294967296",
        "end_utf16: Ensure this value is less than or equal to 2147483647.",
    ),
]


@pytest.mark.parametrize(("headers", "status"), [({}, 422), (HTMX, 200)])
@pytest.mark.parametrize(("field", "value", "message"), BAD_NUMBERS)
def test_a_number_the_form_cannot_read_is_refused_naming_the_field(
    client, headers, status, field, value, message
):
    project, user, claims, (first, _) = build()
    sent = {
        "verdict": "SUPPORTED",
        "passage": first.pk,
        "start_utf16": 0,
        "end_utf16": 12,
        "quote": "Card refunds",
        "more_passage": first.pk,
        "more_start_utf16": 0,
        "more_end_utf16": 4,
        "more_quote": "Card",
    }
    sent[field] = value
    response = logged_in(client, user).post(save_url(project, claims[0]), sent, **headers)
    assert response.status_code == status
    assert message in response.content.decode()
    assert not Label.objects.exists()


@pytest.mark.parametrize("saved", ["²", "9" * 30, "7" * 5000])
def test_the_next_screen_ignores_a_saved_id_it_cannot_read(client, saved):
    """`?saved=²` raised ValueError in the claim_id lookup (a 500); now the screen shows."""
    project, user, claims, _ = build()
    response = logged_in(client, user).get(
        reverse("annotate:label-next", args=[project.slug]), {"saved": saved}
    )
    assert response.status_code == 200
    assert "Refunds go to the card within 14 days." in response.content.decode()


@pytest.mark.parametrize("token", ["²-1", "1-²", "9" * 30 + "-1", "٣-٤", "²" * 32])
def test_a_pair_token_of_unreadable_ids_is_no_pair(token):
    from annotate.pairwise import Pair, pair_find

    assert pair_find([Pair("q1", 1, 2)], token=token, analyst_id=1) is None


def test_an_llm_split_of_an_unreadable_answer_id_is_not_a_server_error(client):
    project, user, claims, _ = build()
    lead = UserFactory()
    MembershipFactory(project=project, user=lead, role=Role.LEAD)
    for answer in ("²", "9" * 30):
        response = logged_in(client, lead).post(
            reverse("judges:split-start", args=[project.slug]), {"answer": answer}
        )
        assert response.status_code < 500


def test_a_typed_quote_without_its_passage_is_found_in_the_pile(client):
    project, user, claims, (_, second) = build()
    logged_in(client, user).post(
        save_url(project, claims[1]), {"verdict": "CONTRADICTED", "quote": "No cash back."}, **HTMX
    )
    label = Label.objects.get()
    assert label.evidence_passage == second
    assert (label.evidence_start, label.evidence_end) == (0, len("No cash back."))


def test_a_typed_quote_in_no_passage_is_refused_as_not_found_in_the_pile(client):
    project, user, claims, _ = build()
    response = logged_in(client, user).post(
        save_url(project, claims[1]),
        {"verdict": "CONTRADICTED", "quote": "Cash refunds take a week."},
        **HTMX,
    )
    html = response.content.decode()
    assert "not found in any passage of the pile" in html
    assert "Which passage is the quote from?" not in html
    assert "Cash refunds take a week.</textarea>" in html  # the form is kept
    assert not Label.objects.exists()
