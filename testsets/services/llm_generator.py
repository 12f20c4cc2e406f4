"""The LLM generator: a versioned generation prompt sent to a declared endpoint, one call per
document, through the judges' OpenAI-compatible backend (judges/backends/openai_backend.py
`OpenAIBackend.chat`: the operator's declared URL and key variable, its caps, retries and
scrubbed errors; no second HTTP client).

The prompt's text, version and sha256 are stored in the test set's `generator`, so an item
can always be traced to the exact instrument that wrote it. The reply must be JSON: a list of
items, or an object whose "items" is that list (a ```json fence around it is tolerated), each
`{question, answer, quotes: [{passage, text}], risk, language}`; every one is then verified
(testsets/services/verify.py) before it is kept.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass

from judges.backends.openai_backend import OpenAIBackend, OpenAISpec
from judges.endpoints import Endpoint
from testsets.language import language_name
from testsets.services.verify import PassageView

PROMPT_VERSION = "critical-qa-1"
GENERATION_PROMPT = """You write test questions on the CRITICAL facts of a document: facts \
whose wrong answer carries legal, financial, safety, health, security, eligibility or \
discrimination/bias risk (amounts, fees, dates and deadlines, ages, percentages, obligations \
and prohibitions), not mere inconvenience.

Write at most {count} items, in {language_name} (the document's language). Each item:
- "question": a question a user of the document could ask, answerable from it alone;
- "answer": the ground-truth answer, stated only with what the quotes say;
- "quotes": one or more quotes copied VERBATIM (character for character) from the passages, \
each {{"passage": <the passage's number>, "text": "<exact text>"}};
- "risk": one of legal, financial, safety, health, security, eligibility, discrimination, none;
- "language": "{language}".

Reply with a JSON list of items and nothing else.

Document: {title}

{passages}
"""
PROMPT_HASH = hashlib.sha256(GENERATION_PROMPT.encode("utf-8")).hexdigest()
# Rough tokens per character for an estimate (English averages ~4 characters a token), and
# the completion tokens an item takes (question, answer, one quote, the JSON around them).
CHARS_PER_TOKEN = 4
TOKENS_PER_ITEM = 150
_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)


class ReplyMalformed(ValueError):
    """The reply is not the JSON the prompt asks for; the message says what it is instead."""


@dataclass(frozen=True)
class GeneratorSpec:
    endpoint: Endpoint
    model: str
    per_document: int


def passages_block(passages: list[PassageView], max_chars: int) -> str:
    """The passages as the prompt shows them, `[P<position>] text`, cut at `max_chars`."""
    lines, used = [], 0
    for passage in passages:
        line = f"[P{passage.position}] {passage.text}"
        if lines and used + len(line) > max_chars:
            break
        lines.append(line[:max_chars])
        used += len(line) + 2
    return "\n\n".join(lines)


def generation_prompt(
    *, title: str, language: str, passages: list[PassageView], count: int, max_chars: int
) -> str:
    return GENERATION_PROMPT.format(
        count=count,
        language=language or "en",
        language_name=language_name(language or "en"),
        title=title,
        passages=passages_block(passages, max_chars),
    )


def prompt_tokens_estimate(document_chars: int, max_chars: int) -> int:
    return (len(GENERATION_PROMPT) + min(document_chars, max_chars)) // CHARS_PER_TOKEN + 1


def reply_items(text: str) -> list:
    """The items of a reply; ReplyMalformed when it is not a JSON list (or {"items": [...]})."""
    fenced = _FENCE.match(text or "")
    body = fenced.group(1) if fenced else (text or "").strip()
    try:
        data = json.loads(body)
    except ValueError as exc:
        raise ReplyMalformed(f"the reply is not JSON ({exc.msg}): {body[:120]!r}") from None
    if isinstance(data, dict) and isinstance(data.get("items"), list):
        data = data["items"]
    if not isinstance(data, list):
        raise ReplyMalformed("the reply is not a JSON list of items")
    return data


class LlmGenerator:
    """One backend (one connection pool) for the whole job."""

    def __init__(self, spec: GeneratorSpec, max_chars: int):
        self.spec = spec
        self.max_chars = max_chars
        self.backend = OpenAIBackend(
            OpenAISpec(
                model=spec.model,
                endpoint=spec.endpoint.name,
                timeout_seconds=spec.endpoint.timeout_seconds,
                max_retries=spec.endpoint.max_retries,
            ),
            spec.endpoint,
        )

    def candidates(self, *, title: str, language: str, passages: list[PassageView]):
        """(items or a ReplyMalformed, prompt tokens, completion tokens) for one document;
        JudgeCallFailed / JudgeConfigError when the endpoint cannot be called."""
        prompt = generation_prompt(
            title=title,
            language=language,
            passages=passages,
            count=self.spec.per_document,
            max_chars=self.max_chars,
        )
        max_tokens = max(256, TOKENS_PER_ITEM * self.spec.per_document * 2)
        text, prompt_tokens, completion_tokens = self.backend.chat(prompt, max_tokens=max_tokens)
        try:
            items = reply_items(text)
        except ReplyMalformed as exc:
            items = exc
        return items, prompt_tokens, completion_tokens
