"""Grounding bits: how much the pile raises the probability of a claim, in bits (seed 000,
"Bits of grounding", Proposition 7).

For each claim the backend scores the claim's tokens twice on an OpenAI-compatible
*completions* endpoint that returns the log-probabilities of the prompt's own tokens, with no
generation to speak of:

    with the pile:     "Context:\\n{context}\\n\\nQuestion: {question}\\nAnswer: {claim}"
    without the pile:  "Question: {question}\\nAnswer: {claim}"

    bits = sum over the claim's tokens of log2 p(token | with pile) - log2 p(token | without)

(the pointwise mutual information of the claim and the pile given the question). The
question is the claim's answer's question (`judges.selectors.piles_for_items` puts it on the
passages as `answer_question`); with an empty pile both prompts lack it alike.

**Finding the claim's tokens.** The claim is the last thing in each prompt, after the same
words ("\\nAnswer: "), so its tokens are the prompt's last tokens and need no tokenizer of
ours: a token belongs to the claim when it carries at least one of the claim's characters
(its end offset is past the claim's first character). A token straddling the boundary (" The"
whose space ends "Answer:") is counted: it sees the same preceding text in both prompts. The
offsets come from the reply, in either of its two shapes:

- `echo: true` with `logprobs: 0` (OpenAI's legacy completions; vLLM; llama-cpp-python's
  server): `choices[0].logprobs` has `tokens`, `token_logprobs` and `text_offset`; tokens at
  or past the prompt's end are the generated one(s) (`max_tokens` is 1 by default: some
  servers refuse 0) and are dropped. Without `text_offset`, offsets are the running sum of the
  token texts from the prompt's start.
- `prompt_logprobs: 0` (vLLM's extension, `bits_mode: "prompt_logprobs"`):
  `choices[0].prompt_logprobs` is one entry per prompt token (the first is null), each a map
  of token id to {logprob, decoded_token}. It gives no offsets and no text for the first
  token, so the claim's tokens are found from the end: the decoded texts, read backwards,
  must spell the prompt's tail; where an entry holds several candidates (a top-k above 0),
  the one that spells the tail is the prompt's token.

A reply whose tokens cannot be placed this way, or which carries no prompt log-probabilities
at all, is UNPARSEABLE with that reason in its raw text: never a made-up score. An endpoint
that refuses log-probabilities (HTTP 400 naming them) fails the run: it does not qualify.

**Verdict and confidence.** SUPPORTED when bits > the judge's `bits_threshold` (0 by
default), else NOT_IN_PILE (the instrument cannot see a contradiction). The stored
confidence is the logistic of the bits in base 2, `1 / (1 + 2**-bits)`: 0.5 at 0 bits, the
posterior P(SUPPORTED) of an even prior whose likelihood ratio is the PMI's, monotone in the
bits (so every rank figure of the audit is the bits' own) and calibrated out of fold by the
report like any judge's confidence. It saturates for long claims (|bits| > ~50); the bits
themselves are stored unrounded beside it.

Calls go through the OpenAI backend's client, retries, caps and error summaries (this class
is a subclass, `_post`/`_apost` with the completions path): the endpoint is one the operator
declared, its key read at call time and never stored. The two calls of a claim are made one
after the other, so a run never has more calls in flight than its concurrency.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from annotate.vocabulary import UNPARSEABLE, Verdict
from judges.backends.base import JudgeCallFailed, JudgeConfigError, VerifyResult
from judges.backends.openai_backend import LogprobsRefused, OpenAIBackend, declared_endpoint
from judges.backends.registry import register
from judges.endpoints import Endpoint
from judges.prompts import context_render

PROMPT_WITH_PILE = "Context:\n{context}\n\nQuestion: {question}\nAnswer: {claim}"
PROMPT_WITHOUT_PILE = "Question: {question}\nAnswer: {claim}"
COMPLETIONS_PATH = "/completions"
MODES = ("echo", "prompt_logprobs")
LN2 = math.log(2.0)
NO_LOGPROBS = (
    "the endpoint's reply carries no prompt-token log-probabilities (neither "
    "choices[0].logprobs with echo nor choices[0].prompt_logprobs): this server cannot "
    "measure grounding bits"
)


def instrument_text(threshold: float = 0.0) -> str:
    """The instrument as text (its hash is the run's prompt version): both templates and the
    threshold, so changing either makes a new instrument."""
    return (
        "Grounding bits: log2 p(claim | question, pile) - log2 p(claim | question).\n"
        f"With the pile:\n{PROMPT_WITH_PILE}\n\nWithout the pile:\n{PROMPT_WITHOUT_PILE}\n\n"
        f"SUPPORTED when bits > {threshold:g}, else NOT_IN_PILE."
    )


def confidence_from_bits(bits: float) -> float:
    """1 / (1 + 2**-bits), computed without overflow."""
    if bits >= 0:
        return 1.0 / (1.0 + 2.0 ** (-min(bits, 1e4)))
    z = 2.0 ** max(bits, -1e4)
    return z / (1.0 + z)


def render(template: str, *, question: str, passages, claim: str) -> tuple[str, int]:
    """The prompt and the offset where the claim starts in it (the claim is its end)."""
    head, tail = template.split("{claim}")
    assert tail == ""  # the claim must end the prompt: its tokens are the prompt's last ones
    head = head.replace("{question}", question or "")
    if "{context}" in head:
        head = head.replace("{context}", context_render(passages))
    return head + claim, len(head)


class Unplaceable(ValueError):
    """The reply's tokens cannot be read as the claim's (the reason is the message)."""


def _number(value) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def _from_echo(logprobs, prompt: str, claim_start: int) -> list[tuple[str, float]]:
    tokens = logprobs.tokens
    values = logprobs.token_logprobs
    if not isinstance(tokens, list) or not isinstance(values, list) or len(tokens) != len(values):
        raise Unplaceable(NO_LOGPROBS)
    offsets = logprobs.text_offset
    if not isinstance(offsets, list) or len(offsets) != len(tokens):
        offsets, at = [], 0
        for token in tokens:
            offsets.append(at)
            at += len(token if isinstance(token, str) else "")
    span = []
    for token, value, offset in zip(tokens, values, offsets, strict=True):
        if not isinstance(token, str) or not isinstance(offset, int):
            raise Unplaceable("the reply's tokens or offsets are not strings and integers")
        if offset >= len(prompt) or offset + len(token) <= claim_start:
            continue  # before the claim, or generated after the prompt
        logprob = _number(value)
        if logprob is None:
            raise Unplaceable(f"the claim's token {token!r} has no log-probability")
        span.append((token, logprob))
    if not span:
        raise Unplaceable("no token of the reply falls on the claim")
    return span


def _candidates(entry) -> list[tuple[str, float | None]]:
    found = []
    for value in vars(entry).values():
        token = getattr(value, "decoded_token", None)
        if isinstance(token, str):
            found.append((token, _number(getattr(value, "logprob", None))))
    return found


def _from_prompt_logprobs(entries: list, prompt: str, claim_start: int) -> list[tuple[str, float]]:
    at = len(prompt)
    span: list[tuple[str, float]] = []
    for entry in reversed(entries):
        if at <= claim_start:
            break
        if entry is None or not hasattr(entry, "__dict__"):
            raise Unplaceable("a claim token's prompt_logprobs entry is empty")
        matching = [(t, lp) for t, lp in _candidates(entry) if t and prompt[:at].endswith(t)]
        if not matching:
            raise Unplaceable(
                "the reply's prompt tokens do not spell the end of the prompt (decoded_token)"
            )
        token, logprob = max(matching, key=lambda pair: len(pair[0]))
        if logprob is None:
            raise Unplaceable(f"the claim's token {token!r} has no log-probability")
        span.append((token, logprob))
        at -= len(token)
    if at > claim_start:
        raise Unplaceable("the reply has fewer prompt tokens than the claim needs")
    span.reverse()
    return span


def claim_token_logprobs(reply, prompt: str, claim_start: int) -> list[tuple[str, float]]:
    """(token, natural-log probability) of the claim's tokens in a completions reply, from
    whichever shape it has; `Unplaceable` with the reason otherwise."""
    choices = reply.choices
    choice = choices[0] if isinstance(choices, list) and choices else None
    if choice is None:
        raise Unplaceable("the endpoint's reply has no choices")
    entries = choice.prompt_logprobs
    if isinstance(entries, list) and entries:
        return _from_prompt_logprobs(entries, prompt, claim_start)
    logprobs = choice.logprobs
    if logprobs is not None and logprobs.tokens is not None:
        return _from_echo(logprobs, prompt, claim_start)
    raise Unplaceable(NO_LOGPROBS)


@dataclass(frozen=True)
class BitsSpec:
    """What a grounding-bits judge (or run) may ask for; the endpoint is a NAME."""

    model: str
    endpoint: str = ""
    timeout_seconds: float = 30.0
    max_retries: int = 5
    backoff_base_s: float = 0.5
    backoff_cap_s: float = 30.0
    bits_threshold: float = 0.0
    bits_mode: str = "echo"
    max_tokens: int = 1
    temperature: float = 0.0


@register
class GroundingBitsBackend(OpenAIBackend):
    name = "bits"
    label = "Grounding bits (prompt log-probabilities of a completions endpoint)"
    position = 2
    verify_prompt_needs_claim = False
    can_pairwise = False
    can_split = False
    needs_question = True  # the claim is scored under its answer's question
    extra_verdict_columns = (
        "bits",
        "log2p_with_pile",
        "log2p_without_pile",
        "claim_tokens_with_pile",
        "claim_tokens_without_pile",
        "token_bits",
    )
    report_key = "grounding_bits"
    report_block = "metrics.services.bits:grounding_bits_block"

    @classmethod
    def instrument(cls, spec: dict) -> tuple[str, dict]:
        """Both templates and the threshold; no decompose prompt, no temperature."""
        drop = ("verify_prompt", "decompose_prompt", "temperature")
        frozen = {k: v for k, v in spec.items() if k not in drop}
        return instrument_text(float(spec.get("bits_threshold") or 0.0)), frozen

    @classmethod
    def from_spec(cls, spec: dict) -> GroundingBitsBackend:
        fields = BitsSpec.__dataclass_fields__
        return cls(
            BitsSpec(**{k: v for k, v in spec.items() if k in fields and v is not None}),
            declared_endpoint(spec),
        )

    def __init__(self, spec: BitsSpec, endpoint: Endpoint):
        if spec.bits_mode not in MODES:
            raise JudgeConfigError(f"bits_mode {spec.bits_mode!r} is not one of {', '.join(MODES)}")
        try:
            threshold = float(spec.bits_threshold)
        except (TypeError, ValueError):
            raise JudgeConfigError(
                f"bits_threshold {spec.bits_threshold!r} is not a number"
            ) from None
        if not math.isfinite(threshold):
            raise JudgeConfigError("bits_threshold must be a finite number of bits")
        super().__init__(spec, endpoint)
        self.threshold = threshold

    @property
    def prompt_text(self) -> str:
        return instrument_text(self.threshold)

    def _body(self, prompt: str) -> dict:
        body = {
            "model": self.spec.model,
            "prompt": prompt,
            "max_tokens": int(self.spec.max_tokens),
            "temperature": 0.0,
        }
        if self.spec.bits_mode == "prompt_logprobs":
            body["prompt_logprobs"] = 0
        else:
            body.update(echo=True, logprobs=0)
        return body

    def _prompts(self, claim_text: str, passages):
        question = next(
            (getattr(p, "answer_question", "") for p in passages or [] if hasattr(p, "text")), ""
        )
        with_pile = render(PROMPT_WITH_PILE, question=question, passages=passages, claim=claim_text)
        without = render(PROMPT_WITHOUT_PILE, question=question, passages=(), claim=claim_text)
        return with_pile, without

    def _refused(self, exc: JudgeCallFailed):
        if isinstance(exc, LogprobsRefused):
            raise JudgeConfigError(
                f"the endpoint refuses prompt log-probabilities ({exc}): it cannot measure "
                "grounding bits (see README: which servers qualify)"
            ) from None
        raise exc

    def verify(self, claim_text: str, passages) -> VerifyResult:
        (p1, s1), (p2, s2) = self._prompts(claim_text, passages)
        try:
            first = self._post(self._body(p1), COMPLETIONS_PATH)
            second = self._post(self._body(p2), COMPLETIONS_PATH)
        except JudgeCallFailed as exc:
            self._refused(exc)
        return self._result_bits(first, (p1, s1), second, (p2, s2))

    async def averify(self, claim_text: str, passages) -> VerifyResult:
        (p1, s1), (p2, s2) = self._prompts(claim_text, passages)
        try:
            first = await self._apost(self._body(p1), COMPLETIONS_PATH)
            second = await self._apost(self._body(p2), COMPLETIONS_PATH)
        except JudgeCallFailed as exc:
            self._refused(exc)
        return self._result_bits(first, (p1, s1), second, (p2, s2))

    def _result_bits(self, first, prompt_with, second, prompt_without) -> VerifyResult:
        (reply_with, ms_with), (reply_without, ms_without) = first, second
        latency = ms_with + ms_without
        prompt_tokens = sum(
            int(getattr(getattr(r, "usage", None), "prompt_tokens", 0) or 0)
            for r in (reply_with, reply_without)
        )
        try:
            with_span = claim_token_logprobs(reply_with, *prompt_with)
        except Unplaceable as exc:
            return VerifyResult(UNPARSEABLE, None, f"with the pile: {exc}", latency, prompt_tokens)
        try:
            without_span = claim_token_logprobs(reply_without, *prompt_without)
        except Unplaceable as exc:
            return VerifyResult(
                UNPARSEABLE, None, f"without the pile: {exc}", latency, prompt_tokens
            )
        log2_with = sum(lp for _, lp in with_span) / LN2
        log2_without = sum(lp for _, lp in without_span) / LN2
        bits = log2_with - log2_without
        if [t for t, _ in with_span] == [t for t, _ in without_span]:
            token_bits = [
                [t, (a - b) / LN2] for (t, a), (_, b) in zip(with_span, without_span, strict=True)
            ]
        else:
            token_bits = {
                "with_pile": [[t, lp / LN2] for t, lp in with_span],
                "without_pile": [[t, lp / LN2] for t, lp in without_span],
            }
        verdict = Verdict.SUPPORTED if bits > self.threshold else Verdict.NOT_IN_PILE
        raw = (
            f"{bits:+.4f} bits (log2 p with the pile {log2_with:.4f} over {len(with_span)} "
            f"tokens, without {log2_without:.4f} over {len(without_span)})"
        )
        return VerifyResult(
            verdict,
            confidence_from_bits(bits),
            raw,
            latency,
            prompt_tokens,
            0,
            extra={
                "bits": bits,
                "log2p_with_pile": log2_with,
                "log2p_without_pile": log2_without,
                "claim_tokens_with_pile": len(with_span),
                "claim_tokens_without_pile": len(without_span),
                "token_bits": token_bits,
            },
        )

    def decompose(self, answer_text: str) -> list[str]:
        raise JudgeConfigError("a grounding-bits judge scores claims; it cannot split answers")
