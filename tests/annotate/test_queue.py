"""The labelling queue and label saving/undo: order, strata, reservations, quota, history."""

from datetime import timedelta

import pytest
from django.utils import timezone

from annotate.models import (
    Claim,
    Gold,
    Label,
    LabelHistory,
    Membership,
    Project,
    Reservation,
    Verdict,
)
from annotate.queue_order import claim_labels_required, claim_queue_key
from annotate.selectors import labelling_progress
from annotate.services.label_undo import label_undo
from annotate.services.labels import LabelError, label_save
from annotate.services.queue import (
    QueueError,
    claim_next_for_user,
    claim_reserve,
    labelling_counters_refresh,
)
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


def seeded_project(*, answers=6, claims_per_answer=3, **project_fields) -> Project:
    """A project whose claims carry the real seeded queue keys, imported answer by answer."""
    project = ProjectFactory(**project_fields)
    for a in range(answers):
        answer = AnswerFactory(project=project, external_id=f"ans-{a}", position=a)
        PassageFactory(answer=answer, rank=1)
        for c in range(claims_per_answer):
            text = f"Claim {c} of answer {a}."
            key = claim_queue_key(
                seed=project.queue_seed,
                answer_external_id=answer.external_id,
                position=c,
                text=text,
            )
            ClaimFactory(
                answer=answer,
                text=text,
                position=c,
                queue_key=key,
                labels_required=claim_labels_required(
                    analysts_per_claim=project.analysts_per_claim,
                    double_share=project.double_labelled_share,
                    queue_key=key,
                ),
            )
    return project


def analyst(project: Project, **fields):
    return MembershipFactory(project=project, **fields).user


def take_and_label(project, user, verdict=Verdict.NOT_IN_PILE, stratum=None) -> Claim:
    claim = claim_next_for_user(project=project, user=user, stratum=stratum)
    assert claim is not None
    label_save(claim=claim, annotator=user, verdict=verdict, stratum=stratum)
    return claim


def test_queue_serves_the_seeded_order_not_import_order():
    project = seeded_project()
    user = analyst(project)
    served = [take_and_label(project, user).pk for _ in range(project.claims.count())]
    seeded = list(project.claims.order_by("queue_key").values_list("pk", flat=True))
    imported = list(
        project.claims.order_by("answer__position", "position").values_list("pk", flat=True)
    )
    assert served == seeded
    assert served != imported  # the seeded order really differs from import order here
    assert claim_next_for_user(project=project, user=user) is None


def test_reload_keeps_the_same_reserved_claim():
    project = seeded_project()
    user = analyst(project)
    first = claim_next_for_user(project=project, user=user)
    assert claim_next_for_user(project=project, user=user) == first
    assert Reservation.objects.filter(user=user).count() == 1


def test_a_reserved_claim_that_needs_one_label_goes_to_nobody_else_until_it_expires():
    project = seeded_project(answers=1, claims_per_answer=2)
    project.claims.update(labels_required=1)
    alice, bob = analyst(project), analyst(project)
    a_claim = claim_next_for_user(project=project, user=alice)
    b_claim = claim_next_for_user(project=project, user=bob)
    assert b_claim is not None
    assert b_claim != a_claim
    carol = analyst(project)
    assert claim_next_for_user(project=project, user=carol) is None  # both held
    # Alice walks away: her reservation expires and the claim goes to Carol.
    Reservation.objects.filter(user=alice).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert claim_next_for_user(project=project, user=carol) == a_claim


def test_double_labelled_claims_are_served_to_two_analysts():
    project = seeded_project(answers=1, claims_per_answer=1)
    claim = project.claims.get()
    Claim.objects.filter(pk=claim.pk).update(labels_required=2)
    alice, bob, carol = analyst(project), analyst(project), analyst(project)
    assert take_and_label(project, alice) == claim
    assert take_and_label(project, bob) == claim
    assert claim_next_for_user(project=project, user=carol) is None
    claim.refresh_from_db()
    assert claim.label_count == 2


def test_abstentions_are_not_served():
    project = seeded_project(answers=2, claims_per_answer=2)
    abstaining = project.answers.first()
    abstaining.abstention = True
    abstaining.save()
    user = analyst(project)
    served = {take_and_label(project, user).answer_id for _ in range(2)}
    assert served == {project.answers.last().pk}
    assert claim_next_for_user(project=project, user=user) is None


def test_risk_category_stratum_restricts_the_queue_and_is_recorded_on_the_label():
    project = seeded_project(answers=4, claims_per_answer=2)
    health = project.answers.order_by("position")[1]
    health.risk_category = "health"
    health.save()
    stratum = {"risk_category": "health"}
    user = analyst(project, queue_stratum=stratum)
    claims = [take_and_label(project, user, stratum=stratum) for _ in range(2)]
    assert {c.answer_id for c in claims} == {health.pk}
    assert claim_next_for_user(project=project, user=user, stratum=stratum) is None
    assert list(Label.objects.filter(annotator=user).values_list("stratum", flat=True)) == [
        stratum,
        stratum,
    ]


def test_judge_verdict_stratum_uses_the_judges_latest_finished_run():
    project = seeded_project(answers=3, claims_per_answer=2)
    claims = list(project.claims.order_by("queue_key"))
    run = JudgeRunFactory(judge__project=project, project=project)
    for claim in claims:
        verdict = Verdict.CONTRADICTED if claim in claims[-2:] else Verdict.SUPPORTED
        JudgeVerdictFactory(run=run, claim=claim, verdict=verdict)
    stratum = {"judge": run.judge_id, "judge_verdict": "CONTRADICTED"}
    user = analyst(project)
    served = claim_next_for_user(project=project, user=user, stratum=stratum)
    assert served == claims[-2]


def test_unknown_stratum_key_is_refused():
    project = seeded_project(answers=1)
    with pytest.raises(QueueError, match="Unknown queue restriction"):
        claim_next_for_user(project=project, user=analyst(project), stratum={"colour": "red"})


def test_save_on_a_claim_at_its_quota_is_refused_but_relabelling_ones_own_is_fine():
    project = seeded_project(answers=1, claims_per_answer=1)
    claim = project.claims.get()
    alice, bob = analyst(project), analyst(project)
    label_save(claim=claim, annotator=alice, verdict=Verdict.NOT_IN_PILE)
    with pytest.raises(LabelError, match="already has the 1 label it needs"):
        label_save(claim=claim, annotator=bob, verdict=Verdict.NOT_IN_PILE)
    label_save(claim=claim, annotator=alice, verdict=Verdict.NOT_IN_PILE, note="second look")
    assert Label.objects.filter(claim=claim).count() == 1
    assert Label.objects.get(claim=claim).note == "second look"


def test_undo_restores_the_previous_state_and_keeps_the_history_in_order():
    project = seeded_project(answers=1, claims_per_answer=2)
    first, second = project.claims.order_by("queue_key")
    passage = first.answer.passages.get()
    user = analyst(project)
    quote = "Refunds are processed within 14 days."
    label_save(claim=first, annotator=user, verdict=Verdict.NOT_IN_PILE, note="v1")
    label_save(
        claim=first,
        annotator=user,
        verdict=Verdict.SUPPORTED,
        passage=passage,
        start=0,
        end=len(quote),
        quote=quote,
        note="v2",
    )
    label_save(claim=second, annotator=user, verdict=Verdict.NOT_IN_PILE)

    assert label_undo(user=user, project=project) == second  # undoes the creation: gone
    assert not Label.objects.filter(claim=second, annotator=user).exists()
    assert label_undo(user=user, project=project) == first  # undoes the update: back to v1
    label = Label.objects.get(claim=first, annotator=user)
    assert (label.verdict, label.note, label.evidence_passage_id) == (
        Verdict.NOT_IN_PILE,
        "v1",
        None,
    )
    assert label_undo(user=user, project=project) == first  # undoes the creation of v1
    assert not Label.objects.filter(annotator=user).exists()
    assert label_undo(user=user, project=project) is None  # nothing left

    history = list(
        LabelHistory.objects.filter(annotator=user).values_list(
            "claim_id", "action", "verdict", "note"
        )
    )
    assert history == [
        (first.pk, "created", "NOT_IN_PILE", "v1"),
        (first.pk, "updated", "SUPPORTED", "v2"),
        (second.pk, "created", "NOT_IN_PILE", ""),
        (second.pk, "undone", "", ""),
        (first.pk, "undone", "NOT_IN_PILE", "v1"),
        (first.pk, "undone", "", ""),
    ]


def test_undo_then_save_again_undoes_the_new_save_first():
    project = seeded_project(answers=1, claims_per_answer=2)
    first, second = project.claims.order_by("queue_key")
    user = analyst(project)
    label_save(claim=first, annotator=user, verdict=Verdict.NOT_IN_PILE)
    assert label_undo(user=user, project=project) == first
    label_save(claim=second, annotator=user, verdict=Verdict.NOT_IN_PILE)
    assert label_undo(user=user, project=project) == second
    assert label_undo(user=user, project=project) is None


def test_counters_follow_saves_and_undos_and_match_a_recount():
    project = seeded_project(answers=2, claims_per_answer=2)
    alice, bob = analyst(project), analyst(project)
    Claim.objects.filter(pk=project.claims.order_by("queue_key")[0].pk).update(labels_required=2)
    for _ in range(3):
        take_and_label(project, alice)
    take_and_label(project, bob)
    label_undo(user=alice, project=project)

    def snapshot():
        project.refresh_from_db()
        return (
            project.claims_complete,
            sorted(
                Membership.objects.filter(project=project).values_list("labels_saved", flat=True)
            ),
            sorted(project.claims.values_list("label_count", flat=True)),
        )

    kept = snapshot()
    labelling_counters_refresh(project=project)
    assert snapshot() == kept
    labels = Label.objects.filter(claim__project=project)
    assert kept[1] == sorted(
        [labels.filter(annotator=alice).count(), labels.filter(annotator=bob).count()]
    )
    progress = labelling_progress(project=project, user=alice)
    assert progress["labelled"] == 2
    assert progress["total"] == 4
    assert progress["complete"] == kept[0]


def test_claim_reserve_refuses_when_the_quota_is_taken():
    project = seeded_project(answers=1, claims_per_answer=1)
    claim = project.claims.get()
    alice, bob = analyst(project), UserFactory()
    assert claim_reserve(claim=claim, user=alice) is True
    assert claim_reserve(claim=claim, user=bob) is False


def test_undo_takes_back_the_unanimous_gold_the_save_made():
    project = seeded_project(answers=1, claims_per_answer=1)
    claim = project.claims.get()
    user = analyst(project)
    label_save(claim=claim, annotator=user, verdict=Verdict.NOT_IN_PILE)
    assert Gold.objects.filter(claim=claim, verdict=Verdict.NOT_IN_PILE).exists()
    label_undo(user=user, project=project)
    assert not Gold.objects.filter(claim=claim).exists()
