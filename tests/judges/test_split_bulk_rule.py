"""Splitting the answers list's filtered set into claims BY RULE from the UI, as a split job
with the same progress page as by LLM (issue 19 item 7), on a deployment with no LLM endpoint:
the job holds exactly the filtered answers without claims, each answer is split by the rule
splitter in its own transaction, answers with claims are skipped unless "split again" (then
labelled claims are kept and flagged), and failures are listed per answer with the reason.

Expected claim texts are written by hand from the rule splitter's documented behaviour
(annotate/splitting.py: sentences, filler dropped, coordinated clauses split with the subject
borrowed), not computed by the product."""

import pytest
from django.urls import reverse

from annotate.models import Claim
from judges.models import SplitJob
from judges.split_jobs import split_job_execute
from tests.factories import AnswerFactory, ClaimFactory, LabelFactory, MembershipFactory

pytestmark = pytest.mark.django_db

# Three short answers of the risk category "legal" and what the rule makes of each.
LEGAL = {
    "L1": (
        "The library opens at nine. It closes at five.",
        ["The library opens at nine.", "It closes at five."],
    ),
    "L2": ("I hope this helps. Parking is free on Sundays.", ["Parking is free on Sundays."]),
    "L3": (
        "Refunds take 14 days and are issued to the original card.",
        ["Refunds take 14 days.", "Refunds are issued to the original card."],
    ),
}


@pytest.fixture
def lead_client(client, lead, llm_endpoints):
    # llm_endpoints with nothing declared: the `make run` demo's deployment, no LLM at all.
    client.force_login(lead)
    return client


@pytest.fixture
def answers(project):
    made = {
        external_id: AnswerFactory(
            project=project, external_id=external_id, position=n, risk_category="legal", text=text
        )
        for n, (external_id, (text, _)) in enumerate(LEGAL.items())
    }
    made["H1"] = AnswerFactory(
        project=project,
        external_id="H1",
        position=10,
        risk_category="health",
        text="Take one tablet daily. Do not drive.",
    )
    made["L4"] = AnswerFactory(
        project=project,
        external_id="L4",
        position=11,
        risk_category="legal",
        text="Leases end after a year. Deposits are returned.",
    )
    # Where the rule would put it: the first sentence, code points 0-24.
    labelled = ClaimFactory(
        answer=made["L4"],
        project=project,
        text="Leases end after a year.",
        span_start=0,
        span_end=24,
    )
    LabelFactory(claim=labelled)
    ClaimFactory(answer=made["L4"], project=project, text="Deposits are kept.")  # no label
    return made


def _texts(answer):
    return list(answer.claims.order_by("position").values_list("text", flat=True))


def _start(lead_client, project, **post):
    url = reverse("judges:split-bulk", args=[project.slug])
    return lead_client.post(url, post)


def test_with_no_llm_endpoint_the_page_offers_the_rule_split(lead_client, project, answers):
    url = reverse("judges:split-bulk", args=[project.slug])
    page = lead_client.get(url, {"risk": "legal"}).content.decode()
    assert "The 4 answers the answers list shows with its filters" in page
    assert "<strong>3</strong> without claims yet" in page
    assert '<option value="" selected>By rule (offline, deterministic)</option>' in page
    assert "By LLM" not in page  # no judge can call an endpoint here
    assert "so answers split by rule here" in page
    assert "one at a time from their claims page" not in page
    assert '<button type="submit" class="primary">Split 3 answers</button>' in page


def test_a_rule_job_over_the_filtered_set_splits_exactly_those_answers(
    lead_client, project, answers, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = _start(lead_client, project, risk="legal")
    job = SplitJob.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("judges:split-job", args=[project.slug, job.pk])
    # Run in-process by the eager task (no broker in tests), as `make run` does.
    assert (job.method, job.judge) == ("rule", None)
    job.refresh_from_db()
    assert job.status == "done"
    assert (job.total, job.done, job.failed, job.claims_created) == (3, 3, 0, 5)
    for external_id, (_, expected) in LEGAL.items():
        assert _texts(answers[external_id]) == expected, external_id
        assert set(answers[external_id].claims.values_list("origin", flat=True)) == {"rule"}
    assert _texts(answers["H1"]) == []  # not in the filtered set
    assert _texts(answers["L4"]) == ["Leases end after a year.", "Deposits are kept."]  # skipped
    page = lead_client.get(response["Location"]).content.decode()
    assert "<h1>Split by rule #" in page
    assert "3 answers (filtered: risk category Legal)" in page
    assert 'aria-valuemax="3" aria-valuenow="3"' in page
    assert "3 of 3 answers split; 5 new claims." in page
    assert "Split 3 answers into 5 new claims" in page
    # The bulk page lists it among the recent splits, so a lead finds it again.
    bulk = lead_client.get(reverse("judges:split-bulk", args=[project.slug])).content.decode()
    assert (
        f">#{job.pk}</a> by rule, 3 answers (filtered: risk category Legal): done, 3 of 3," in bulk
    )


def test_split_again_resplits_keeping_and_flagging_labelled_claims(
    lead_client, project, answers, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False):
        _start(lead_client, project, q="Leases", force="on")
    job = SplitJob.objects.get()
    assert job.answer_ids == [answers["L4"].pk]
    assert job.force
    assert split_job_execute(job.pk) == "done"
    job.refresh_from_db()
    # The rule gives "Leases end after a year." (reproduces the labelled claim, kept as it is)
    # and "Deposits are returned." (new); the unlabelled "Deposits are kept." is replaced.
    assert (job.done, job.failed, job.claims_created) == (1, 0, 1)
    assert sorted(_texts(answers["L4"])) == ["Deposits are returned.", "Leases end after a year."]
    kept = answers["L4"].claims.get(text="Leases end after a year.")
    assert kept.labels.count() == 1
    assert not kept.needs_review  # reproduced exactly: nothing for a lead to decide


def test_split_again_flags_a_labelled_claim_the_rule_does_not_reproduce(
    lead_client, project, django_capture_on_commit_callbacks
):
    answer = AnswerFactory(project=project, external_id="M1", text="Fees apply. Cards work.")
    odd = ClaimFactory(answer=answer, project=project, text="Fees apply to cards.")
    LabelFactory(claim=odd)
    with django_capture_on_commit_callbacks(execute=False):
        _start(lead_client, project, force="on")
    assert split_job_execute(SplitJob.objects.get().pk) == "done"
    odd.refresh_from_db()
    assert odd.needs_review  # kept, flagged for a lead, never deleted
    assert odd.labels.get().needs_review
    assert sorted(_texts(answer)) == ["Cards work.", "Fees apply to cards.", "Fees apply."]


def test_an_answer_that_fails_is_listed_with_its_reason_and_the_rest_split(
    lead_client, project, answers, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False):
        _start(lead_client, project, risk="legal")
    job = SplitJob.objects.get()
    # Between the start and the worker, someone splits L2 by hand: the job refuses to split it
    # twice (it was not asked to split again) and says so for that answer.
    ClaimFactory(answer=answers["L2"], project=project, text="Parking is free.")
    assert split_job_execute(job.pk) == "done"
    job.refresh_from_db()
    assert (job.done, job.failed, job.claims_created) == (2, 1, 4)
    assert job.failures == [
        {
            "answer": "L2",
            "error": "Answer L2 already has 1 claims; re-split it only on purpose (force).",
        }
    ]
    page = lead_client.get(reverse("judges:split-job", args=[project.slug, job.pk])).content
    assert "answer L2: Answer L2 already has 1 claims" in page.decode()
    assert "3 of 3 answers split (1 failed)" in page.decode()


def test_nothing_left_to_split_by_rule_says_so_and_queues_nothing(lead_client, project, answers):
    response = _start(lead_client, project, q="Leases")
    assert response.status_code == 400
    assert "Every answer listed already has claims" in response.content.decode()
    assert not SplitJob.objects.exists()
    assert Claim.objects.filter(answer=answers["L4"]).count() == 2


def test_a_rule_split_is_for_leads_only(client, project, answers):
    analyst = MembershipFactory(project=project, role="analyst").user
    client.force_login(analyst)
    url = reverse("judges:split-bulk", args=[project.slug])
    for response in (client.get(url), client.post(url, {"risk": "legal"})):
        assert response.status_code == 404
        page = response.content.decode()
        assert (
            "This page needs the role of lead or an owner" in page
        )  # the house's styled 404 naming the role
        assert "Your projects" in page
    assert not SplitJob.objects.exists()
    assert not Claim.objects.filter(origin="rule").exists()
