"""Rule-based claim splitting, abstention detection and tags (pure functions, no database)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from annotate.splitting import (
    abstention_detect,
    align_claims,
    claim_tags,
    sentences,
    split_rule,
)


def _texts(answer: str) -> list[str]:
    return [draft.text for draft in split_rule(answer)]


def _sources(answer: str) -> list[str]:
    return [answer[d.span_start : d.span_end] for d in split_rule(answer)]


def test_split_rule_keeps_abbreviations_decimals_and_money_in_one_sentence():
    answer = "Dr. Smith said the fee rose 12.5% to $4.2 bn in 2023. Refunds take 14 days."
    assert _texts(answer) == [
        "Dr. Smith said the fee rose 12.5% to $4.2 bn in 2023.",
        "Refunds take 14 days.",
    ]


def test_split_rule_splits_coordinated_clauses_and_carries_the_subject():
    answer = "Refunds take 14 days and are issued to the original card."
    drafts = split_rule(answer)
    assert [d.text for d in drafts] == [
        "Refunds take 14 days.",
        "Refunds are issued to the original card.",
    ]
    # Spans point at the source text of each clause, not at the rewritten claim.
    assert _sources(answer) == ["Refunds take 14 days", "are issued to the original card."]


@pytest.mark.parametrize(
    ("answer", "claims"),
    [
        (
            "Items can be returned within 30 days and exchanged within 60 days.",
            ["Items can be returned within 30 days.", "Items can be exchanged within 60 days."],
        ),
        (
            "The fee is $5, and the card is replaced within a week.",
            ["The fee is $5.", "The card is replaced within a week."],
        ),
        (
            "Returns are free; orders over £50 ship free.",
            ["Returns are free.", "Orders over £50 ship free."],
        ),
        (
            "We accept Visa and Mastercard and refunds take fourteen days.",
            ["We accept Visa and Mastercard.", "Refunds take fourteen days."],
        ),
        (
            "Refunds take 14 days, are issued to the card and cost nothing.",
            [
                "Refunds take 14 days.",
                "Refunds are issued to the card.",
                "Refunds cost nothing.",
            ],
        ),
        (
            "Applicants must be at least 18 years old and have lived here for 12 months.",
            [
                "Applicants must be at least 18 years old.",
                "Applicants must have lived here for 12 months.",
            ],
        ),
        (
            "Items must not be opened and be returned within 30 days.",
            ["Items must not be opened.", "Items must be returned within 30 days."],
        ),
        (
            "Contact support and ask for a refund.",
            ["Contact support.", "Ask for a refund."],
        ),
        (
            "The policy does not cover water damage, but claims must be filed within 30 days.",
            ["The policy does not cover water damage.", "Claims must be filed within 30 days."],
        ),
    ],
)
def test_split_rule_splits_independent_clauses(answer, claims):
    assert _texts(answer) == claims


@pytest.mark.parametrize(
    "answer",
    [
        "Fees and charges apply to international orders.",
        "We accept Visa, Mastercard and American Express.",
        "The fee is waived, but only for members.",
        "Premium members get free shipping and priority support.",
    ],
)
def test_split_rule_does_not_split_noun_phrases(answer):
    assert _texts(answer) == [answer]


def test_split_rule_drops_politeness_and_filler():
    answer = (
        "Great question! Sure! Here is what I found: refunds take 14 days. "
        "I hope this helps. Let me know if you need anything else. Would you like more?"
    )
    assert _texts(answer) == ["Refunds take 14 days."]
    assert _sources(answer) == ["refunds take 14 days."]


def test_split_rule_reads_bullet_lists_line_by_line():
    answer = "Here are the rules:\n- Refunds take 14 days.\n- Fees and charges apply.\n"
    assert _texts(answer) == ["Refunds take 14 days.", "Fees and charges apply."]
    assert _sources(answer) == ["Refunds take 14 days.", "Fees and charges apply."]


def test_split_rule_spans_are_code_points_after_emoji_and_non_latin_text():
    answer = "Refunds 💳 take 14 days and are issued to the card. 退款需要14天。 The fee is €5."
    drafts = split_rule(answer)
    for draft in drafts:
        assert draft.span_start is not None
        source = answer[draft.span_start : draft.span_end]
        assert source.strip() == source
        assert source
    assert _sources(answer)[1] == "are issued to the card."
    assert answer[drafts[-1].span_start : drafts[-1].span_end] == "The fee is €5."
    # The emoji is one code point: "are" starts 1 after where UTF-16 would put it.
    assert drafts[1].span_start == answer.index("are issued")


def test_split_rule_leaves_out_abstention_sentences():
    answer = "Refunds take 14 days. The documents do not say whether fees apply."
    assert _texts(answer) == ["Refunds take 14 days."]


@pytest.mark.parametrize(
    ("text", "tags"),
    [
        ("Refunds take 14 days.", ["numeric"]),
        ("Refunds take fourteen days.", ["numeric"]),
        ("The fee rose 12.5% in March.", ["numeric"]),
        ("It costs $4.2 bn.", ["numeric"]),
        ("The office opens on January 5.", ["numeric"]),
        ("Refunds are not issued without a receipt.", ["negation"]),
        ("You can't cancel an order.", ["negation"]),
        ("Refunds never take long.", ["negation"]),
        ("We cover shoes, bags and hats.", ["multi-part"]),
        ("Refunds take 3 days or are issued as store credit.", ["numeric", "multi-part"]),
        ("Fees and charges apply.", []),
        ("Support can disable two-factor authentication.", []),
        ("Refunds are issued to the original card.", []),
    ],
)
def test_claim_tags(text, tags):
    assert claim_tags(text) == tags


@pytest.mark.parametrize(
    "answer",
    [
        "I don't know.",
        "I do not have enough information to answer that.",
        "I'm sorry, but the documents do not say how long refunds take. Contact support.",
        "Sure! I cannot find anything about refunds in the documents.",
        "This is not mentioned in the provided context.",
        "I don’t know how long refunds take.",  # typographic apostrophe
    ],
)
def test_abstention_detect_finds_abstentions(answer):
    assert abstention_detect(answer)


@pytest.mark.parametrize(
    "answer",
    [
        "Refunds take 14 days and are issued to the original card.",
        "Refunds take 14 days. The documents do not say whether fees apply.",
        "I know that refunds take 14 days.",
        "",
    ],
)
def test_abstention_detect_ignores_answers_and_partial_answers(answer):
    assert abstention_detect(answer) is None


def test_abstention_detect_returns_the_phrase_for_the_lead():
    assert abstention_detect("Sorry. The context does not mention refunds.") == (
        "context does not mention"
    )


def test_sentences_have_exact_spans():
    text = "First one. Second, with Dr. Who.\n\n• Third 💳 item."
    spans = sentences(text)
    assert [s.text for s in spans] == ["First one.", "Second, with Dr. Who.", "Third 💳 item."]
    assert all(text[s.start : s.end] == s.text for s in spans)


def test_align_claims_finds_verbatim_and_paraphrased_sources():
    answer = "Refunds take 14 days and are issued to the original card. Shipping is free."
    drafts = align_claims(
        answer,
        ["Refunds take 14 days.", "Refunds go back to the original card.", "The moon is cheese."],
    )
    assert answer[drafts[0].span_start : drafts[0].span_end] == "Refunds take 14 days"
    # A paraphrase gets its sentence's span; an invention gets none.
    assert answer[drafts[1].span_start : drafts[1].span_end].startswith("Refunds take 14 days and")
    assert (drafts[2].span_start, drafts[2].span_end) == (None, None)
    assert drafts[0].tags == ("numeric",)


_WORDS = [
    "Refunds",
    "take",
    "14",
    "days",
    "and",
    "are",
    "issued",
    "to",
    "the",
    "card",
    "💳",
    "Dr.",
    "12.5%",
    "$4.2",
    "bn",
    ",",
    ";",
    ".",
    "!",
    "?",
    "but",
    "not",
    "I",
    "don't",
    "know",
    "\n",
    "- ",
    "Sure!",
    "fees",
    "charges",
    "apply",
    "退款",
    "يومًا",
    "  ",
]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(_WORDS), max_size=40))
def test_split_rule_spans_always_lie_in_the_answer_in_order(words):
    answer = " ".join(words)
    drafts = split_rule(answer)
    previous_end = 0
    for draft in drafts:
        assert draft.text.strip()
        assert 0 <= draft.span_start < draft.span_end <= len(answer)
        assert draft.span_start >= previous_end  # in order, never overlapping
        source = answer[draft.span_start : draft.span_end]
        assert source == source.strip()
        previous_end = draft.span_end
