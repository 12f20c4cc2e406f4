"""`python manage.py split_claims`: batch split with progress; skips split answers; keeps labels."""

import io

import pytest
from django.core.management import CommandError, call_command

from annotate.models import Claim, Label, Verdict
from annotate.services.labels import label_save
from tests.factories import AnswerFactory, MembershipFactory, ProjectFactory, UserFactory

pytestmark = pytest.mark.django_db


def _run(*args):
    out, err = io.StringIO(), io.StringIO()
    call_command("split_claims", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_split_claims_splits_every_answer_and_prints_progress():
    project = ProjectFactory(slug="shop")
    AnswerFactory(project=project, text="Refunds take 14 days and are issued to the card.")
    AnswerFactory(project=project, text="I don't know.")
    AnswerFactory(project=project, text="Shipping is free. Great question!")
    out, _ = _run("--project", "shop", "--method", "rule")
    assert "[3/3] split 3, skipped 0, failed 0; 3 claims" in out
    assert "1 look like abstentions" in out
    assert list(
        Claim.objects.order_by("answer__position", "position").values_list("text", flat=True)
    ) == [
        "Refunds take 14 days.",
        "Refunds are issued to the card.",
        "Shipping is free.",
    ]


def test_split_claims_skips_split_answers_and_force_keeps_labels():
    project = ProjectFactory(slug="shop")
    answer = AnswerFactory(project=project, text="Refunds take 14 days and cost nothing.")
    _run("--project", "shop")
    claim = answer.claims.order_by("position").first()
    claim.text = "Refunds take a fortnight."  # edited by hand since
    claim.save()
    analyst = UserFactory()
    MembershipFactory(project=project, user=analyst)
    label = label_save(claim=claim, annotator=analyst, verdict=Verdict.NOT_IN_PILE)

    out, _ = _run("--project", "shop")
    assert "skipped 1" in out
    assert answer.claims.count() == 2

    out, _ = _run("--project", "shop", "--force")
    assert "split 1" in out
    assert Label.objects.filter(pk=label.pk, claim=claim, needs_review=True).exists()
    assert list(answer.claims.order_by("position").values_list("text", flat=True)) == [
        "Refunds take a fortnight.",
        "Refunds take 14 days.",
        "Refunds cost nothing.",
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--project", "nope"], "--project: no project with slug 'nope'"),
        (["--project", "shop", "--method", "llm"], "--judge: splitting by LLM needs"),
        (["--project", "shop", "--method", "llm", "--judge", "x"], "--judge: no judge 'x'"),
    ],
)
def test_split_claims_names_the_bad_argument(args, message):
    ProjectFactory(slug="shop")
    with pytest.raises(CommandError, match=message):
        _run(*args)
