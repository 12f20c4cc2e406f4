"""The analysts' pairwise queue for two systems: which pairs exist, the order they are served in,
and which system's answer an analyst sees on the left.

A pair is one question key (an answer's `question_id`, else its question text) that both
systems answered; when a system answered a question twice, its first answer (lowest id) is the
one shown — the rule of the pairwise judge (`judges.pairwise_runner.shared_pairs`), so a human
preference and the judge's verdicts on a question are about the same two answers.

Both draws are hashes, not a random generator: the pair order of a project (its `queue_seed`
and the key) is the same for every analyst, so colleagues' marks overlap on the first pairs;
the left side is drawn per analyst and pair, so it is random across analysts and pairs but the
same on every reload. Nothing here reads the database.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass


@dataclass(frozen=True)
class Pair:
    """One question key of two systems: `answer_1` of the system with the lower id."""

    key: str
    answer_1: int
    answer_2: int

    @property
    def token(self) -> str:
        """The pair in a form field: the two answer ids, in the systems' (not the sides') order."""
        return f"{self.answer_1}-{self.answer_2}"


def question_key(question_id: str, question: str) -> str:
    return question_id or question


def _digest(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8")).digest()


def pair_order_key(*, seed: int, key: str) -> bytes:
    """Sort key of a pair in the queue: a hash of the project's queue seed and the question."""
    return _digest(f"pairwise-order:{seed}:{key}")


def first_system_on_left(*, analyst_id: int, answer_1_id: int, answer_2_id: int) -> bool:
    """Whether system_1's answer is on the left for this analyst and pair: one bit of a hash
    of the three ids (a fair coin per analyst and pair, the same on every reload)."""
    return _digest(f"pairwise-left:{analyst_id}:{answer_1_id}:{answer_2_id}")[0] & 1 == 1


def parse_token(token: str) -> tuple[int, int] | None:
    """The two answer ids of `Pair.token`, or None when it is not one."""
    first, sep, second = (token or "").partition("-")
    # isascii: "²".isdigit() is true, int("²") raises; 19 digits: ids are 64-bit.
    if not sep or not all(p.isascii() and p.isdigit() and len(p) < 19 for p in (first, second)):
        return None
    return int(first), int(second)
