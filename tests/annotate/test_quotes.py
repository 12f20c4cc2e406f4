import pytest

from annotate.models import LabelHistory, Verdict
from annotate.quotes import QuoteError, quote_verify, utf16_to_codepoint_offset
from annotate.services.labels import LabelError, label_save
from tests.factories import ClaimFactory, PassageFactory, UserFactory

EMOJI_TEXT = "Refunds 💳 take 14 days. استرداد خلال ١٤ يومًا. 退款需要14天。"


def test_utf16_offset_after_emoji_is_one_less_in_code_points():
    # "💳" is one code point but two UTF-16 units: the browser's offset of "take" is 11.
    js_offset = 11
    assert utf16_to_codepoint_offset(EMOJI_TEXT, js_offset) == 10
    assert EMOJI_TEXT[10:14] == "take"


def test_utf16_offset_inside_surrogate_pair_is_rejected():
    with pytest.raises(QuoteError, match="inside a character"):
        utf16_to_codepoint_offset(EMOJI_TEXT, 9)


def test_utf16_offset_beyond_end_is_rejected():
    with pytest.raises(QuoteError, match="beyond the end"):
        utf16_to_codepoint_offset("abc", 4)


def test_quote_verify_accepts_right_to_left_and_cjk_spans():
    start = EMOJI_TEXT.index("استرداد")
    quote_verify(passage_text=EMOJI_TEXT, start=start, end=start + 7, quote="استرداد")
    start = EMOJI_TEXT.index("退款")
    quote_verify(passage_text=EMOJI_TEXT, start=start, end=start + 2, quote="退款")


@pytest.mark.parametrize(
    ("start", "end", "quote", "message"),
    [
        (0, 7, "Refund!", "not in the pile"),
        (0, 500, "Refunds", "past the end"),
        (5, 2, "x", "not a valid range"),
        (3, 3, "", "empty"),
    ],
)
def test_quote_verify_rejects_quotes_not_in_the_passage(start, end, quote, message):
    with pytest.raises(QuoteError, match=message):
        quote_verify(passage_text=EMOJI_TEXT, start=start, end=end, quote=quote)


@pytest.mark.django_db
def test_label_save_verifies_quote_and_keeps_history():
    passage = PassageFactory(text=EMOJI_TEXT)
    claim = ClaimFactory(answer=passage.answer)
    analyst = UserFactory()
    start = EMOJI_TEXT.index("take")
    label = label_save(
        claim=claim,
        annotator=analyst,
        verdict=Verdict.SUPPORTED,
        passage=passage,
        start=start,
        end=start + 17,
        quote="take 14 days. است",
    )
    assert label.evidence_quote == EMOJI_TEXT[start : start + 17]
    label_save(claim=claim, annotator=analyst, verdict=Verdict.NOT_IN_PILE)
    history = list(LabelHistory.objects.filter(claim=claim).values_list("action", "verdict"))
    assert history == [("created", "SUPPORTED"), ("updated", "NOT_IN_PILE")]


@pytest.mark.django_db
def test_label_save_refuses_quote_from_another_answers_pile():
    claim = ClaimFactory()
    foreign = PassageFactory()
    with pytest.raises(LabelError, match="not in this answer's pile"):
        label_save(
            claim=claim,
            annotator=UserFactory(),
            verdict=Verdict.SUPPORTED,
            passage=foreign,
            start=0,
            end=7,
            quote="Refunds",
        )


@pytest.mark.django_db
def test_label_save_requires_quote_for_supported_but_not_for_not_in_pile():
    claim = ClaimFactory()
    with pytest.raises(LabelError, match="needs a quote"):
        label_save(claim=claim, annotator=UserFactory(), verdict=Verdict.CONTRADICTED)
    label = label_save(claim=claim, annotator=UserFactory(), verdict=Verdict.NOT_IN_PILE)
    assert label.evidence_passage is None


@pytest.mark.django_db
def test_label_save_rejects_unknown_verdict():
    with pytest.raises(LabelError, match="Unknown verdict 'MAYBE'"):
        label_save(claim=ClaimFactory(), annotator=UserFactory(), verdict="MAYBE")


def test_utf16_offsets_at_the_edges_of_the_basic_plane():

    assert utf16_to_codepoint_offset("abc", 0) == 0
    # U+FFFF is one UTF-16 unit, U+10000 the first character that takes two.
    assert utf16_to_codepoint_offset("\uffffx", 1) == 1
    assert utf16_to_codepoint_offset("\U00010000x", 2) == 1
    with pytest.raises(QuoteError) as negative:
        utf16_to_codepoint_offset("abc", -1)
    assert str(negative.value) == "A quote offset cannot be negative."
    with pytest.raises(QuoteError) as inside:
        utf16_to_codepoint_offset("\U00010000x", 1)
    assert str(inside.value) == "The quote's offset falls inside a character (a surrogate pair)."
    with pytest.raises(QuoteError) as beyond:
        utf16_to_codepoint_offset("abc", 4)
    assert str(beyond.value) == "The quote's offset lies beyond the end of the passage."


def test_quote_locate_finds_the_first_occurrence_in_code_points():
    from annotate.quotes import quote_locate

    assert quote_locate(passage_text="14 days, then 14 days", quote="14 days") == (0, 7)
    assert quote_locate(passage_text="Refunds 💳 take 14 days.", quote="take") == (10, 14)
    assert quote_locate(passage_text="Refunds take 14 days.", quote="30 days") is None
    assert quote_locate(passage_text="Refunds take 14 days.", quote="") is None
