"""The OpenAI-compatible backend against a real HTTP server on loopback (tests/llm_server.py)."""

import math
from types import SimpleNamespace

import pytest

from judges.backends import JudgeCallFailed, backend_for_spec
from judges.backends.openai_backend import confidence_from_logprobs, verdict_parse

PILE = [SimpleNamespace(rank=1, title="Refunds", text="Refunds take 14 days to arrive.")]


def backend(base_url, **overrides):
    """A backend on the endpoint "loopback" the `llm` fixture declares at `base_url`."""
    assert base_url
    spec = {
        "backend": "openai",
        "model": "loopback",
        "endpoint": "loopback",
        "timeout_seconds": 1.0,
        "max_retries": 3,
        "backoff_base_s": 0.05,
        "backoff_cap_s": 0.2,
        **overrides,
    }
    return backend_for_spec(spec)


@pytest.mark.parametrize(
    ("claim", "verdict"),
    [
        ("Refunds take 14 days to arrive.", "SUPPORTED"),
        ("Refunds take 30 days to arrive.", "CONTRADICTED"),
        ("Shoes can be exchanged in any branch.", "NOT_IN_PILE"),
    ],
)
def test_verify_stores_verdict_and_p_supported_from_served_logprobs(llm, claim, verdict):
    base_url, ctl = llm
    result = backend(base_url).verify(claim, PILE)
    assert result.verdict == verdict
    served = "NOT_MENTIONED" if verdict == "NOT_IN_PILE" else verdict
    # The server served p(chosen)=0.8, others 0.08 and 0.05, a stray token the rest.
    expected = ctl.expected_confidence(served)
    assert result.confidence == pytest.approx(expected, abs=1e-9)
    if verdict == "SUPPORTED":
        assert result.confidence == pytest.approx(0.8 / 0.93)
    else:
        assert result.confidence == pytest.approx(0.08 / 0.93)
    assert result.prompt_tokens > 0
    assert result.completion_tokens == 1
    assert result.latency_ms > 0


def test_no_logprobs_leaves_confidence_empty(llm):
    base_url, ctl = llm
    ctl.fail("no_logprobs", claim="Refunds take 14 days to arrive.")
    result = backend(base_url).verify("Refunds take 14 days to arrive.", PILE)
    assert result.verdict == "SUPPORTED"
    assert result.confidence is None


def test_garbage_is_unparseable_with_raw_text(llm):
    base_url, ctl = llm
    ctl.fail("garbage", text="Well, it depends on the store.")
    result = backend(base_url).verify("Refunds take 14 days to arrive.", PILE)
    assert result.verdict == "UNPARSEABLE"
    assert result.raw == "Well, it depends on the store."
    assert result.confidence is None


def test_429_waits_at_least_retry_after(llm):
    base_url, ctl = llm
    claim = "Refunds take 14 days to arrive."
    ctl.fail("429", claim=claim, retry_after=1.0)
    result = backend(base_url).verify(claim, PILE)
    assert result.verdict == "SUPPORTED"
    (first, status1), (second, status2) = ctl.times_for(claim)
    assert (status1, status2) == (429, 200)
    # Measured by the server's own arrival clock: the retry came no earlier than asked.
    assert second - first >= 1.0


def test_500_and_timeouts_are_retried(llm):
    base_url, ctl = llm
    claim = "Refunds take 14 days to arrive."
    ctl.fail("500", claim=claim)
    ctl.fail("slow", claim=claim, delay=2.0)
    result = backend(base_url, timeout_seconds=0.5).verify(claim, PILE)
    assert result.verdict == "SUPPORTED"
    assert [status for _, status in ctl.times_for(claim)] == [500, 200, 200]


def test_retries_are_bounded(llm):
    base_url, ctl = llm
    claim = "Refunds take 14 days to arrive."
    ctl.fail("500", claim=claim, times=None)
    with pytest.raises(JudgeCallFailed, match="gave up after 3 attempts"):
        backend(base_url, max_retries=2).verify(claim, PILE)
    assert ctl.calls_for(claim) == 3


def test_decompose_splits_one_claim_per_line(llm):
    base_url, _ = llm
    claims = backend(base_url).decompose(
        "Damaged items can be returned within 30 days. Return shipping is free over £50."
    )
    assert claims == [
        "Damaged items can be returned within 30 days.",
        "Return shipping is free over £50.",
    ]


@pytest.mark.parametrize(
    ("text", "verdict"),
    [
        ("SUPPORTED", "SUPPORTED"),
        (" supported.\n", "SUPPORTED"),
        ("**CONTRADICTED**", "CONTRADICTED"),
        ("NOT_MENTIONED", "NOT_IN_PILE"),
        ("NOT MENTIONED", "NOT_IN_PILE"),
        ("<think>hmm</think>NOT_MENTIONED", "NOT_IN_PILE"),
        ("The claim is SUPPORTED", None),
        ("MAYBE", None),
        ("", None),
        # Only blanks, quotes, markdown and a full stop are stripped: a letter stuck to the
        # word makes it no verdict word.
        ("XSUPPORTEDX", None),
        ("`CONTRADICTEDX`", None),
    ],
)
def test_verdict_parse_accepts_only_one_verdict_word(text, verdict):
    assert verdict_parse(text) == verdict


def _choice(tokens):
    """A chat-completion choice whose first token has these (token, probability) options."""
    top = [SimpleNamespace(token=t, logprob=math.log(p)) for t, p in tokens]
    first = SimpleNamespace(token=tokens[0][0], logprob=math.log(tokens[0][1]), top_logprobs=top)
    return SimpleNamespace(logprobs=SimpleNamespace(content=[first]))


def test_confidence_sums_token_variants_and_renormalises():
    # "SUP" and " Supported" are both SUPPORTED; "The" is no verdict and drops out.
    choice = _choice([("SUP", 0.5), (" Supported", 0.1), ("CON", 0.2), ("NOT", 0.1), ("The", 0.1)])
    assert confidence_from_logprobs(choice) == pytest.approx(0.6 / 0.9)


def test_confidence_none_when_no_verdict_token():
    assert confidence_from_logprobs(_choice([("The", 0.7), ("A", 0.3)])) is None
    assert confidence_from_logprobs(SimpleNamespace(logprobs=None)) is None


def test_a_server_refusing_logprobs_still_gets_judged_without_confidence(llm):
    base_url, ctl = llm
    ctl.fail("refuse_logprobs", times=None)
    judge = backend(base_url)
    first = judge.verify("Refunds take 14 days to arrive.", PILE)
    second = judge.verify("Refunds take 30 days to arrive.", PILE)
    assert (first.verdict, first.confidence) == ("SUPPORTED", None)
    assert (second.verdict, second.confidence) == ("CONTRADICTED", None)
    # One refused call, then it stops asking for logprobs.
    assert [status for _, status in ctl.times_for("Refunds take 14 days to arrive.")] == [400, 200]
    assert [status for _, status in ctl.times_for("Refunds take 30 days to arrive.")] == [200]


@pytest.mark.parametrize(
    ("token", "expected"),
    [
        ('"SUPPORTED', "SUPPORTED"),
        ("*Sup", "SUPPORTED"),
        ("`NOT", "NOT_IN_PILE"),
        ("'Contra", "CONTRADICTED"),
        (' "', None),
        ("S", None),
        ("Maybe", None),
        # Two letters are the shortest start read as a verdict; one is too ambiguous.
        ("SU", "SUPPORTED"),
        ('"Co', "CONTRADICTED"),
        (" no", "NOT_IN_PILE"),
        ("*N", None),
        # A letter before the word is not markdown: "XSUP" starts no verdict word.
        ("XSUP", None),
        ("`XCON`", None),
    ],
)
def test_verdict_for_token_reads_a_first_token_through_quotes_and_markdown(token, expected):
    from judges.backends.openai_backend import verdict_for_token

    assert verdict_for_token(token) == expected


def test_confidence_from_logprobs_of_a_quoted_first_token():
    # By hand: the verdict masses are 0.6 (SUPPORTED), 0.3 (CONTRADICTED), 0.1 (NOT_IN_PILE).
    def tok(token, p):
        return SimpleNamespace(token=token, logprob=math.log(p))

    first = SimpleNamespace(
        token='"SUP',
        logprob=math.log(0.6),
        top_logprobs=[tok('"SUP', 0.6), tok("*CONT", 0.3), tok("`NOT", 0.1)],
    )
    choice = SimpleNamespace(logprobs=SimpleNamespace(content=[tok(" ", 0.9), first]))
    assert confidence_from_logprobs(choice) == pytest.approx(0.6)


def test_confidence_from_logprobs_of_a_reply_without_logprobs_is_none():
    assert confidence_from_logprobs(SimpleNamespace(message="SUPPORTED")) is None


def _tok(token, p, top=None):
    return SimpleNamespace(token=token, logprob=math.log(p), top_logprobs=top)


def test_confidence_counts_the_first_token_itself_when_top_logprobs_leave_it_out():
    # By hand: the chosen token "SUP" (p 0.7) is not among its top_logprobs, which list only
    # "CON" (0.2): the masses are 0.7 and 0.2, so P(SUPPORTED) = 0.7 / 0.9.
    first = _tok("SUP", 0.7, top=[_tok("CON", 0.2)])
    choice = SimpleNamespace(logprobs=SimpleNamespace(content=[first]))
    assert confidence_from_logprobs(choice) == pytest.approx(0.7 / (0.7 + 0.2))
    # With no top_logprobs at all the chosen token is the only mass: exp(log 0.7) / itself = 1.
    alone = SimpleNamespace(logprobs=SimpleNamespace(content=[_tok("SUP", 0.7)]))
    assert confidence_from_logprobs(alone) == pytest.approx(1.0)


def test_confidence_skips_leading_tokens_that_are_blank_or_null():
    # A null token (some servers send one for a special token) is skipped like a blank one;
    # the first real token is "NOT" (0.5) against "SUP" (0.25): P = 0.25 / 0.75 = 1/3.
    null = SimpleNamespace(token=None, logprob=math.log(0.9), top_logprobs=[])
    first = _tok("NOT", 0.5, top=[_tok("NOT", 0.5), _tok("SUP", 0.25)])
    choice = SimpleNamespace(logprobs=SimpleNamespace(content=[null, _tok(" ", 0.9), first]))
    assert confidence_from_logprobs(choice) == pytest.approx(1 / 3)


def test_confidence_none_when_every_token_is_blank_or_logprobs_has_no_content():
    blank = SimpleNamespace(logprobs=SimpleNamespace(content=[_tok(" ", 0.9), _tok("", 0.1)]))
    assert confidence_from_logprobs(blank) is None
    # A legacy completions-style logprobs object (tokens, token_logprobs) has no `content`.
    legacy = SimpleNamespace(logprobs=SimpleNamespace(tokens=["SUP"], token_logprobs=[-0.1]))
    assert confidence_from_logprobs(legacy) is None
