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

Blind: a pair travels in the page (its form field, the undo's link) as `pair_token`, a keyed
hash of the analyst and the two answers, never as their ids (an answer's id opens its page);
the side drawn is keyed too, so nobody without the server's key can work out, from answers'
ids found elsewhere, which system's answer is on which side.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from django.utils.crypto import constant_time_compare, salted_hmac


@dataclass(frozen=True)
class Pair:
    """One question key of two systems: `answer_1` of the system with the lower id."""

    key: str
    answer_1: int
    answer_2: int

    def token_for(self, analyst_id: int) -> str:
        """This pair in `analyst_id`'s pages (see `pair_token`)."""
        return pair_token(
            analyst_id=analyst_id, answer_1_id=self.answer_1, answer_2_id=self.answer_2
        )


def question_key(question_id: str, question: str) -> str:
    return question_id or question


def _digest(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8")).digest()


def pair_order_key(*, seed: int, key: str) -> bytes:
    """Sort key of a pair in the queue: a hash of the project's queue seed and the question."""
    return _digest(f"pairwise-order:{seed}:{key}")


def _keyed(purpose: str, *ids: int) -> bytes:
    """HMAC-SHA256 under the SECRET_KEY, separated by `purpose`, of the ids."""
    value = ":".join(str(i) for i in ids)
    return salted_hmac(f"faithaudit.pairwise.{purpose}", value, algorithm="sha256").digest()


def first_system_on_left(*, analyst_id: int, answer_1_id: int, answer_2_id: int) -> bool:
    """Whether system_1's answer is on the left for this analyst and pair: one bit of a keyed
    hash of the three ids (a fair coin per analyst and pair, the same on every reload; a new
    SECRET_KEY redraws the sides of pairs not yet marked: a preference stores its side)."""
    return _keyed("left", analyst_id, answer_1_id, answer_2_id)[0] & 1 == 1


PAIR_TOKEN_LENGTH = 32


def pair_token(*, analyst_id: int, answer_1_id: int, answer_2_id: int) -> str:
    """The pair in `analyst_id`'s form field and links: 128 bits of a keyed hash of the analyst
    and the two answers, in hex. It names neither answer and means nothing to another
    analyst; the server finds the pair by comparing it with its queue's (`pair_find`)."""
    return _keyed("pair", analyst_id, answer_1_id, answer_2_id).hex()[:PAIR_TOKEN_LENGTH]


def pair_find(pairs: list[Pair], *, token: str, analyst_id: int) -> Pair | None:
    """The pair of `pairs` whose token for `analyst_id` is `token`, or None."""
    token = token or ""
    if len(token) != PAIR_TOKEN_LENGTH:
        return None
    for pair in pairs:
        if constant_time_compare(pair.token_for(analyst_id), token):
            return pair
    return None
