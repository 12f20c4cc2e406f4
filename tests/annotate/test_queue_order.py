"""The queue's seeded order key and the double-labelling quota, worked by hand."""

import pytest

from annotate.queue_order import QUEUE_KEY_BITS, claim_labels_required, claim_queue_key


@pytest.mark.parametrize(
    ("low_bits", "required"),
    [
        (0x00000, 2),  # fraction 0: in the double-labelled share
        (0x3FFFF, 2),  # 262143 / 2^20 = 0.24999905 < 0.25
        (0x40000, 1),  # exactly 0.25: not below the share
        (0x80000, 1),  # 0.5
        (0xFFFFF, 1),
    ],
)
def test_claim_labels_required_reads_the_low_20_bits_as_a_fraction(low_bits, required):
    # High bits (the queue position) never matter: only key & 0xFFFFF, over 2^20.
    for high in (0, 1 << 20, 1 << 45):
        assert (
            claim_labels_required(
                analysts_per_claim=1, double_share=0.25, queue_key=high | low_bits
            )
            == required
        )
    assert claim_labels_required(analysts_per_claim=3, double_share=0.0, queue_key=low_bits) == 3


def test_claim_labels_required_doubles_exactly_the_share_of_all_low_bit_values():
    # k / 2^20 < 0.2 for k = 0 … 209715 (0.2 · 2^20 = 209715.2): 209716 of the 2^20 values.
    doubled = sum(
        claim_labels_required(analysts_per_claim=1, double_share=0.2, queue_key=k) == 2
        for k in range(1 << 20)
    )
    assert doubled == 209716


def test_claim_queue_key_uses_all_62_bits():
    keys = [
        claim_queue_key(seed=7, answer_external_id=f"a{i}", position=i, text=f"claim {i}")
        for i in range(64)
    ]
    assert all(0 <= key < 1 << QUEUE_KEY_BITS for key in keys)
    # 64 keys all below 2^61 would happen with probability 2^-64: the top bit is in use.
    assert any(key >= 1 << (QUEUE_KEY_BITS - 1) for key in keys)
    assert len(set(keys)) == 64
