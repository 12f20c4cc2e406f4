"""16 analysts saving 1,000 labels at once on PostgreSQL, with the same claim saved twice at the
same instant by the same analyst (two browser tabs): nothing lost, nothing duplicated, and the
label history complete and in order.

tests/annotate/test_queue_concurrency.py covers the queue (no claim over-served, quota never
exceeded); this one covers the labels' content and history under simultaneous writes.
"""

import threading
import time
from collections import Counter, defaultdict

import pytest
from django.db import connection

from annotate.models import Answer, Claim, Label, LabelHistory, Membership, Passage, Verdict
from annotate.services.labels import label_save
from tests.factories import ProjectFactory, UserFactory

ANALYSTS = 16
CLAIMS = 250
PER_CLAIM = 4  # 250 claims x 4 analysts = 1,000 labels
DOUBLE_ROUNDS = 5  # each analyst: 5 claims saved from two threads at the same instant
PILE = "Refunds are processed within 14 days. They are issued to the original card."
QUOTES = {
    Verdict.SUPPORTED: "Refunds are processed within 14 days.",
    Verdict.CONTRADICTED: "They are issued to the original card.",
    Verdict.NOT_IN_PILE: "",
}


def _build():
    project = ProjectFactory(analysts_per_claim=PER_CLAIM, quote_required=True)
    answers = Answer.objects.bulk_create(
        Answer(project=project, external_id=f"a{i}", position=i, question="q?", text="t.")
        for i in range(CLAIMS // 5)
    )
    Passage.objects.bulk_create(Passage(answer=a, rank=1, text=PILE) for a in answers)
    Claim.objects.bulk_create(
        Claim(
            project=project,
            answer=answers[i // 5],
            text=f"claim {i}",
            position=i % 5,
            queue_key=i,
            labels_required=PER_CLAIM,
        )
        for i in range(CLAIMS)
    )
    users = [UserFactory(username=f"conc-{i}") for i in range(ANALYSTS)]
    Membership.objects.bulk_create(Membership(project=project, user=u) for u in users)
    return project, users


def _evidence(claim: Claim, verdict: str) -> dict:
    quote = QUOTES[verdict]
    if not quote:
        return {}
    passage = claim.answer.passages.get()
    start = PILE.index(quote)
    return {"passage": passage, "start": start, "end": start + len(quote), "quote": quote}


@pytest.mark.postgres
def test_sixteen_analysts_1000_labels_with_simultaneous_double_saves(transactional_db, figures):
    assert connection.vendor == "postgresql"
    project, users = _build()
    claims = list(Claim.objects.filter(project=project).select_related("answer").order_by("pk"))
    # Analyst i labels the claims with index % 4 == i % 4: every claim gets exactly 4 analysts.
    assigned = {
        i: [c for k, c in enumerate(claims) if k % PER_CLAIM == i % PER_CLAIM]
        for i in range(ANALYSTS)
    }
    # Per analyst, the claims saved twice at once: by their own thread and by their
    # neighbour's thread acting as them (the same person in two tabs).
    doubles = {i: assigned[i][:DOUBLE_ROUNDS] for i in range(ANALYSTS)}
    verdicts = list(QUOTES)
    intended = defaultdict(list)  # (claim, annotator) -> every state written, any order
    lock = threading.Lock()
    errors = []
    barrier = threading.Barrier(ANALYSTS)

    def save(claim, user, verdict, note):
        label_save(
            claim=claim, annotator=user, verdict=verdict, note=note, **_evidence(claim, verdict)
        )
        with lock:
            intended[(claim.pk, user.pk)].append((verdict, note))

    def analyst(i):
        me, neighbour = users[i], users[(i + 1) % ANALYSTS]
        try:
            for r in range(DOUBLE_ROUNDS):
                barrier.wait(60)
                # At once: my own save of my claim, and my save (as my neighbour) of theirs.
                save(doubles[i][r], me, verdicts[r % 3], f"tab one {i}/{r}")
                save(
                    doubles[(i + 1) % ANALYSTS][r],
                    neighbour,
                    verdicts[(r + 1) % 3],
                    f"tab two {i}/{r}",
                )
            barrier.wait(60)
            for k, claim in enumerate(assigned[i][DOUBLE_ROUNDS:]):
                save(claim, me, verdicts[(i + k) % 3], f"analyst {i} claim {claim.pk}")
        except Exception as error:  # surfaced by the assertion below
            errors.append(f"analyst {i}: {error!r}")
            barrier.abort()
        finally:
            connection.close()

    started = time.monotonic()
    threads = [threading.Thread(target=analyst, args=(i,)) for i in range(ANALYSTS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(300)
    elapsed = time.monotonic() - started
    assert not any(t.is_alive() for t in threads), "an analyst hung (deadlock?)"
    assert errors == []

    saves = sum(len(states) for states in intended.values())
    assert saves == CLAIMS * PER_CLAIM + ANALYSTS * DOUBLE_ROUNDS

    labels = {
        (row.claim_id, row.annotator_id): row
        for row in Label.objects.filter(claim__project=project)
    }
    # Zero lost, zero duplicated: exactly one label per (claim, analyst) that saved.
    assert Label.objects.filter(claim__project=project).count() == CLAIMS * PER_CLAIM
    assert set(labels) == set(intended)
    lost = len(set(intended) - set(labels))
    # Every label holds one of the states its analyst wrote, quote and all.
    for key, label in labels.items():
        state = (label.verdict, label.note)
        assert state in intended[key], (key, state)
        assert label.evidence_quote == QUOTES[label.verdict]
    # History: per (claim, analyst), in id order: one CREATED then UPDATEDs, as many rows as
    # saves, the last one equal to the label as it stands.
    history = defaultdict(list)
    for row in LabelHistory.objects.filter(claim__project=project).order_by("id"):
        history[(row.claim_id, row.annotator_id)].append(row)
    assert set(history) == set(intended)
    for key, rows in history.items():
        assert [r.action for r in rows] == ["created"] + ["updated"] * (len(intended[key]) - 1), key
        assert sorted((r.verdict, r.note) for r in rows) == sorted(intended[key]), key
        last, label = rows[-1], labels[key]
        assert (last.verdict, last.note, last.evidence_quote, last.label_id_at_time) == (
            label.verdict,
            label.note,
            label.evidence_quote,
            label.pk,
        ), key
        assert [r.id for r in rows] == sorted(r.id for r in rows)
    # The counters the queue and progress bar read agree with the rows.
    per_claim = Counter(claim_id for claim_id, _ in labels)
    for claim in Claim.objects.filter(project=project):
        assert claim.label_count == per_claim[claim.pk] == PER_CLAIM
    for membership in Membership.objects.filter(project=project):
        assert membership.labels_saved == sum(1 for _, user in labels if user == membership.user_id)
    project.refresh_from_db()
    assert project.claims_complete == CLAIMS
    figures.add(
        "concurrency",
        analysts=ANALYSTS,
        saves=saves,
        simultaneous_double_saves=ANALYSTS * DOUBLE_ROUNDS,
        labels=len(labels),
        labels_lost=lost,
        labels_duplicated=Label.objects.filter(claim__project=project).count() - len(labels),
        seconds=round(elapsed, 1),
    )
