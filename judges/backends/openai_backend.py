"""Any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, Ollama, llama.cpp, LM Studio).

One claim per call, to an endpoint the operator declared (judges/endpoints.py): its URL and
the NAME of its key variable come from the settings at call time, never from the judge or a
stored run. The key is read from this process's environment and goes nowhere but the
Authorization header: not the database, not a log line, not an error message.

Outbound calls are constrained: redirects are not followed (a 3xx is a failed call), the
timeout and retries are the judge's but never above the endpoint's caps, and an error reply is
summarised as its status, the status's phrase and a short error code from the body
(`summary`), never echoed: the body of an endpoint's error is not ours to show.

Retries are ours, not the client's (`max_retries=0`): exponential backoff with jitter on 429,
5xx, timeouts and dropped connections, honouring Retry-After (seconds, an HTTP date, or
`retry-after-ms`), bounded by `max_retries`. 401/403/404 fail the whole run at once: every
other claim would fail the same way.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import functools
import json
import logging
import math
import random
import re
import threading
import time
from dataclasses import dataclass
from http import HTTPStatus
from types import SimpleNamespace

import httpx2
import openai
from openai import AsyncOpenAI, OpenAI

from annotate.vocabulary import UNPARSEABLE, VERDICTS, Verdict
from judges.backends.base import JudgeCallFailed, JudgeConfigError, VerifyResult
from judges.backends.registry import Declared, register
from judges.endpoints import Endpoint, EndpointNotDeclared, endpoint_get, url_check
from judges.prompts import (
    DEFAULT_DECOMPOSE_PROMPT,
    DEFAULT_PAIRWISE_PROMPT,
    DEFAULT_VERIFY_PROMPT,
    decompose_prompt_render,
    pairwise_prompt_render,
    verify_prompt_render,
)

logger = logging.getLogger(__name__)

# Words the endpoint may answer, and the verdict each one is stored as.
# The prompt asks for NOT_MENTIONED (a plainer word for a model than NOT_IN_PILE).
ANSWER_WORDS = {verdict.value: verdict for verdict in VERDICTS} | {
    "NOT_MENTIONED": Verdict.NOT_IN_PILE
}
_TOKEN_WORDS = (Verdict.SUPPORTED.value, Verdict.CONTRADICTED.value, "NOT_MENTIONED")
_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s*")
MAX_RETRY_AFTER_S = 120.0
MAX_BACKOFF_S = 60.0
_PATH = "/chat/completions"
_CODE = re.compile(r"^[A-Za-z][A-Za-z0-9_.\-]{0,39}$")


def summary(exc: Exception) -> str:
    """What may be stored, logged and shown of a failed call: the HTTP status and its phrase,
    with the error's short code or type from the body when it is a plain identifier
    ("invalid_api_key"); never the body's message, which may quote anything (the key, an
    internal page)."""
    status = getattr(exc, "status_code", None)
    if isinstance(exc, openai.APITimeoutError):
        return "timed out"
    if isinstance(exc, openai.APIConnectionError):
        return "could not connect to the endpoint"
    if not status:
        return type(exc).__name__
    try:
        text = f"HTTP {status} {HTTPStatus(status).phrase}"
    except ValueError:
        text = f"HTTP {status}"
    if 300 <= status < 400:
        return f"{text} (redirects are not followed)"
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        for field in ("code", "type"):
            code = body.get(field)
            if isinstance(code, str) and _CODE.match(code):
                return f"{text} ({code})"
    return text


def verdict_parse(text: str) -> str | None:
    """The verdict in a reply of exactly one verdict word (case, quotes, a full stop tolerated)."""
    cleaned = _THINK.sub("", text or "").strip().strip(" \t\r\n.!*`'\"").upper()
    return ANSWER_WORDS.get(re.sub(r"\s+", "_", cleaned))


# Words a pairwise reply may be (judges/pairwise_runner.py), and the verdict each is stored as.
PAIRWISE_WORDS = {"FIRST": "first", "SECOND": "second", "TIE": "tie"}


def pairwise_parse(text: str) -> tuple[str, str]:
    """(verdict, reason) of a pairwise reply: "first", "second" or "tie" for a reply of exactly
    one of FIRST / SECOND / TIE (case, quotes, a full stop, a <think> block tolerated), else
    ("UNPARSEABLE", why)."""
    cleaned = _THINK.sub("", text or "").strip().strip(" \t\r\n.!*`'\"").upper()
    if not cleaned:
        return UNPARSEABLE, "empty reply"
    verdict = PAIRWISE_WORDS.get(cleaned)
    if verdict is not None:
        return verdict, ""
    return UNPARSEABLE, "the reply is not one of FIRST, SECOND or TIE"


@dataclass(frozen=True)
class PairwiseResult:
    """One pairwise verdict: "first", "second", "tie" or "UNPARSEABLE" (with `reason`)."""

    verdict: str
    reason: str
    raw: str
    latency_ms: float
    prompt_tokens: int = 0
    completion_tokens: int = 0


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
    mass = dict.fromkeys(VERDICTS, 0.0)
    for token, logprob in candidates.items():
        verdict = verdict_for_token(token)
        if verdict is not None and logprob is not None:
            mass[verdict] += math.exp(logprob)
    total = sum(mass.values())
    if total <= 0:
        return None
    return min(1.0, max(0.0, mass[Verdict.SUPPORTED] / total))


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


class LogprobsRefused(JudgeCallFailed):
    """The endpoint answered 400 to a request asking for logprobs, saying why."""


@dataclass(frozen=True)
class OpenAISpec:
    """What a judge (or a run) may ask for. The endpoint is a NAME; where it points and its
    key variable are resolved from the operator's declaration (`backend_for_spec`)."""

    model: str
    endpoint: str = ""
    temperature: float = 0.0
    timeout_seconds: float = 30.0
    max_retries: int = 5
    verify_prompt: str = DEFAULT_VERIFY_PROMPT
    decompose_prompt: str = DEFAULT_DECOMPOSE_PROMPT
    pairwise_prompt: str = DEFAULT_PAIRWISE_PROMPT
    max_tokens: int = 8
    top_logprobs: int = 5
    backoff_base_s: float = 0.5
    backoff_cap_s: float = 30.0


class _Field(SimpleNamespace):
    """An object of the endpoint's JSON reply, read as attributes like the client's own
    models; a key the reply leaves out reads as None, as it does on those models."""

    def __getattr__(self, name: str):
        if name.startswith("__"):  # protocols (copy, pickle, ...) are not reply fields
            raise AttributeError(name)
        return None


def _reply(response) -> _Field:
    """The chat completion in an HTTP response, read with the json module: building the
    client's pydantic `ChatCompletion` (every logprob a model) was a quarter of the async
    client's CPU per call (py-spy, bench/RESULTS.md)."""
    try:
        reply = json.loads(response.content, object_hook=lambda fields: _Field(**fields))
    except ValueError:
        raise JudgeCallFailed(
            f"the endpoint's reply is not JSON (HTTP {response.status_code})"
        ) from None
    if not isinstance(reply, _Field):
        raise JudgeCallFailed("the endpoint's reply is not a JSON object")
    return reply


@functools.cache
def _tls_context():
    """The TLS context every client of this process shares: building one loads the system's
    CA bundle (~65 ms of CPU), which a client per run (or per thread) would pay again."""
    return httpx2.create_ssl_context()


def _async_http_client():
    """The async client's HTTP layer: the client's own aiohttp transport when its `aiohttp`
    extra is installed (it is in requirements.lock), else its default httpx pool. Measured
    on the bench's loopback endpoint, aiohttp took about a quarter less CPU per call, and
    CPU per call is what bounds a worker's calls per second."""
    try:
        return openai.DefaultAioHttpClient(verify=_tls_context(), follow_redirects=False)
    except (AttributeError, RuntimeError):  # an older client, or the extra not installed
        return openai.DefaultAsyncHttpxClient(verify=_tls_context(), follow_redirects=False)


def preload() -> None:
    """Warm up what the first call of a process would otherwise do lazily: import the
    client's chat resources and its async backend, load the CA bundle, work out the platform
    headers. About a second of CPU, paid once when a worker starts instead of inside its first
    judge run (judges/tasks.py calls this from `worker_init`). The warm-up call goes to a
    closed local port and fails at once; nothing leaves the machine."""

    async def warm_up() -> None:
        client = AsyncOpenAI(
            api_key="preload",
            base_url="http://127.0.0.1:9/v1",
            max_retries=0,
            timeout=1.0,
            http_client=_async_http_client(),
        )
        with contextlib.suppress(openai.APIError):
            await client.chat.completions.create(
                model="preload", messages=[{"role": "user", "content": "-"}], max_tokens=1
            )
        await client.close()

    asyncio.run(warm_up())


def declared_endpoint(spec: dict) -> Endpoint:
    """The endpoint a spec names, looked up in the operator's declaration at call time."""
    try:
        return endpoint_get(spec.get("endpoint") or "")
    except EndpointNotDeclared as exc:
        raise JudgeConfigError(str(exc)) from None


@register
class OpenAIBackend(Declared):
    """Verify calls go through `averify` on an `AsyncOpenAI` client when the runner drives an
    event loop (judges/runner.py: `max_concurrency` calls in flight from one thread), or
    through `verify` on a per-thread `OpenAI` client; both share the request, the retry
    policy and the reading of the reply."""

    name = "openai"
    label = "OpenAI-compatible endpoint"
    position = 1
    needs_endpoint = True
    verify_prompt_needs_claim = True
    can_pairwise = True
    can_split = True

    @classmethod
    def from_spec(cls, spec: dict) -> OpenAIBackend:
        fields = OpenAISpec.__dataclass_fields__
        return cls(
            OpenAISpec(**{k: v for k, v in spec.items() if k in fields and v is not None}),
            declared_endpoint(spec),
        )

    def __init__(self, spec: OpenAISpec, endpoint: Endpoint):
        try:
            self.base_url = url_check(endpoint.base_url)  # again, at call time
        except ValueError as exc:
            raise JudgeConfigError(f"endpoint {endpoint.name!r}: {exc}") from None
        if endpoint.models and spec.model not in endpoint.models:
            raise JudgeConfigError(
                f"model {spec.model!r} is not offered by endpoint {endpoint.name!r} "
                f"(models: {', '.join(endpoint.models)})"
            )
        self.endpoint = endpoint
        self.spec = spec
        # The judge may ask for less than the operator's caps, never more.
        self.timeout_seconds = min(float(spec.timeout_seconds), endpoint.timeout_seconds)
        self.max_retries = max(0, min(int(spec.max_retries), endpoint.max_retries))
        self.backoff_cap_s = min(float(spec.backoff_cap_s), MAX_BACKOFF_S)
        self._key = self._api_key()
        self._logprobs = True
        self._local = threading.local()
        self._aclient: AsyncOpenAI | None = None

    @property
    def client(self) -> OpenAI:
        """One client (one HTTP connection pool) per thread.

        A single client shared by `max_concurrency` threads spent ~40% of a run waiting on
        its connection pool's lock (py-spy, bench/RESULTS.md); per-thread clients never
        contend, and each keeps its connection alive across calls.
        """
        client = getattr(self._local, "client", None)
        if client is None:
            http = openai.DefaultHttpxClient(verify=_tls_context(), follow_redirects=False)
            client = OpenAI(http_client=http, **self._client_options())
            self._local.client = client
        return client

    @property
    def aclient(self) -> AsyncOpenAI:
        """The async client: one connection pool serving every call in flight. Use it from
        one event loop only (its connections belong to that loop)."""
        if self._aclient is None:
            http = _async_http_client()
            self._aclient = AsyncOpenAI(http_client=http, **self._client_options())
        return self._aclient

    async def aclose(self) -> None:
        """Close the async client's connections; call on the loop that used it."""
        if self._aclient is not None:
            client, self._aclient = self._aclient, None
            await client.close()

    def _client_options(self) -> dict:
        return {
            "base_url": self.base_url,
            "api_key": self._key or "not-needed",
            "timeout": self.timeout_seconds,
            "max_retries": 0,
        }

    def _api_key(self) -> str:
        key = self.endpoint.api_key()  # "" for local servers (vLLM, Ollama) that need none
        if key is None:
            raise JudgeConfigError(
                f"the API key of endpoint {self.endpoint.name!r} is not set in the "
                "environment of the process making the call (see its api_key_env)"
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
        return self._scrub(summary(exc))

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            # Never earlier than asked; a little jitter after it so workers do not stampede.
            return min(retry_after, MAX_RETRY_AFTER_S) + random.uniform(0, 0.1)
        ceiling = min(self.backoff_cap_s, self.spec.backoff_base_s * 2**attempt)
        return random.uniform(ceiling / 2, ceiling)

    def _request(self, prompt: str, *, max_tokens: int, logprobs: bool) -> dict:
        """The chat-completions request body. It is sent with the client's generic `post`
        (its documented way to send a prepared body) rather than `chat.completions.create`,
        whose per-call walk of the request's type annotations was a fifth of the client's CPU
        per call (py-spy, bench/RESULTS.md) and changes nothing in a body of plain strings and
        numbers. Same endpoint, headers and errors; the reply is read by `_reply`."""
        kwargs = {
            "model": self.spec.model,
            "messages": [{"role": "user", "content": prompt}],
            "temperature": self.spec.temperature,
            "max_tokens": max_tokens,
        }
        if logprobs:
            kwargs.update(logprobs=True, top_logprobs=self.spec.top_logprobs)
        return kwargs

    def _retry_delay(self, exc: Exception, attempt: int) -> float:
        """Seconds to wait before retrying after `exc`, or raise: JudgeConfigError when no
        claim of the run can succeed, JudgeCallFailed when this one cannot (a client error,
        or the retries are spent). Raised `from None`: the client's exception may quote the
        key (an endpoint echoing it in a 401), and only the scrubbed message may travel."""
        retry_after = None
        if isinstance(exc, (openai.AuthenticationError, openai.PermissionDeniedError)):
            raise JudgeConfigError(f"the endpoint refused the key: {self._describe(exc)}") from None
        if isinstance(exc, openai.NotFoundError):
            raise JudgeConfigError(
                f"the endpoint has no such model or path: {self._describe(exc)}"
            ) from None
        if isinstance(exc, openai.APIStatusError):
            if exc.status_code == 400 and "logprob" in str(exc.message).lower():
                # Read, not repeated: the reply's text only tells us to stop asking.
                raise LogprobsRefused(self._describe(exc)) from None
            if exc.status_code != 429 and exc.status_code < 500 and exc.status_code != 408:
                raise JudgeCallFailed(self._describe(exc)) from None
            retry_after = retry_after_seconds(exc.response.headers)
        if attempt >= self.max_retries:
            tries = f"{attempt + 1} attempt{'s' if attempt else ''}"
            raise JudgeCallFailed(f"gave up after {tries}: {self._describe(exc)}") from None
        delay = self._backoff(attempt, retry_after)
        logger.info(
            "judge endpoint: %s; retry %d/%d in %.2f s",
            self._describe(exc),
            attempt + 1,
            self.max_retries,
            delay,
        )
        return delay

    def _create(self, prompt: str, *, max_tokens: int, logprobs: bool):
        """One chat completion with bounded retries; returns (response, latency_ms)."""
        return self._post(self._request(prompt, max_tokens=max_tokens, logprobs=logprobs))

    async def _acreate(self, prompt: str, *, max_tokens: int, logprobs: bool):
        """`_create` on the async client: the same request, retries and errors."""
        body = self._request(prompt, max_tokens=max_tokens, logprobs=logprobs)
        return await self._apost(body)

    def _post(self, body: dict, path: str = _PATH):
        """POST `body` to `path` of the endpoint with bounded retries; returns (reply,
        latency_ms). Every call of every backend on a declared endpoint goes through here
        (or `_apost`): one client, one retry policy, one way of reading errors."""
        attempt = 0
        while True:
            started = time.perf_counter()
            try:
                response = self.client.post(path, cast_to=httpx2.Response, body=body)
                return _reply(response), (time.perf_counter() - started) * 1000.0
            except (openai.APIStatusError, openai.APIConnectionError) as exc:
                delay = self._retry_delay(exc, attempt)  # raises when it is over
            time.sleep(delay)
            attempt += 1

    async def _apost(self, body: dict, path: str = _PATH):
        """`_post` on the async client."""
        attempt = 0
        while True:
            started = time.perf_counter()
            try:
                response = await self.aclient.post(path, cast_to=httpx2.Response, body=body)
                return _reply(response), (time.perf_counter() - started) * 1000.0
            except (openai.APIStatusError, openai.APIConnectionError) as exc:
                delay = self._retry_delay(exc, attempt)
            await asyncio.sleep(delay)
            attempt += 1

    def _refuses_logprobs(self, exc: JudgeCallFailed) -> bool:
        """Some servers refuse logprobs outright (HTTP 400): judge without them from then on,
        and leave the confidence empty rather than fail every claim."""
        if not (self._logprobs and isinstance(exc, LogprobsRefused)):
            return False
        self._logprobs = False
        logger.warning("judge endpoint refuses logprobs; confidences will be empty")
        return True

    def verify(self, claim_text: str, passages) -> VerifyResult:
        prompt = verify_prompt_render(self.spec.verify_prompt, claim=claim_text, passages=passages)
        max_tokens = self.spec.max_tokens
        try:
            reply = self._create(prompt, max_tokens=max_tokens, logprobs=self._logprobs)
        except JudgeCallFailed as exc:
            if not self._refuses_logprobs(exc):
                raise
            reply = self._create(prompt, max_tokens=max_tokens, logprobs=False)
        return self._result(*reply)

    async def averify(self, claim_text: str, passages) -> VerifyResult:
        """`verify` on the async client, for a runner with an event loop."""
        prompt = verify_prompt_render(self.spec.verify_prompt, claim=claim_text, passages=passages)
        max_tokens = self.spec.max_tokens
        try:
            reply = await self._acreate(prompt, max_tokens=max_tokens, logprobs=self._logprobs)
        except JudgeCallFailed as exc:
            if not self._refuses_logprobs(exc):
                raise
            reply = await self._acreate(prompt, max_tokens=max_tokens, logprobs=False)
        return self._result(*reply)

    @staticmethod
    def _result(response, latency_ms: float) -> VerifyResult:
        choice = response.choices[0] if response.choices else None
        raw = (choice.message.content or "") if choice is not None else ""
        usage = getattr(response, "usage", None)
        prompt_tokens = getattr(usage, "prompt_tokens", 0) or 0
        completion_tokens = getattr(usage, "completion_tokens", 0) or 0
        verdict = verdict_parse(raw)
        if verdict is None:
            return VerifyResult(
                UNPARSEABLE, None, raw, latency_ms, prompt_tokens, completion_tokens
            )
        return VerifyResult(
            verdict,
            confidence_from_logprobs(choice),
            raw,
            latency_ms,
            prompt_tokens,
            completion_tokens,
        )

    def pairwise(
        self, *, question: str, answer_1: str, pile_1, answer_2: str, pile_2
    ) -> PairwiseResult:
        """Which of two answers is more faithful to its own pile, through the same request,
        caps, retries and errors as `verify` (no logprobs asked for)."""
        prompt = pairwise_prompt_render(
            self.spec.pairwise_prompt,
            question=question,
            answer_1=answer_1,
            pile_1=pile_1,
            answer_2=answer_2,
            pile_2=pile_2,
        )
        response, latency_ms = self._create(prompt, max_tokens=self.spec.max_tokens, logprobs=False)
        choice = response.choices[0] if response.choices else None
        raw = (choice.message.content or "") if choice is not None else ""
        usage = getattr(response, "usage", None)
        verdict, reason = pairwise_parse(raw)
        return PairwiseResult(
            verdict,
            reason,
            raw,
            latency_ms,
            getattr(usage, "prompt_tokens", 0) or 0,
            getattr(usage, "completion_tokens", 0) or 0,
        )

    def chat(self, prompt: str, *, max_tokens: int) -> tuple[str, int, int]:
        """One chat completion of `prompt` without logprobs, through the same request, caps,
        retries and errors as `verify`: (reply text, prompt tokens, completion tokens). For
        callers that are not judging a claim (testsets' LLM generator)."""
        response, _ = self._create(prompt, max_tokens=max_tokens, logprobs=False)
        choice = response.choices[0] if response.choices else None
        raw = (choice.message.content or "") if choice is not None else ""
        usage = getattr(response, "usage", None)
        return (
            _THINK.sub("", raw),
            getattr(usage, "prompt_tokens", 0) or 0,
            getattr(usage, "completion_tokens", 0) or 0,
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
