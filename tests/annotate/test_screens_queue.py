"""The answer-at-a-time queue: a random answer (every answer as likely, whatever its length),
then its claims in order; claim-at-a-time stays a project setting."""

import pytest
from django.urls import reverse

from annotate.models import Claim, Project, Role
from annotate.queue_order import (
    answer_queue_key,
    claim_labels_required,
    claim_queue_fields,
    claim_queue_key,
)
from annotate.services.claims import claims_split
from annotate.services.projects import project_settings_update
from tests.factories import AnswerFactory, MembershipFactory, ProjectFactory, UserFactory

HTMX = {"HTTP_HX_REQUEST": "true"}


def _first_answer(seeds, *, by_answer: bool) -> float:
    """Share of seeds whose queue starts with the 10-claim answer rather than the 1-claim one."""
    long_first = 0
    for seed in seeds:
        keys = {}
        for name, size in (("short", 1), ("long", 10)):
            keys[name] = min(
                claim_queue_fields(
                    seed=seed,
                    answer_external_id=name,
                    position=p,
                    text=f"{name} claim {p}",
                    by_answer=by_answer,
                    analysts_per_claim=1,
                    double_share=0.0,
                )[0]
                for p in range(size)
            )
        long_first += keys["long"] < keys["short"]
    return long_first / len(seeds)


def test_every_answer_is_equally_likely_to_come_first_whatever_its_length():
    # 1,000 seeds: the share's standard error is 0.016, so 0.5 ± 0.06 is about four of them.
    # A queue that took the answer of the lowest claim key would start with the long answer
    # 10 times in 11 (0.91); the claim-at-a-time order does exactly that.
    seeds = range(1000)
    assert abs(_first_answer(seeds, by_answer=True) - 0.5) < 0.06
    assert abs(_first_answer(seeds, by_answer=False) - 10 / 11) < 0.04


def test_an_answers_claims_follow_each_other_in_order_and_double_labelling_is_unchanged():
    keys = []
    for answer in ("a1", "a2", "a3", "a4"):
        for position in range(5):
            text = f"{answer}-{position}"
            by_answer, required = claim_queue_fields(
                seed=3,
                answer_external_id=answer,
                position=position,
                text=text,
                by_answer=True,
                analysts_per_claim=1,
                double_share=0.5,
            )
            by_claim, required_claim = claim_queue_fields(
                seed=3,
                answer_external_id=answer,
                position=position,
                text=text,
                by_answer=False,
                analysts_per_claim=1,
                double_share=0.5,
            )
            claim_key = claim_queue_key(
                seed=3, answer_external_id=answer, position=position, text=text
            )
            assert by_claim == claim_key
            assert (
                required
                == required_claim
                == claim_labels_required(
                    analysts_per_claim=1, double_share=0.5, queue_key=claim_key
                )
            )
            assert by_answer == answer_queue_key(
                seed=3, answer_external_id=answer, position=position
            )
            keys.append((by_answer, answer, position))
    served = [(answer, position) for _, answer, position in sorted(keys)]
    for i in range(0, 20, 5):  # four runs of one answer each, positions 0–4
        block = served[i : i + 5]
        assert {answer for answer, _ in block} == {block[0][0]}
        assert [position for _, position in block] == [0, 1, 2, 3, 4]


@pytest.mark.django_db
def test_the_queue_serves_an_answers_claims_in_order_before_the_next_answer(client):
    project = ProjectFactory()
    assert project.queue_order == Project.QueueOrder.ANSWER
    lead, analyst = UserFactory(), UserFactory()
    MembershipFactory(project=project, user=lead, role=Role.LEAD)
    MembershipFactory(project=project, user=analyst)
    for n in range(4):
        answer = AnswerFactory(
            project=project,
            external_id=f"a{n}",
            text=f"Answer {n} opens at nine. It shuts at five. It is free on Sundays.",
        )
        claims_split(answer=answer, user=lead)
    client.force_login(analyst)
    response = client.get(reverse("annotate:label-next", args=[project.slug]), **HTMX)
    served = []
    for _ in range(12):
        html = response.content.decode()
        claim = Claim.objects.get(pk=int(html.split('data-claim-id="')[1].split('"')[0]))
        served.append((claim.answer_id, claim.position))
        assert f"Claim {claim.position + 1} of 3" in html
        response = client.post(
            reverse("annotate:label-save", args=[project.slug, claim.pk]),
            {"verdict": "NOT_IN_PILE"},
            **HTMX,
        )
    assert "Your queue is empty" in response.content.decode()  # all twelve labelled
    answers = [answer for answer, _ in served]
    assert [answers[i] for i in (0, 3, 6, 9)] == list(dict.fromkeys(answers))  # runs of three
    assert [position for _, position in served] == [0, 1, 2] * 4


@pytest.mark.django_db
def test_switching_to_claim_at_a_time_rekeys_the_claims():
    project = ProjectFactory()
    lead = UserFactory()
    MembershipFactory(project=project, user=lead, role=Role.LEAD)
    answer = AnswerFactory(project=project, external_id="q1", text="One. Two. Three.")
    claims_split(answer=answer, user=lead)
    project_settings_update(project=project, queue_order=Project.QueueOrder.CLAIM)
    for claim in Claim.objects.filter(project=project):
        assert claim.queue_key == claim_queue_key(
            seed=project.queue_seed, answer_external_id="q1", position=claim.position,
            text=claim.text,
        )  # fmt: skip
    project_settings_update(project=project, queue_order=Project.QueueOrder.ANSWER)
    keys = list(Claim.objects.filter(project=project).order_by("position").values_list(
        "queue_key", flat=True))  # fmt: skip
    assert keys == [
        answer_queue_key(seed=project.queue_seed, answer_external_id="q1", position=p)
        for p in range(3)
    ]
