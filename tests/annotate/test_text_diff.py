"""Two answers' word diff (annotate.text_diff): what the pairwise screen and the compare page
highlight. Expected segments written out by hand."""

from annotate.text_diff import Segment, word_diff


def test_the_changed_word_is_the_only_highlight_and_each_side_rejoins_to_its_text():
    left = "The office opens at 9am on Monday."
    right = "The office opens at 10am on Monday."
    diff = word_diff(left, right)
    assert diff.left == [
        Segment("The office opens at ", False),
        Segment("9am ", True),
        Segment("on Monday.", False),
    ]
    assert diff.right[1] == Segment("10am ", True)
    assert "".join(s.text for s in diff.left) == left
    assert "".join(s.text for s in diff.right) == right
    assert diff.changed_words == 2  # "9am" on the left, "10am" on the right
    assert not diff.identical


def test_an_added_clause_is_highlighted_on_its_side_only():
    diff = word_diff("Refunds within 30 days.", "Refunds within 30 days, minus a fee.")
    assert [s for s in diff.left if s.changed] == [Segment("days.", True)]
    assert [s for s in diff.right if s.changed] == [Segment("days, minus a fee.", True)]
    assert diff.changed_words == 5


def test_same_words_with_other_spacing_are_identical():
    diff = word_diff("Open  Monday\nto Friday.", "Open Monday to Friday.")
    assert diff.identical
    assert all(not s.changed for s in diff.left + diff.right)


def test_empty_sides():
    assert word_diff("", "").identical
    diff = word_diff("", "Something new")
    assert diff.left == []
    assert diff.right == [Segment("Something new", True)]
    assert diff.changed_words == 2
