"""The judge versions page, the one-action new version and the comparison page (issue 28)."""

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from annotate.models import Role
from judges import versions
from judges.models import Judge
from tests.factories import JudgeFactory, MembershipFactory
from tests.judges.test_versions import _dev_and_heldout, _judge_run, _project

pytestmark = pytest.mark.django_db


def _lead_client(project):
    lead = MembershipFactory(project=project, role=Role.LEAD).user
    client = Client()
    client.force_login(lead)
    return client


def test_lead_splits_reviews_disagreements_and_makes_a_version_in_one_action():
    project, claims, rng = _project()
    judge = JudgeFactory(project=project, name="base")
    _judge_run(judge, claims, rng, accuracy=0.6)
    client = _lead_client(project)
    page = reverse("metrics:judge-versions", args=[project.slug, judge.pk])
    assert "not split yet" in client.get(page).content.decode()
    client.post(
        reverse("metrics:gold-split", args=[project.slug, judge.pk]),
        {"heldout_share": 0.5, "seed": 3},
    )
    body = client.get(page).content.decode()
    assert 'data-testid="gold-split"' in body
    dev, held = _dev_and_heldout(project, claims)
    shown = versions.development_disagreements(judge=judge)
    assert shown
    assert all(
        not versions.gold_split_get(project=project).is_heldout(r["answer"].pk) for r in shown
    )
    create = reverse("metrics:judge-version-create", args=[project.slug, judge.pk])
    # A held-out claim posted by hand is refused, naming it, and nothing is made.
    refused = client.post(create, {"few_shot": [held[0].pk], "name": "sneaky"})
    assert refused.status_code == 422
    assert f"Claim {held[0].pk} is held-out gold" in refused.content.decode()
    assert not Judge.objects.filter(name="sneaky").exists()
    picked = [r["claim"].pk for r in shown[:3]]
    made = client.post(create, {"few_shot": picked, "name": "base v2"})
    assert made.status_code == 302
    version = Judge.objects.get(project=project, name="base v2")
    assert [ex["claim_id"] for ex in version.few_shot] == picked
    assert version.parent == judge
    detail = client.get(made["Location"]).content.decode()
    assert "a version of base, 3 few-shot examples" in detail


def test_compare_page_and_command_show_paired_differences_and_recommendation():
    project, claims, rng = _project(answers=60)
    judge = JudgeFactory(project=project, name="base")
    base = _judge_run(judge, claims, rng, accuracy=0.6)
    versions.gold_split_create(project=project, heldout_share=0.5, seed=3)
    dev, _ = _dev_and_heldout(project, claims)
    version = versions.judge_version_create(
        judge=judge, name="tuned", few_shot_claim_ids=[c.pk for c in dev[:3]]
    )
    _judge_run(version, claims, rng, accuracy=0.8, improves=base)
    client = _lead_client(project)
    url = reverse("metrics:judge-compare", args=[project.slug]) + f"?a={judge.pk}&b={version.pk}"
    body = client.get(url).content.decode()
    assert "Use tuned" in body
    assert 'data-testid="differences"' in body
    assert "this judge narrows the interval" in body
    import io

    out = io.StringIO()
    call_command(
        "judge_compare", "--project", project.slug, "--a", "base", "--b", "tuned", stdout=out
    )
    text = out.getvalue()
    assert "McNemar exact p" in text
    assert "Use tuned" in text


def test_gold_split_command_refuses_a_second_split():
    project, _, _ = _project(answers=4)
    import io

    from django.core.management.base import CommandError

    out = io.StringIO()
    call_command(
        "gold_split", "--project", project.slug, "--share", "0.4", "--seed", "9", stdout=out
    )
    assert "40% of answers held out" in out.getvalue()
    with pytest.raises(CommandError, match="already split"):
        call_command("gold_split", "--project", project.slug, "--share", "0.3")
