"""Leniency canaries (lead's list and transplants), citation runs, and decompose."""

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from judges.models import Canary, JudgeRun, JudgeVerdict
from judges.services import canaries_transplant, canary_add, judge_run_start
from tests.factories import PASSWORD, AnswerFactory, ClaimFactory, GoldFactory, PassageFactory
from tests.judges.conftest import make_claims

pytestmark = pytest.mark.django_db


def test_canary_run_pass_rate_and_kept_out_of_verify_figures(
    client, lead, project, openai_judge, llm, django_capture_on_commit_callbacks
):
    claims = make_claims(project, ["Refunds are processed within 14 days"])
    answer = claims[0].answer
    canary_add(
        project=project,
        lines=f"{answer.external_id} | Paris is the capital of France\n"
        f"{answer.external_id} | Gift cards are not refundable\n"  # in the pile: a fail
        f"{answer.external_id} | Water boils at 100 C\n",  # answered with garbage
    )
    llm[1].fail("garbage", claim="Water boils at 100 C")
    with django_capture_on_commit_callbacks(execute=True):
        run = judge_run_start(judge=openai_judge, kind="canary")
    run.refresh_from_db()
    assert (run.status, run.total, run.done, run.unparseable) == ("done", 3, 2, 1)
    # Over the parsed verdicts: an unparseable reply is never counted as any verdict.
    assert run.canary_pass_rate == pytest.approx(0.5)
    assert not JudgeVerdict.objects.filter(run=run, claim__isnull=False).exists()
    # Verify figures come from verify runs only, and those hold claims, never canaries.
    assert not JudgeVerdict.objects.filter(run__kind="verify", canary__isnull=False).exists()
    client.login(username=lead.username, password=PASSWORD)
    page = client.get(reverse("judges:judge-detail", args=[project.slug, openai_judge.pk]))
    assert "50% NOT_IN_PILE" in page.content.decode()  # shown beside the judge
    page = client.get(reverse("judges:run-detail", args=[project.slug, run.pk])).content.decode()
    assert "Canary pass rate" in page
    assert "Agreement with gold" not in page


def test_canary_add_is_all_or_nothing_with_the_line_named(project):
    answer = AnswerFactory(project=project)
    with pytest.raises(ValidationError, match="Line 2: the statement is empty"):
        canary_add(
            project=project, lines=f"{answer.external_id} | True thing\n{answer.external_id} |"
        )
    assert Canary.objects.count() == 0


def test_transplant_picks_a_gold_supported_claim_and_an_unrelated_pile(project):
    refunds = AnswerFactory(project=project)
    PassageFactory(answer=refunds, rank=1, text="Refunds are processed within 14 days.")
    related = AnswerFactory(project=project)
    PassageFactory(answer=related, rank=1, text="Refunds are usually processed in 14 days.")
    unrelated = AnswerFactory(project=project)
    PassageFactory(answer=unrelated, rank=1, text="The museum opens at nine on weekdays.")
    supported = ClaimFactory(answer=refunds, text="Refunds are processed within 14 days.")
    GoldFactory(claim=supported, verdict="SUPPORTED")
    not_supported = ClaimFactory(answer=refunds, text="Refunds take a year.")
    GoldFactory(claim=not_supported, verdict="NOT_IN_PILE")

    for seed in range(5):
        made = canaries_transplant(project=project, n=3, seed=seed)
        assert [(c.source_claim_id, c.pile_answer_id) for c in made] in (
            [],
            [(supported.pk, unrelated.pk)],
        )
    canary = Canary.objects.get()
    assert canary.source == Canary.Source.TRANSPLANT
    assert canary.text == supported.text


def test_citation_run_checks_the_cited_passage_only(
    project, openai_judge, llm, django_capture_on_commit_callbacks
):
    answer = AnswerFactory(project=project)
    holds = PassageFactory(answer=answer, rank=1, text="Refunds are processed within 14 days.")
    other = PassageFactory(answer=answer, rank=2, text="Shipping is free over 50 pounds.")
    cites_right = ClaimFactory(answer=answer, text="Refunds are processed within 14 days")
    cites_right.cited_passages.add(holds)
    cites_wrong = ClaimFactory(answer=answer, text="Refunds are processed within 14 days.")
    cites_wrong.cited_passages.add(other)
    ClaimFactory(answer=answer, text="No citation here")
    with django_capture_on_commit_callbacks(execute=True):
        citation = judge_run_start(judge=openai_judge, kind="citation")
        verify = judge_run_start(judge=openai_judge, kind="verify")
    citation.refresh_from_db()
    assert citation.total == 2
    verdicts = dict(citation.verdicts.values_list("claim_id", "verdict"))
    assert verdicts == {cites_right.pk: "SUPPORTED", cites_wrong.pk: "NOT_IN_PILE"}
    # Against the whole pile the same claim is supported: the two are stored apart.
    assert verify.verdicts.get(claim=cites_wrong).verdict == "SUPPORTED"
    assert citation.kind == JudgeRun.Kind.CITATION


def test_llm_split_origin_is_the_decompose_prompt_version(project, openai_judge, llm):
    from judges.models import prompt_version
    from judges.prompts import DEFAULT_DECOMPOSE_PROMPT
    from judges.split_jobs import split_job_execute, split_job_start
    from tests.factories import AnswerFactory

    answer = AnswerFactory(
        project=project, text="Refunds take 14 days. Gift cards are not refundable."
    )
    job = split_job_start(judge=openai_judge, answer=answer, enqueue=False)
    assert split_job_execute(job.pk) == "done"
    claims = list(answer.claims.order_by("position"))
    assert [c.text for c in claims] == ["Refunds take 14 days.", "Gift cards are not refundable."]
    # The judge has no prompt of its own, so the default one is used and versioned.
    origin = f"llm:{prompt_version(DEFAULT_DECOMPOSE_PROMPT)}"
    assert {c.origin for c in claims} == {origin}
