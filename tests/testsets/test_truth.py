"""The check of a test answer's claims against the item's ground truth (answer + quotes):
verdicts read off the sentences by hand (the lexical baseline's rule: same words and figures
→ correct; a figure or a negation differing → incorrect; nothing shared → not addressed)."""

import pytest

from tests.testsets.truth_world import truth_world_build
from testsets.models import TruthCheck
from testsets.services.truth import truth_check_counts, truth_check_run

pytestmark = pytest.mark.django_db

SAME = "Customers may request a refund within 30 days of purchase."
OTHER_FIGURE = "Customers may request a refund within 90 days of purchase."
OUTSIDE = "The shop opens on Sundays at the harbour."
NEGATED = "Adults must take more than 4 grams of paracetamol a day."
DOSE_SAME = "Adults must not take more than 4 grams of paracetamol a day."


def _world():
    return truth_world_build(
        claims_refund=[SAME, OTHER_FIGURE, OUTSIDE], claims_dose=[NEGATED, DOSE_SAME]
    )


def _verdicts():
    return dict(TruthCheck.objects.values_list("claim__text", "verdict"))


def test_each_claim_gets_the_verdict_its_sentence_earns():
    world = _world()
    counts = truth_check_run(run=world.run)
    assert _verdicts() == {
        SAME: "CORRECT",
        OTHER_FIGURE: "INCORRECT",  # 90 days where the ground truth says 30
        OUTSIDE: "NOT_ADDRESSED",  # nothing of it is in the answer or the quote
        NEGATED: "INCORRECT",  # "must take" where the ground truth says "must not take"
        DOSE_SAME: "CORRECT",
    }
    assert counts == {
        "claims": 5,
        "CORRECT": 2,
        "INCORRECT": 2,
        "NOT_ADDRESSED": 1,
        "answers": 2,
        "answers_without_claims": 0,
        "method": "lexical-baseline-1",
    }
    check = TruthCheck.objects.get(claim=world.claims[OTHER_FIGURE])
    assert check.item == world.refund
    assert "figure" in check.note


def test_a_second_check_rewrites_in_place_and_follows_an_edited_ground_truth():
    world = _world()
    truth_check_run(run=world.run)
    first_ids = set(TruthCheck.objects.values_list("id", flat=True))
    truth_check_run(run=world.run)
    assert set(TruthCheck.objects.values_list("id", flat=True)) == first_ids  # no new rows
    # The ground truth says 90 days now (answer and quote): the two refund claims swap.
    world.refund.answer = OTHER_FIGURE
    world.refund.save()
    world.refund.quotes.update(text=OTHER_FIGURE)
    truth_check_run(run=world.run)
    assert TruthCheck.objects.count() == 5
    assert _verdicts()[SAME] == "INCORRECT"
    assert _verdicts()[OTHER_FIGURE] == "CORRECT"
    assert truth_check_counts(run=world.run) == {
        "CORRECT": 2,
        "INCORRECT": 2,
        "NOT_ADDRESSED": 1,
        "claims": 5,
    }


def test_answers_not_split_yet_are_counted_and_nothing_is_written():
    world = truth_world_build(claims_refund=[], claims_dose=[])
    counts = truth_check_run(run=world.run)
    assert (counts["claims"], counts["answers_without_claims"]) == (0, 2)
    assert not TruthCheck.objects.exists()


def test_a_lead_runs_the_check_from_the_run_page_and_reads_its_counts(client):
    from django.urls import reverse

    from annotate.models import Role
    from tests.factories import PASSWORD, MembershipFactory, UserFactory

    world = _world()
    lead = UserFactory()
    MembershipFactory(project=world.project, user=lead, role=Role.LEAD)
    client.login(username=lead.username, password=PASSWORD)
    args = [world.project.slug, world.run.pk]
    page = client.get(reverse("testsets:run-detail", args=args)).content.decode()
    assert "Check answers against the ground truth" in page
    assert "run-truth-counts" not in page  # nothing checked yet
    response = client.post(reverse("testsets:run-truth", args=args), follow=True)
    html = response.content.decode()
    assert (
        "Checked 5 claims against the ground truth: 2 correct, 2 incorrect, 1 not addressed."
        in (html)
    )
    assert "5 claims checked: 2 correct, 2 incorrect, 1 not addressed." in html


def _analyst_client(client, project):
    from annotate.models import Role
    from tests.factories import PASSWORD, MembershipFactory, UserFactory

    analyst = UserFactory()
    MembershipFactory(project=project, user=analyst, role=Role.ANALYST)
    client.login(username=analyst.username, password=PASSWORD)
    return analyst


def test_the_labelling_screen_shows_the_ground_truth_only_after_the_analysts_own_label(client):
    from django.urls import reverse

    from annotate.models import Reveal

    world = _world()
    world.project.reveal_after_save = True
    world.project.save()
    truth_check_run(run=world.run)
    analyst = _analyst_client(client, world.project)
    claim = world.claims[OTHER_FIGURE]
    screen = reverse("annotate:label-claim", args=[world.project.slug, claim.pk])
    before = client.get(screen).content.decode()
    assert claim.text in before  # the claim's screen, blind
    assert "reveal-ground-truth" not in before
    assert "Ground truth</strong>" not in before
    assert not Reveal.objects.exists()

    save = reverse("annotate:label-save", args=[world.project.slug, claim.pk])
    saved = client.post(save, {"verdict": "NOT_IN_PILE", "correct": "no"}, follow=True)
    assert saved.status_code == 200
    after = client.get(screen).content.decode()
    assert 'data-testid="reveal-ground-truth"' in after
    assert "Ground truth</strong> of test question q0 (Financial)" in after
    assert world.refund.answer in after
    assert "Automatic check against it: Incorrect (contradicts the ground truth)." in after
    # Seen: a later change of this label is "changed after reveal".
    assert Reveal.objects.filter(claim=claim, user=analyst, verdict="NOT_IN_PILE").exists()


def test_without_reveal_after_save_the_ground_truth_is_never_shown(client):
    from django.urls import reverse

    world = _world()  # reveal_after_save off: the screen stays blind after the save too
    _analyst_client(client, world.project)
    claim = world.claims[SAME]
    save = reverse("annotate:label-save", args=[world.project.slug, claim.pk])
    client.post(save, {"verdict": "SUPPORTED"}, follow=True)
    screen = reverse("annotate:label-claim", args=[world.project.slug, claim.pk])
    assert "reveal-ground-truth" not in client.get(screen).content.decode()
