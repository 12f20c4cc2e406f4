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


# The active design (Ohlsson's sequential Poisson sampling): a claim's uniform number u comes
# from its seeded hash, the queue serves claims in ascending u/π. The key is u/π in fixed point.
ACTIVE_PI_MIN = 2.0**-20  # π below this is served as if it were this (keys stay in 63 bits)
ACTIVE_CLAIM_FRACTION_BITS = 42  # u/π ≤ 2^20, so u/π · 2^42 < 2^62
ACTIVE_ANSWER_FRACTION_BITS = 30  # answer bits: 62 − 12 position bits = 50 = 20 + 30


def claim_uniform(claim_key: int) -> float:
    """The claim's u in (0, 1): the high 42 bits of its 62-bit claim hash, plus half a step
    (never 0). The low 20 bits, which decide double-labelling (`claim_labels_required`), are
    not used, so which claims are double-labelled stays independent of u."""
    return ((claim_key >> 20) + 0.5) / 2.0**42


def answer_uniform(*, seed: int, answer_external_id: str) -> float:
    """The answer's u in (0, 1): the high bits of `answer_queue_key`'s answer hash."""
    key = answer_queue_key(seed=seed, answer_external_id=answer_external_id, position=0)
    return ((key >> ANSWER_POSITION_BITS) + 0.5) / 2.0 ** (QUEUE_KEY_BITS - ANSWER_POSITION_BITS)


def _ratio_fixed(u: float, pi: float, bits: int) -> int:
    pi = min(1.0, max(float(pi), ACTIVE_PI_MIN))
    return min(int(u / pi * 2.0**bits), 2 ** (bits + 20) - 1)


def active_claim_queue_key(*, claim_key: int, pi: float) -> int:
    """A claim's queue key under the active design, a claim at a time: u/π in fixed point
    (u from `claim_uniform`), so the queue's ascending order is Ohlsson's sequential Poisson
    order and the first n claims served are drawn with probability ≈ n·π_i/Σπ."""
    return _ratio_fixed(claim_uniform(claim_key), pi, ACTIVE_CLAIM_FRACTION_BITS)


def active_answer_queue_key(*, seed: int, answer_external_id: str, position: int, pi: float) -> int:
    """A claim's queue key under the active design, an answer at a time: the answer's u/π
    (every claim of the answer shares its π) in the high bits, then the claim's position, so
    the answer's claims are still served in reading order."""
    u = answer_uniform(seed=seed, answer_external_id=answer_external_id)
    ratio = _ratio_fixed(u, pi, ACTIVE_ANSWER_FRACTION_BITS)
    return (ratio << ANSWER_POSITION_BITS) | min(position, 2**ANSWER_POSITION_BITS - 1)
