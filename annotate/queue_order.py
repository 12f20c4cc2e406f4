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


def claim_labels_required(*, analysts_per_claim: int, double_share: float, queue_key: int) -> int:
    """analysts_per_claim, plus one for the seeded `double_share` of claims (overlap for IAA).

    Uses the low bits of the queue key, so which claims are double-labelled is itself a random
    sample, independent of where they fall in the queue.
    """
    fraction = (queue_key & 0xFFFFF) / 0x100000
    return analysts_per_claim + (1 if fraction < double_share else 0)
