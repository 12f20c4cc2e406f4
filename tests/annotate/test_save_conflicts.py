"""Save-and-next never loses a save to a deadlock: one analyst in several browser tabs.

The finding: 8 of 2,000 save-and-next requests of one analyst saving from several tabs at once
answered 500 (`DeadlockDetected … annotate_membership` from `claim_take_next`), and those saves
were lost. On PostgreSQL, with real connections (one per thread) and the real views.
"""

import re
import threading
from collections import defaultdict

import psycopg.errors
import pytest
from django.db import OperationalError, connection
from django.test import Client
from django.urls import reverse

from annotate.models import Answer, Claim, Label, LabelHistory, Membership, Passage, Verdict
from tests.factories import ClaimFactory, MembershipFactory, ProjectFactory, UserFactory

HTMX = {"HTTP_HX_REQUEST": "true"}
SESSIONS = 6
SAVES = 40  # per session
PILE = "Refunds are processed within 14 days. They are issued to the original card."
QUOTES = {
    Verdict.SUPPORTED: "Refunds are processed within 14 days.",
    Verdict.CONTRADICTED: "They are issued to the original card.",
    Verdict.NOT_IN_PILE: "",
}
CLAIM_ID = re.compile(r'data-claim-id="(\d+)"')


def _project(claims: int):
    project = ProjectFactory(analysts_per_claim=1, quote_required=True)
    answers = Answer.objects.bulk_create(
        Answer(project=project, external_id=f"a{i}", position=i, question="q?", text="t.")
        for i in range(claims // 4)
    )
    Passage.objects.bulk_create(Passage(answer=a, rank=1, text=PILE) for a in answers)
    Claim.objects.bulk_create(
        Claim(
            project=project,
            answer=answers[i // 4],
            text=f"claim {i}",
            position=i % 4,
            queue_key=i,
            labels_required=1,
        )
        for i in range(claims)
    )
    return project


def _form(claim_id: int, verdict: str, note: str) -> dict:
    form = {"verdict": verdict, "note": note}
    quote = QUOTES[verdict]
    if quote:
        passage = Passage.objects.filter(answer__claims=claim_id).values_list("pk", flat=True)[0]
        start = PILE.index(quote)  # ASCII: UTF-16 offsets are code points
        form.update(passage=passage, quote=quote, start_utf16=start, end_utf16=start + len(quote))
    return form


@pytest.mark.postgres
def test_one_analyst_in_six_tabs_saving_at_once_loses_no_save(transactional_db, settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    assert connection.vendor == "postgresql"
    project = _project(claims=SESSIONS * SAVES * 2)
    user = UserFactory(username="tabs")
    MembershipFactory(project=project, user=user)
    verdicts = list(QUOTES)
    posted = []  # (claim_id, verdict, note) of every save the server was sent
    statuses = defaultdict(int)
    failures = []
    lock = threading.Lock()
    barrier = threading.Barrier(SESSIONS)

    def tab(i: int) -> None:
        client = Client(raise_request_exception=False)
        client.force_login(user)  # a session of its own: another tab, another browser
        try:
            html = client.get(reverse("annotate:label-next", args=[project.slug]), **HTMX)
            claim_id = int(CLAIM_ID.search(html.content.decode()).group(1))
            barrier.wait(60)
            for n in range(SAVES):
                verdict, note = verdicts[(i + n) % 3], f"tab {i} save {n}"
                form = _form(claim_id, verdict, note)
                response = client.post(
                    reverse("annotate:label-save", args=[project.slug, claim_id]), form, **HTMX
                )
                with lock:
                    statuses[response.status_code] += 1
                    posted.append((claim_id, verdict, note, response.status_code))
                found = CLAIM_ID.search(response.content.decode())
                if found is None:
                    break
                claim_id = int(found.group(1))
        except Exception as error:  # surfaced by the assertion below
            failures.append(f"tab {i}: {error!r}")
            barrier.abort()
        finally:
            connection.close()

    threads = [threading.Thread(target=tab, args=(i,)) for i in range(SESSIONS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(300)
    assert not any(t.is_alive() for t in threads), "a tab hung"
    assert failures == []
    assert dict(statuses) == {200: len(posted)}, dict(statuses)
    # Every verdict POSTed is the label or a row of its history: no save lost.
    history = set(
        LabelHistory.objects.filter(claim__project=project).values_list("claim_id", "note")
    )
    lost = [(claim, note) for claim, _v, note, _s in posted if (claim, note) not in history]
    assert lost == []
    # No duplicate: one label per claim and analyst, and the counters agree with the rows.
    labels = list(Label.objects.filter(claim__project=project).values_list("claim_id", flat=True))
    assert len(labels) == len(set(labels)) == len({claim for claim, *_ in posted})
    assert Membership.objects.get(project=project, user=user).labels_saved == len(labels)
    for claim in Claim.objects.filter(pk__in=labels):
        assert claim.label_count == 1


# -- the retry and its bound, forced ------------------------------------------------------------


def _screen_project():
    project = ProjectFactory(quote_required=True)
    claim = ClaimFactory(answer__project=project, text="Refunds take 14 days.")
    passage = Passage.objects.create(answer=claim.answer, rank=1, text=PILE)
    user = UserFactory()
    MembershipFactory(project=project, user=user)
    return project, claim, passage, user


def _deadlock() -> OperationalError:
    """What Django raises when PostgreSQL picks this transaction as a deadlock's victim."""
    error = OperationalError("deadlock detected")
    error.__cause__ = psycopg.errors.DeadlockDetected("deadlock detected")
    return error


def _failing_first(monkeypatch, times: int, make_error):
    """Make the first `times` batches of statements fail as a deadlock victim's would."""
    from annotate import batch

    original = batch.StatementBatch.run
    calls = {"failed": 0}

    def run(self):
        if calls["failed"] < times:
            calls["failed"] += 1
            self._statements = []
            raise make_error()
        return original(self)

    monkeypatch.setattr(batch.StatementBatch, "run", run)
    return calls


@pytest.mark.django_db
@pytest.mark.parametrize(
    "make_error",
    [
        _deadlock,
        lambda: _with_cause(psycopg.errors.SerializationFailure("could not serialize")),
    ],
    ids=["deadlock", "serialisation-failure"],
)
def test_save_and_next_retries_a_deadlock_and_the_save_lands(client, monkeypatch, make_error):
    project, claim, passage, user = _screen_project()
    client.force_login(user)
    calls = _failing_first(monkeypatch, 1, make_error)
    quote = QUOTES[Verdict.SUPPORTED]
    start = PILE.index(quote)
    response = client.post(
        reverse("annotate:label-save", args=[project.slug, claim.pk]),
        {
            "verdict": "SUPPORTED",
            "passage": passage.pk,
            "quote": quote,
            "start_utf16": start,
            "end_utf16": start + len(quote),
        },
        **HTMX,
    )
    assert calls["failed"] == 1
    assert response.status_code == 200
    label = Label.objects.get(claim=claim, annotator=user)
    assert (label.verdict, label.evidence_quote) == ("SUPPORTED", quote)
    assert LabelHistory.objects.filter(claim=claim).count() == 1


def _with_cause(cause) -> OperationalError:
    error = OperationalError(str(cause))
    error.__cause__ = cause
    return error


@pytest.mark.django_db
@pytest.mark.parametrize("htmx", [True, False], ids=["htmx", "plain-form"])
def test_save_and_next_after_the_retries_answers_503_with_the_form_kept(client, monkeypatch, htmx):
    project, claim, passage, user = _screen_project()
    client.force_login(user)
    calls = _failing_first(monkeypatch, 100, _deadlock)
    quote = QUOTES[Verdict.CONTRADICTED]
    start = PILE.index(quote)
    response = client.post(
        reverse("annotate:label-save", args=[project.slug, claim.pk]),
        {
            "verdict": "CONTRADICTED",
            "passage": passage.pk,
            "quote": quote,
            "start_utf16": start,
            "end_utf16": start + len(quote),
            "note": "card, not cash",
        },
        **(HTMX if htmx else {}),
    )
    assert calls["failed"] == 3  # bounded: three tries
    assert response.status_code == 503
    assert response["Retry-After"]
    html = response.content.decode()
    assert "was not saved" in html
    assert "press Save again" in html
    # The analyst's verdict, quote and note are still in the form.
    assert re.search(r'value="CONTRADICTED"[^>]*checked|checked[^>]*value="CONTRADICTED"', html)
    assert quote in html
    assert "card, not cash" in html
    assert not Label.objects.filter(claim=claim).exists()
