"""Grounding-bits runs are ordinary judge runs: one verdict row per run and claim, counts,
failures, the instrument frozen, the question and pile read from the database."""

import pytest

from judges.backends.bits_backend import instrument_text
from judges.models import JudgeFailure, JudgeRun, JudgeVerdict, prompt_version
from judges.services import judge_create, judge_run_start
from tests.judges.conftest import PILE, make_claims

pytestmark = pytest.mark.django_db

COPIED = "Refunds are processed within 14 days."
ALSO_COPIED = "They are issued to the original card."
FABRICATED = "Shoes can be exchanged in any branch."
ANOTHER = "Parking is free on Sundays."


@pytest.fixture
def bits_judge(project, llm):
    return judge_create(
        project=project,
        name="bits",
        backend="bits",
        model="loopback",
        endpoint="loopback",
        max_concurrency=4,
        timeout_seconds=2.0,
        max_retries=2,
        parameters={"backoff_base_s": 0.05, "backoff_cap_s": 0.2},
    )


def start(judge, capture, **kwargs):
    with capture(execute=True):
        run = judge_run_start(judge=judge, **kwargs)
    run.refresh_from_db()
    return run


def test_a_bits_run_stores_bits_per_claim_and_counts(
    bits_judge, project, llm, django_capture_on_commit_callbacks
):
    _, ctl = llm
    claims = make_claims(project, [COPIED, ALSO_COPIED, FABRICATED, ANOTHER])
    ctl.fail("no_logprobs", claim=ANOTHER)
    run = start(bits_judge, django_capture_on_commit_callbacks)

    assert run.status == JudgeRun.Status.DONE
    assert run.backend == "bits"
    assert run.prompt_text == instrument_text(0.0)
    assert run.prompt_version == prompt_version(instrument_text(0.0))
    assert (run.total, run.done, run.unparseable, run.failed) == (4, 3, 1, 0)
    stored = {v.claim_id: v for v in JudgeVerdict.objects.filter(run=run)}
    assert len(stored) == 4
    for claim in claims[:2]:
        v = stored[claim.pk]
        assert v.verdict == "SUPPORTED"
        assert v.bits > 0
        assert v.bits == pytest.approx(v.log2p_with_pile - v.log2p_without_pile)
        assert v.claim_tokens_with_pile == v.claim_tokens_without_pile > 0
        assert sum(b for _, b in v.token_bits) == pytest.approx(v.bits)
        assert v.confidence == pytest.approx(1 / (1 + 2**-v.bits))
    fabricated = stored[claims[2].pk]
    assert fabricated.verdict == "NOT_IN_PILE"
    assert fabricated.bits <= 0
    bad = stored[claims[3].pk]
    assert bad.verdict == "UNPARSEABLE"
    assert bad.bits is None
    assert bad.confidence is None
    assert "no prompt-token log-probabilities" in bad.raw_response
    # Two calls per claim (one more for none), each prompt under the answer's question.
    assert ctl.calls_for(COPIED) == 2
    question = claims[0].answer.question
    assert all(question in c.prompt for c in ctl.log if c.kind == "score")
    assert sum(PILE in c.prompt for c in ctl.log if c.claim == COPIED) == 1


def test_a_failing_claim_is_a_failure_not_a_score(
    bits_judge, project, llm, django_capture_on_commit_callbacks
):
    _, ctl = llm
    make_claims(project, [COPIED, FABRICATED])
    ctl.fail("500", claim=FABRICATED, times=None)
    run = start(bits_judge, django_capture_on_commit_callbacks)
    assert (run.done, run.failed) == (1, 1)
    assert "HTTP 500" in JudgeFailure.objects.get(run=run).error
    assert not JudgeVerdict.objects.filter(run=run, claim__text=FABRICATED).exists()


def test_a_server_refusing_logprobs_fails_the_run(
    bits_judge, project, llm, django_capture_on_commit_callbacks
):
    _, ctl = llm
    make_claims(project, [COPIED, FABRICATED])
    ctl.fail("refuse_logprobs", times=None)
    run = start(bits_judge, django_capture_on_commit_callbacks)
    assert run.status == JudgeRun.Status.FAILED
    assert "refuses prompt log-probabilities" in run.error
    assert not JudgeVerdict.objects.filter(run=run).exists()


def test_a_bits_judge_needs_a_declared_endpoint(project, llm):
    from django.core.exceptions import ValidationError

    with pytest.raises(ValidationError, match="not an endpoint declared"):
        judge_create(project=project, name="b", backend="bits", model="m", endpoint="nowhere")


def test_the_threshold_is_part_of_the_instrument(project, llm, django_capture_on_commit_callbacks):
    judge = judge_create(
        project=project,
        name="strict",
        backend="bits",
        model="loopback",
        endpoint="loopback",
        parameters={"bits_threshold": 1e6},
    )
    make_claims(project, [COPIED])
    run = start(judge, django_capture_on_commit_callbacks)
    assert run.prompt_text == instrument_text(1e6)
    assert JudgeVerdict.objects.get(run=run).verdict == "NOT_IN_PILE"


def test_a_citation_run_scores_against_the_cited_passage_under_the_question(
    bits_judge, project, llm, django_capture_on_commit_callbacks
):
    from tests.factories import PassageFactory

    _, ctl = llm
    (claim,) = make_claims(project, [COPIED])
    cited = PassageFactory(answer=claim.answer, rank=2, text="Cited: " + COPIED)
    claim.cited_passages.add(cited)
    run = start(bits_judge, django_capture_on_commit_callbacks, kind="citation")
    assert run.status == JudgeRun.Status.DONE
    with_pile = next(c.prompt for c in ctl.log if c.kind == "score" and "Context:" in c.prompt)
    assert "Cited: " in with_pile
    assert PILE not in with_pile  # only the cited passage
    assert claim.answer.question in with_pile
    assert JudgeVerdict.objects.get(run=run).bits > 0
