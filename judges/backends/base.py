"""The one small interface every judge backend implements."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class VerifyResult:
    """One verdict on one claim.

    `verdict` is SUPPORTED, CONTRADICTED, NOT_IN_PILE or UNPARSEABLE (then `raw` holds what the
    backend said). `confidence` is P(SUPPORTED) in [0, 1], or None when the backend gives no
    probability (never invented).
    """

    verdict: str
    confidence: float | None
    raw: str
    latency_ms: float
    prompt_tokens: int = 0
    completion_tokens: int = 0
    # Further JudgeVerdict columns a backend fills (grounding bits: `bits`, both log2 p, the
    # token counts and per-token bits); None for the others.
    extra: dict | None = None


class JudgeCallFailed(Exception):
    """A claim could not be judged: retries exhausted, or the endpoint refused the request.

    Its message is safe to store and show: it never contains the API key.
    """


class JudgeConfigError(Exception):
    """The judge cannot run at all (missing API key variable, unknown backend): fail the run."""


class JudgeBackend(Protocol):
    name: str

    def verify(self, claim_text: str, passages) -> VerifyResult:
        """Judge one claim against `passages` (objects with .text and .title, in pile order)."""
        ...

    def decompose(self, answer_text: str) -> list[str]:
        """Split an answer into atomic claims."""
        ...

    @property
    def prompt_text(self) -> str:
        """The exact instrument text whose hash is the run's prompt version."""
        ...
