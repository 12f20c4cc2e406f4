"""Any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, Ollama, llama.cpp, LM Studio).

One claim per call. The API key is read from the environment variable the judge names, at call
time, and goes nowhere but the Authorization header: not the database, not a log line, not an
error message (`_scrub`).

Retries are ours, not the client's (`max_retries=0`): exponential backoff with jitter on 429,
5xx, timeouts and dropped connections, honouring Retry-After (seconds, an HTTP date, or
`retry-after-ms`), bounded by the judge's `max_retries`. 401/403/404 fail the whole run at once:
every other claim would fail the same way.
"""

from __future__ import annotations

import email.utils
import logging
import math
import os
import random
import re
import threading
import time
from dataclasses import dataclass

import openai
from openai import OpenAI

from judges.backends.base import JudgeCallFailed, JudgeConfigError, VerifyResult
from judges.prompts import (
    DEFAULT_DECOMPOSE_PROMPT,
    DEFAULT_VERIFY_PROMPT,
    decompose_prompt_render,
    verify_prompt_render,
)

logger = logging.getLogger(__name__)

# Words the endpoint may answer, and the verdict each one is stored as.
ANSWER_WORDS = {
    "SUPPORTED": "SUPPORTED",
    "CONTRADICTED": "CONTRADICTED",
    "NOT_MENTIONED": "NOT_IN_PILE",
    "NOT_IN_PILE": "NOT_IN_PILE",
}
_TOKEN_WORDS = ("SUPPORTED", "CONTRADICTED", "NOT_MENTIONED")
_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s*")
MAX_RETRY_AFTER_S = 300.0


def verdict_parse(text: str) -> str | None:
    """The verdict in a reply of exactly one verdict word (case, quotes, a full stop tolerated)."""
    cleaned = _THINK.sub("", text or "").strip().strip(" \t\r\n.!*`'\"").upper()
    return ANSWER_WORDS.get(re.sub(r"\s+", "_", cleaned))


def verdict_for_token(token: str) -> str | None:
    """Which verdict word a (possibly partial) first token starts: "SUP", " Supported", "NOT"."""
    t = token.strip().strip("\"'*`").upper()
    if len(t) < 2:
        return None
    for word in _TOKEN_WORDS:
        if word.startswith(t) or t.startswith(word):
            return ANSWER_WORDS[word]
    return None


def confidence_from_logprobs(choice) -> float | None:
    """P(SUPPORTED) from the first verdict token's top_logprobs, renormalised over the three
    verdicts. None when the endpoint sent no logprobs or none of them names a verdict."""
    logprobs = getattr(choice, "logprobs", None)
    content = getattr(logprobs, "content", None) if logprobs is not None else None
    if not content:
        return None
    first = next((tok for tok in content if (tok.token or "").strip()), None)
    if first is None:
        return None
    candidates = {t.token: t.logprob for t in (first.top_logprobs or [])}
    candidates.setdefault(first.token, first.logprob)
    mass = {"SUPPORTED": 0.0, "CONTRADICTED": 0.0, "NOT_IN_PILE": 0.0}
    for token, logprob in candidates.items():
        verdict = verdict_for_token(token)
        if verdict is not None and logprob is not None:
            mass[verdict] += math.exp(logprob)
    total = sum(mass.values())
    if total <= 0:
        return None
    return min(1.0, max(0.0, mass["SUPPORTED"] / total))


def retry_after_seconds(headers) -> float | None:
    """Seconds the endpoint asked us to wait, from retry-after-ms or Retry-After."""
    if headers is None:
        return None
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return float(millis) / 1000.0
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(value) if value else None
        if parsed is None:
            return None
        return max(0.0, parsed.timestamp() - time.time())


@dataclass(frozen=True)
class OpenAISpec:
    model: str
    base_url: str
    api_key_env: str = ""
    temperature: float = 0.0
    timeout_seconds: float = 30.0
    max_retries: int = 5
    verify_prompt: str = DEFAULT_VERIFY_PROMPT
    decompose_prompt: str = DEFAULT_DECOMPOSE_PROMPT
    max_tokens: int = 8
    top_logprobs: int = 5
    backoff_base_s: float = 0.5
    backoff_cap_s: float = 30.0


class OpenAIBackend:
    name = "openai"

    def __init__(self, spec: OpenAISpec):
        self.spec = spec
        self._key = self._api_key()
        self._logprobs = True
        self._local = threading.local()

    @property
    def client(self) -> OpenAI:
        """One client (one HTTP connection pool) per thread of the run's pool.

        A single client shared by `max_concurrency` threads spent ~40% of a run waiting on
        its connection pool's lock (py-spy, bench/RESULTS.md); per-thread clients never
        contend, and each keeps its connection alive across calls.
        """
        client = getattr(self._local, "client", None)
        if client is None:
            client = OpenAI(
                base_url=self.spec.base_url or None,
                api_key=self._key or "not-needed",
                timeout=self.spec.timeout_seconds,
                max_retries=0,
            )
            self._local.client = client
        return client

    def _api_key(self) -> str:
        env = self.spec.api_key_env
        if not env:
            return ""  # local servers (vLLM, Ollama, llama.cpp) usually need none
        key = os.environ.get(env)
        if not key:
            raise JudgeConfigError(
                f"the environment variable {env} (the judge's API key variable) is not set "
                "where the worker runs"
            )
        return key

    @property
    def prompt_text(self) -> str:
        return self.spec.verify_prompt

    def _scrub(self, message: str) -> str:
        if self._key:
            message = message.replace(self._key, "***")
        message = re.sub(r"sk-[A-Za-z0-9_\-*]{4,}", "sk-***", message)
        return message[:300]

    def _describe(self, exc: Exception) -> str:
        status = getattr(exc, "status_code", None)
        head = f"HTTP {status}" if status else type(exc).__name__
        return self._scrub(f"{head}: {getattr(exc, 'message', None) or exc}")

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            # Never earlier than asked; a little jitter after it so workers do not stampede.
            return min(retry_after, MAX_RETRY_AFTER_S) + random.uniform(0, 0.1)
        ceiling = min(self.spec.backoff_cap_s, self.spec.backoff_base_s * 2**attempt)
        return random.uniform(ceiling / 2, ceiling)

    def _create(self, prompt: str, *, max_tokens: int, logprobs: bool):
        """One chat completion with bounded retries; returns (response, latency_ms)."""
        attempt = 0
        while True:
            retry_after = None
            started = time.perf_counter()
            try:
                kwargs = {
                    "model": self.spec.model,
                    "messages": [{"role": "user", "content": prompt}],
                    "temperature": self.spec.temperature,
                    "max_tokens": max_tokens,
                }
                if logprobs:
                    kwargs.update(logprobs=True, top_logprobs=self.spec.top_logprobs)
                response = self.client.chat.completions.create(**kwargs)
                return response, (time.perf_counter() - started) * 1000.0
            except (openai.AuthenticationError, openai.PermissionDeniedError) as exc:
                raise JudgeConfigError(
                    f"the endpoint refused the key: {self._describe(exc)}"
                ) from None
            except openai.NotFoundError as exc:
                raise JudgeConfigError(
                    f"the endpoint has no such model or path: {self._describe(exc)}"
                ) from None
            except (openai.APITimeoutError, openai.APIConnectionError) as exc:
                error = exc
            except openai.APIStatusError as exc:
                if exc.status_code != 429 and exc.status_code < 500 and exc.status_code != 408:
                    raise JudgeCallFailed(self._describe(exc)) from None
                error = exc
                retry_after = retry_after_seconds(exc.response.headers)
            if attempt >= self.spec.max_retries:
                raise JudgeCallFailed(
                    f"gave up after {attempt + 1} attempts: {self._describe(error)}"
                ) from None
            delay = self._backoff(attempt, retry_after)
            logger.info(
                "judge endpoint: %s; retry %d/%d in %.2f s",
                self._describe(error),
                attempt + 1,
                self.spec.max_retries,
                delay,
            )
            time.sleep(delay)
            attempt += 1

    def verify(self, claim_text: str, passages) -> VerifyResult:
        prompt = verify_prompt_render(self.spec.verify_prompt, claim=claim_text, passages=passages)
        try:
            response, latency_ms = self._create(
                prompt, max_tokens=self.spec.max_tokens, logprobs=self._logprobs
            )
        except JudgeCallFailed as exc:
            # Some servers refuse logprobs outright (HTTP 400): judge without them, and leave
            # the confidence empty rather than fail every claim.
            if not (self._logprobs and "HTTP 400" in str(exc) and "logprob" in str(exc).lower()):
                raise
            self._logprobs = False
            logger.warning("judge endpoint refuses logprobs; confidences will be empty")
            response, latency_ms = self._create(
                prompt, max_tokens=self.spec.max_tokens, logprobs=False
            )
        choice = response.choices[0] if response.choices else None
        raw = (choice.message.content or "") if choice is not None else ""
        usage = getattr(response, "usage", None)
        prompt_tokens = getattr(usage, "prompt_tokens", 0) or 0
        completion_tokens = getattr(usage, "completion_tokens", 0) or 0
        verdict = verdict_parse(raw)
        if verdict is None:
            return VerifyResult(
                "UNPARSEABLE", None, raw, latency_ms, prompt_tokens, completion_tokens
            )
        return VerifyResult(
            verdict,
            confidence_from_logprobs(choice),
            raw,
            latency_ms,
            prompt_tokens,
            completion_tokens,
        )

    def decompose(self, answer_text: str) -> list[str]:
        prompt = decompose_prompt_render(self.spec.decompose_prompt, answer=answer_text)
        response, _ = self._create(prompt, max_tokens=1024, logprobs=False)
        text = _THINK.sub("", response.choices[0].message.content or "")
        claims = []
        for line in text.splitlines():
            claim = _BULLET.sub("", line).strip()
            if claim:
                claims.append(claim)
        return claims
