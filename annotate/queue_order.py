"""The labelling queue's seeded random order, fixed when a claim is created.

A claim's place is a hash of the project's seed and the claim's identity, so the order is
reproducible, independent of import order and database ids, and the claims labelled first are
a simple random sample of the project (what the judge audit needs to carry over).
"""

import hashlib

QUEUE_KEY_BITS = 62


def claim_queue_key(*, seed: int, answer_external_id: str, position: int, text: str) -> int:
    digest = hashlib.blake2b(
        f"{seed}\x1f{answer_external_id}\x1f{position}\x1f{text}".encode(), digest_size=8
    ).digest()
    return int.from_bytes(digest, "big") >> (64 - QUEUE_KEY_BITS)


ANSWER_POSITION_BITS = 12  # an answer's claims in order: up to 4,096 claims an answer


def answer_queue_key(*, seed: int, answer_external_id: str, position: int) -> int:
    """A claim's place when the queue serves an answer at a time: a seeded random order of
    the answers (high bits: a hash of the seed and the answer alone, so every answer, short
    or long, is equally likely to come next), then the answer's claims by position."""
    digest = hashlib.blake2b(f"{seed}\x1f{answer_external_id}".encode(), digest_size=8).digest()
    answer_bits = int.from_bytes(digest, "big") >> (64 - QUEUE_KEY_BITS + ANSWER_POSITION_BITS)
    return (answer_bits << ANSWER_POSITION_BITS) | min(position, 2**ANSWER_POSITION_BITS - 1)


def claim_queue_fields(
    *,
    seed: int,
    answer_external_id: str,
    position: int,
    text: str,
    by_answer: bool,
    analysts_per_claim: int,
    double_share: float,
) -> tuple[int, int]:
    """A new claim's `queue_key` and `labels_required`. Which claims are double-labelled
    follows the claim's own hash whatever the queue's order, so the setting changes the order
    claims are served in and nothing else."""
    claim_key = claim_queue_key(
        seed=seed, answer_external_id=answer_external_id, position=position, text=text
    )
    required = claim_labels_required(
        analysts_per_claim=analysts_per_claim, double_share=double_share, queue_key=claim_key
    )
    if by_answer:
        return (
            answer_queue_key(seed=seed, answer_external_id=answer_external_id, position=position),
            required,
        )
    return claim_key, required


def claim_labels_required(*, analysts_per_claim: int, double_share: float, queue_key: int) -> int:
    """analysts_per_claim, plus one for the seeded `double_share` of claims (overlap for IAA).

    Uses the low bits of the queue key, so which claims are double-labelled is itself a random
    sample, independent of where they fall in the queue.
    """
    fraction = (queue_key & 0xFFFFF) / 0x100000
    return analysts_per_claim + (1 if fraction < double_share else 0)
