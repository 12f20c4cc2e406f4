"""Many analysts pressing "next" and "save" at once on PostgreSQL: no overshoot, no lost label."""

import random
import threading
from collections import Counter

import pytest
from django.db import connection
from django.db.models import Count

from annotate.models import (
    Answer,
    Claim,
    Label,
    LabelHistory,
    Membership,
    Passage,
    Reservation,
    Verdict,
)
from annotate.queue_order import claim_labels_required, claim_queue_key
from annotate.services.labels import ClaimHeld, LabelError, label_save
from annotate.services.queue import claim_next_for_user
from tests.factories import ProjectFactory, UserFactory

ANALYSTS = 16
CLAIMS = 300


def project_of_300_claims():
    project = ProjectFactory(analysts_per_claim=1, double_labelled_share=0.2, queue_seed=11)
    answers = Answer.objects.bulk_create(
        Answer(project=project, external_id=f"a{i}", position=i, question="q?", text="t.")
        for i in range(CLAIMS // 3)
    )
    Passage.objects.bulk_create(Passage(answer=a, rank=1, text="p.") for a in answers)
    claims = []
    for answer in answers:
        for position in range(3):
            key = claim_queue_key(
                seed=11, answer_external_id=answer.external_id, position=position, text="c"
            )
            required = claim_labels_required(analysts_per_claim=1, double_share=0.2, queue_key=key)
            claims.append(
                Claim(
                    project=project,
                    answer=answer,
                    text=f"claim {position}",
                    position=position,
                    queue_key=key,
                    labels_required=required,
                )
            )
    Claim.objects.bulk_create(claims)
    return project


@pytest.mark.postgres
def test_sixteen_analysts_never_exceed_labels_required_and_lose_no_label(transactional_db):
    assert connection.vendor == "postgresql"
    project = project_of_300_claims()
    users = [UserFactory(password="x") for _ in range(ANALYSTS)]
    Membership.objects.bulk_create(Membership(project=project, user=u) for u in users)
    all_claims = list(Claim.objects.filter(project=project).values_list("pk", flat=True))
    saved, refused, errors = Counter(), Counter(), []
    jumped_saves, queue_refusals, held_from_queue = set(), set(), set()
    start = threading.Barrier(ANALYSTS)

    def analyst(user, seed):
        rng = random.Random(seed)
        try:
            start.wait()
            while True:
                jumped = rng.random() < 0.15
                if jumped:
                    # Jumping within an answer (j/k): a claim the queue did not hand out, so
                    # only label_save's own quota check stands between it and overshooting.
                    claim = Claim.objects.get(pk=rng.choice(all_claims))
                else:
                    # While a colleague's jumped save holds the lock of a claim this analyst
                    # holds, the queue waits for it (annotate.services.reservation_wait)
                    # rather than say "nothing left" and leave the claim short.
                    claim = claim_next_for_user(project=project, user=user)
                    if claim is None:
                        break
                if rng.random() < 0.05:
                    continue  # walks away: the reservation is left to expire
                try:
                    label_save(claim=claim, annotator=user, verdict=Verdict.NOT_IN_PILE)
                except ClaimHeld:
                    # A claim reached outside the queue while a colleague holds it stays
                    # theirs; the queue itself never hands out a claim someone holds.
                    refused[user.pk] += 1
                    if not jumped:
                        held_from_queue.add(claim.pk)
                except LabelError as error:
                    if "already has" not in str(error):
                        raise
                    refused[user.pk] += 1
                    if not jumped:
                        queue_refusals.add(claim.pk)
                else:
                    saved[user.pk] += 1
                    if jumped:
                        jumped_saves.add(claim.pk)
        except Exception as error:  # surfaced by the assertion below
            errors.append(repr(error))
        finally:
            connection.close()

    threads = [threading.Thread(target=analyst, args=(u, i)) for i, u in enumerate(users)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert not any(t.is_alive() for t in threads), "an analyst hung (deadlock?)"
    assert errors == []
    assert held_from_queue == set()
    # The queue never handed one claim to more analysts than it needed: a claim it served can
    # only be full at save time if someone jumped to it outside the queue.
    assert queue_refusals <= jumped_saves

    per_claim = dict(
        Label.objects.filter(claim__project=project)
        .values_list("claim")
        .annotate(n=Count("id"))
        .values_list("claim", "n")
    )
    claims = Claim.objects.filter(project=project)
    overshoot = [c.pk for c in claims if per_claim.get(c.pk, 0) > c.labels_required]
    assert overshoot == []
    # Every claim got all its labels (each analyst drained their queue) and none was lost.
    short = {
        c.pk: list(Reservation.objects.filter(claim=c).values_list("user_id", "expires_at"))
        for c in claims
        if per_claim.get(c.pk, 0) < c.labels_required
    }
    assert short == {}, "claims left short of their labels, with their reservations"
    assert sum(c.label_count != per_claim.get(c.pk, 0) for c in claims) == 0
    labels = Label.objects.filter(claim__project=project).count()
    created = LabelHistory.objects.filter(
        claim__project=project, action=LabelHistory.Action.CREATED
    ).count()
    updated = LabelHistory.objects.filter(
        claim__project=project, action=LabelHistory.Action.UPDATED
    ).count()
    assert sum(saved.values()) == labels + updated
    assert created == labels
    assert labels == sum(c.labels_required for c in claims)
    assert 40 < sum(1 for c in claims if c.labels_required == 2) < 90  # about 20% doubled
    project.refresh_from_db()
    assert project.claims_complete == CLAIMS
    for membership in Membership.objects.filter(project=project):
        assert membership.labels_saved == Label.objects.filter(annotator=membership.user).count()
