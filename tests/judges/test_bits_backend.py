"""The grounding-bits backend against the loopback completions server (tests/llm_completions.py),
whose log-probabilities come from a bigram model of the prompt so far. Expected bits are
recomputed here, by this file's own bigram model over the prompts the server received."""

import math
import re
from collections import Counter
from types import SimpleNamespace

import pytest

from judges.backends import JudgeCallFailed, JudgeConfigError, backend_for_spec
from judges.backends.bits_backend import Unplaceable, claim_token_logprobs, confidence_from_bits

QUESTION = "How long do refunds take?"
PILE_TEXT = "Refunds are processed within 14 days. They are issued to the original card."
PILE = [SimpleNamespace(rank=1, title="Refunds", text=PILE_TEXT, answer_question=QUESTION)]
COPIED = "Refunds are processed within 14 days."
FABRICATED = "Gift wrapping costs five pounds in every branch."


def backend(**overrides):
    spec = {
        "backend": "bits",
        "model": "loopback",
        "endpoint": "loopback",
        "timeout_seconds": 1.0,
        "max_retries": 3,
        "backoff_base_s": 0.05,
        "backoff_cap_s": 0.2,
        **overrides,
    }
    return backend_for_spec(spec)


# --- this test's own language model: the definition, written again --------------------------
def _split(text):
    # leading whitespace, then a run of word characters or a single other character
    out, i = [], 0
    pattern = re.compile(r"\s*(\w+|[^\w\s])|\s+")
    while i < len(text):
        m = pattern.match(text, i)
        out.append(m.group(0))
        i = m.end()
    return out


def expected_log2(prompt, claim):
    """log2 p of the claim's tokens (those holding a claim character) under an add-one bigram
    model (vocabulary 1000) fitted on the prompt before each token; and their count."""
    tokens = _split(prompt)
    start = len(prompt) - len(claim)
    assert prompt.endswith(claim)
    seen, before, total, n, at = Counter(), Counter(), 0.0, 0, 0
    keys = [t.strip().lower() for t in tokens]
    for i, token in enumerate(tokens):
        end = at + len(token)
        if i > 0:
            p = (seen[(keys[i - 1], keys[i])] + 1) / (before[keys[i - 1]] + 1000)
            if end > start:
                total += math.log2(p)
                n += 1
            seen[(keys[i - 1], keys[i])] += 1
            before[keys[i - 1]] += 1
        at = end
    return total, n


def expected_bits(ctl, claim):
    prompts = [c.prompt for c in ctl.log if c.kind == "score" and c.claim == claim]
    with_pile = next(p for p in prompts if "Context:" in p)
    without = next(p for p in prompts if "Context:" not in p)
    (a, na), (b, nb) = expected_log2(with_pile, claim), expected_log2(without, claim)
    return a - b, a, b, na, nb


# --- the bits --------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["echo", "prompt_logprobs"])
def test_copied_claim_has_positive_bits_equal_to_the_bigram_models(llm, mode):
    _, ctl = llm
    ctl.prompt_logprobs_decoys = mode == "prompt_logprobs"  # a top-k candidate to reject
    result = backend(bits_mode=mode).verify(COPIED, PILE)
    bits, log2_with, log2_without, n_with, n_without = expected_bits(ctl, COPIED)
    assert bits > 0
    assert result.verdict == "SUPPORTED"
    assert result.extra["bits"] == pytest.approx(bits, abs=1e-9)
    assert result.extra["log2p_with_pile"] == pytest.approx(log2_with, abs=1e-9)
    assert result.extra["log2p_without_pile"] == pytest.approx(log2_without, abs=1e-9)
    assert (
        result.extra["claim_tokens_with_pile"] == n_with == 7
    )  # " Refunds" " are" ... " days" "."
    assert result.extra["claim_tokens_without_pile"] == n_without == 7
    per_token = result.extra["token_bits"]
    assert [t for t, _ in per_token][:2] == [" Refunds", " are"]
    assert sum(b for _, b in per_token) == pytest.approx(bits, abs=1e-9)
    assert result.confidence == pytest.approx(1 / (1 + 2**-bits))
    assert result.completion_tokens == 0


def test_fabricated_claim_has_non_positive_bits_and_is_not_in_pile(llm):
    _, ctl = llm
    result = backend().verify(FABRICATED, PILE)
    bits, *_ = expected_bits(ctl, FABRICATED)
    assert bits <= 0
    assert result.extra["bits"] == pytest.approx(bits, abs=1e-9)
    assert result.verdict == "NOT_IN_PILE"
    assert result.confidence == pytest.approx(2**bits / (1 + 2**bits))


def test_threshold_moves_the_verdict_not_the_bits(llm):
    _, ctl = llm
    low = backend().verify(COPIED, PILE)
    high = backend(bits_threshold=low.extra["bits"] + 0.5).verify(COPIED, PILE)
    assert high.extra["bits"] == pytest.approx(low.extra["bits"])
    assert (low.verdict, high.verdict) == ("SUPPORTED", "NOT_IN_PILE")


def test_two_prompts_end_with_the_claim_and_only_one_holds_the_pile(llm):
    _, ctl = llm
    backend().verify(COPIED, PILE)
    prompts = [c.prompt for c in ctl.log if c.kind == "score"]
    assert len(prompts) == 2
    assert all(p.endswith("\nAnswer: " + COPIED) for p in prompts)
    assert all(QUESTION in p for p in prompts)
    assert [PILE_TEXT in p for p in prompts] == [True, False]


def test_confidence_mapping_by_hand():
    assert confidence_from_bits(0.0) == 0.5
    assert confidence_from_bits(1.0) == pytest.approx(2 / 3)
    assert confidence_from_bits(-2.0) == pytest.approx(1 / 5)
    assert confidence_from_bits(-5000.0) == 0.0
    assert confidence_from_bits(5000.0) == 1.0


# --- reading replies ---------------------------------------------------------------------
def _echo(tokens, logprobs, offsets=None):
    return SimpleNamespace(
        choices=[
            SimpleNamespace(
                prompt_logprobs=None,
                logprobs=SimpleNamespace(
                    tokens=tokens, token_logprobs=logprobs, text_offset=offsets
                ),
            )
        ]
    )


def test_echo_span_keeps_a_straddling_token_and_drops_generated_ones():
    prompt = "Answer: Yes sir"
    start = prompt.index("Yes")
    reply = _echo(["Answer", ":", " Yes", " sir", " ."], [None, -1.0, -2.0, -3.0, -9.0])
    assert claim_token_logprobs(reply, prompt, start) == [(" Yes", -2.0), (" sir", -3.0)]
    # the same with the server's offsets
    reply = _echo(
        ["Answer", ":", " Yes", " sir", " ."], [None, -1.0, -2.0, -3.0, -9.0], [0, 6, 7, 11, 15]
    )
    assert claim_token_logprobs(reply, prompt, start) == [(" Yes", -2.0), (" sir", -3.0)]


def test_a_claim_token_without_a_logprob_is_unplaceable():
    prompt = "Yes sir"
    reply = _echo(["Yes", " sir"], [None, -1.0])
    with pytest.raises(Unplaceable, match="no log-probability"):
        claim_token_logprobs(reply, prompt, 0)


def test_prompt_logprobs_that_do_not_spell_the_prompt_are_unplaceable():
    entry = SimpleNamespace(**{"7": SimpleNamespace(logprob=-1.0, decoded_token=" madam")})
    reply = SimpleNamespace(choices=[SimpleNamespace(prompt_logprobs=[None, entry], logprobs=None)])
    with pytest.raises(Unplaceable, match="do not spell"):
        claim_token_logprobs(reply, "Yes sir", 3)


# --- faults, as for the chat judge ------------------------------------------------------
def test_reply_without_prompt_logprobs_is_unparseable_with_the_reason(llm):
    _, ctl = llm
    ctl.fail("no_logprobs", claim=COPIED)
    result = backend().verify(COPIED, PILE)
    assert result.verdict == "UNPARSEABLE"
    assert result.confidence is None
    assert result.extra is None
    assert result.raw.startswith("with the pile: ")
    assert "no prompt-token log-probabilities" in result.raw


def test_garbage_on_the_second_call_is_unparseable_naming_that_call(llm):
    _, ctl = llm
    ctl.fail("garbage", claim=COPIED, times=2)  # consumed: with the pile, then without
    first = backend().verify(COPIED, PILE)
    assert first.verdict == "UNPARSEABLE"
    assert first.raw.startswith("with the pile")


def test_429_waits_at_least_retry_after(llm):
    _, ctl = llm
    ctl.fail("429", claim=COPIED, retry_after=1.0)
    result = backend().verify(COPIED, PILE)
    assert result.verdict == "SUPPORTED"
    (first, s1), (second, s2), (_, s3) = ctl.times_for(COPIED)
    assert (s1, s2, s3) == (429, 200, 200)
    assert second - first >= 1.0


def test_500_and_timeouts_are_retried(llm):
    _, ctl = llm
    ctl.fail("500", claim=COPIED)
    ctl.fail("slow", claim=COPIED, delay=2.0)
    result = backend(timeout_seconds=0.5).verify(COPIED, PILE)
    assert result.verdict == "SUPPORTED"
    assert [status for _, status in ctl.times_for(COPIED)] == [500, 200, 200, 200]


def test_retries_are_bounded(llm):
    _, ctl = llm
    ctl.fail("500", claim=COPIED, times=None)
    with pytest.raises(JudgeCallFailed, match="gave up after 3 attempts"):
        backend(max_retries=2).verify(COPIED, PILE)
    assert ctl.calls_for(COPIED) == 3


def test_a_server_refusing_logprobs_fails_the_run(llm):
    _, ctl = llm
    ctl.fail("refuse_logprobs", times=None)
    with pytest.raises(JudgeConfigError, match="refuses prompt log-probabilities"):
        backend().verify(COPIED, PILE)


def test_401_fails_the_run_without_the_key(llm, monkeypatch, llm_endpoints):
    base_url, ctl = llm
    monkeypatch.setenv("BITS_TEST_KEY", "sk-secretsecret123")
    llm_endpoints({"name": "loopback", "base_url": base_url, "api_key_env": "BITS_TEST_KEY"})
    ctl.fail("401", times=None)
    with pytest.raises(JudgeConfigError) as info:
        backend().verify(COPIED, PILE)
    assert "secret" not in str(info.value)


def test_an_undeclared_endpoint_is_a_config_error(llm):
    with pytest.raises(JudgeConfigError):
        backend(endpoint="elsewhere")


def test_bad_mode_or_threshold_is_a_config_error(llm):
    with pytest.raises(JudgeConfigError, match="bits_mode"):
        backend(bits_mode="logits")
    with pytest.raises(JudgeConfigError, match="bits_threshold"):
        backend(bits_threshold="high")


def test_averify_gives_the_same_bits(llm):
    import asyncio

    _, ctl = llm
    judge = backend()

    async def once():
        try:
            return await judge.averify(COPIED, PILE)
        finally:
            await judge.aclose()

    result = asyncio.run(once())
    assert result.extra["bits"] == pytest.approx(expected_bits(ctl, COPIED)[0], abs=1e-9)
