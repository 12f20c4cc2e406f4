"""Gold (unanimous and adjudicated), facts and their grounding, contradictions (services)."""

import pytest

from annotate.models import Gold, Role, Verdict
from annotate.quotes import Quote
from annotate.services.claims import claim_edit
from annotate.services.labels import label_save
from annotate.services.review import (
    ReviewError,
    adjudication_claims,
    contradiction_rows,
    fact_add,
    fact_delete,
    facts_grounded,
    facts_grounded_for_project,
    gold_adjudicate,
    gold_recompute_for_claim,
    text_segments,
)
from tests.factories import (
    ClaimFactory,
    MembershipFactory,
    PassageFactory,
    UserFactory,
)

PASSAGE = "Refunds are processed within 14 days. They are issued to the original card."


def _member(project, role=Role.ANALYST, name=None):
    user = UserFactory(username=name) if name else UserFactory()
    MembershipFactory(project=project, user=user, role=role)
    return user


def _quote(passage, text):
    start = passage.text.index(text)
    return {"passage": passage, "start": start, "end": start + len(text), "quote": text}


# ---------------------------------------------------------------------------------------------
# facts_grounded is pure: no database.


@pytest.mark.parametrize(
    ("evidence", "expected"),
    [
        ([(1, 0, 10)], {10}),  # inside fact 10 (passage 1, 5–20)
        ([(1, 19, 25)], {10, 11}),  # overlaps the end of 10 and the start of 11
        ([(1, 20, 22)], {11}),  # touches 10's end only: half-open spans do not overlap
        ([(2, 5, 20)], set()),  # same offsets, another passage
        ([(1, 0, 5)], set()),  # ends where fact 10 starts
        ([], set()),
    ],
)
def test_facts_grounded_by_overlap_on_the_same_passage(evidence, expected):
    facts = [(10, 1, 5, 20), (11, 1, 20, 40), (12, 3, 0, 9)]
    assert facts_grounded(evidence, facts) == expected


def test_facts_grounded_accepts_quotes_and_skips_missing_evidence():
    facts = [(7, 4, 10, 30)]
    quotes = [Quote(passage_id=4, start=25, end=35, text="x" * 10), (None, None, None)]
    assert facts_grounded(quotes, facts) == {7}


def test_text_segments_cut_at_every_boundary_and_keep_overlaps():
    segments = text_segments("abcdefgh", [(1, 4, "A"), (3, 6, "B"), (7, 99, "bad")])
    assert [(s.text, s.marks) for s in segments] == [
        ("a", ()),
        ("bc", ("A",)),
        ("d", ("A", "B")),
        ("ef", ("B",)),
        ("gh", ()),
    ]


# ---------------------------------------------------------------------------------------------
# Gold


@pytest.mark.django_db
def test_unanimous_labels_become_gold_when_the_last_required_label_is_saved():
    claim = ClaimFactory(labels_required=2)
    passage = PassageFactory(answer=claim.answer, text=PASSAGE)
    first, second = _member(claim.project), _member(claim.project)
    label_save(
        claim=claim, annotator=first, verdict=Verdict.SUPPORTED, **_quote(passage, "14 days")
    )
    assert not Gold.objects.filter(claim=claim).exists()  # one of two labels: not yet
    label_save(
        claim=claim, annotator=second, verdict=Verdict.SUPPORTED, **_quote(passage, "within 14")
    )
    gold = Gold.objects.get(claim=claim)
    assert gold.verdict == Verdict.SUPPORTED
    assert gold.source == Gold.Source.UNANIMOUS
    assert gold.decided_by is None


@pytest.mark.django_db
def test_a_changed_label_that_breaks_unanimity_removes_the_automatic_gold():
    claim = ClaimFactory(labels_required=2)
    first, second = _member(claim.project), _member(claim.project)
    for user in (first, second):
        label_save(claim=claim, annotator=user, verdict=Verdict.NOT_IN_PILE)
    assert Gold.objects.get(claim=claim).verdict == Verdict.NOT_IN_PILE
    label_save(claim=claim, annotator=second, verdict=Verdict.CONTRADICTED, require_quote=False)
    assert not Gold.objects.filter(claim=claim).exists()
    assert list(adjudication_claims(project=claim.project)) == [claim]


@pytest.mark.django_db
def test_adjudicated_gold_needs_a_lead_and_a_reason_and_then_stands():
    claim = ClaimFactory(labels_required=2)
    first, second = _member(claim.project), _member(claim.project)
    label_save(claim=claim, annotator=first, verdict=Verdict.NOT_IN_PILE)
    label_save(claim=claim, annotator=second, verdict=Verdict.CONTRADICTED, require_quote=False)
    lead = _member(claim.project, Role.LEAD)

    with pytest.raises(ReviewError, match="Only a lead"):
        gold_adjudicate(claim=claim, verdict=Verdict.NOT_IN_PILE, reason="x", user=first)
    with pytest.raises(ReviewError, match="reason"):
        gold_adjudicate(claim=claim, verdict=Verdict.NOT_IN_PILE, reason="  ", user=lead)
    with pytest.raises(ReviewError, match="Unknown verdict"):
        gold_adjudicate(claim=claim, verdict="MAYBE", reason="x", user=lead)
    assert not Gold.objects.filter(claim=claim).exists()

    gold = gold_adjudicate(
        claim=claim, verdict=Verdict.NOT_IN_PILE, reason="The pile is silent.", user=lead
    )
    assert (gold.source, gold.decided_by, gold.reason) == (
        Gold.Source.ADJUDICATED,
        lead,
        "The pile is silent.",
    )
    assert list(adjudication_claims(project=claim.project)) == []
    # Analysts agreeing later does not overwrite the lead's decision.
    label_save(claim=claim, annotator=second, verdict=Verdict.SUPPORTED, require_quote=False)
    label_save(claim=claim, annotator=first, verdict=Verdict.SUPPORTED, require_quote=False)
    assert Gold.objects.get(claim=claim).verdict == Verdict.NOT_IN_PILE


@pytest.mark.django_db
def test_an_edited_claim_waits_for_review_until_its_analysts_label_it_again():
    claim = ClaimFactory(labels_required=1)
    analyst = _member(claim.project)
    lead = _member(claim.project, Role.LEAD)
    label_save(claim=claim, annotator=analyst, verdict=Verdict.NOT_IN_PILE)
    assert Gold.objects.filter(claim=claim).exists()

    claim_edit(claim=claim, text="Refunds take 30 days.", user=lead)
    assert not Gold.objects.filter(claim=claim).exists()
    assert list(adjudication_claims(project=claim.project)) == [claim]

    label_save(claim=claim, annotator=analyst, verdict=Verdict.CONTRADICTED, require_quote=False)
    claim.refresh_from_db()
    assert claim.needs_review is False
    assert Gold.objects.get(claim=claim).verdict == Verdict.CONTRADICTED
    assert list(adjudication_claims(project=claim.project)) == []


@pytest.mark.django_db
def test_gold_recompute_without_labels_gives_no_gold():
    claim = ClaimFactory()
    assert gold_recompute_for_claim(claim=claim) is None
    assert not Gold.objects.exists()


# ---------------------------------------------------------------------------------------------
# Facts


@pytest.mark.django_db
def test_fact_add_verifies_the_quote_against_the_passage():
    passage = PassageFactory(text="Refunds 💳 take 14 days. Fees apply.")
    analyst = _member(passage.answer.project)
    start = passage.text.index("take")
    fact = fact_add(
        passage=passage, start=start, end=start + 12, quote="take 14 days", user=analyst
    )
    assert (fact.answer, fact.text, fact.created_by) == (passage.answer, "take 14 days", analyst)
    with pytest.raises(ReviewError, match="not in the pile at that place"):
        fact_add(passage=passage, start=start, end=start + 12, quote="take 30 days", user=analyst)
    with pytest.raises(ReviewError, match="already marked"):
        fact_add(passage=passage, start=start, end=start + 12, quote="take 14 days", user=analyst)
    with pytest.raises(ReviewError, match="Only a member"):
        fact_add(passage=passage, start=0, end=7, quote="Refunds", user=UserFactory())


@pytest.mark.django_db
def test_fact_delete_by_its_author_or_a_lead_only():
    passage = PassageFactory(text=PASSAGE)
    author, other = _member(passage.answer.project), _member(passage.answer.project)
    lead = _member(passage.answer.project, Role.LEAD)
    fact = fact_add(user=author, **_quote(passage, "14 days"))
    with pytest.raises(ReviewError, match="Only a lead or the analyst"):
        fact_delete(fact=fact, user=other)
    fact_delete(fact=fact, user=author)
    fact = fact_add(user=author, **_quote(passage, "14 days"))
    fact_delete(fact=fact, user=lead)
    assert not passage.facts.exists()


@pytest.mark.django_db
def test_facts_grounded_for_project_counts_supported_gold_quotes_only():
    claim = ClaimFactory(labels_required=1)
    passage = PassageFactory(answer=claim.answer, text=PASSAGE)
    analyst = _member(claim.project)
    grounded = fact_add(user=analyst, **_quote(passage, "within 14 days"))
    missed = fact_add(user=analyst, **_quote(passage, "the original card"))
    label_save(claim=claim, annotator=analyst, verdict=Verdict.SUPPORTED, **_quote(passage, "14"))
    assert facts_grounded_for_project(project=claim.project) == (
        {grounded.pk},
        [grounded.pk, missed.pk],
    )
    # A contradicted claim's quote grounds nothing.
    other = ClaimFactory(answer=claim.answer, labels_required=1)
    label_save(
        claim=other, annotator=analyst, verdict=Verdict.CONTRADICTED, **_quote(passage, "card")
    )
    assert facts_grounded_for_project(project=claim.project)[0] == {grounded.pk}


# ---------------------------------------------------------------------------------------------
# Contradictions


@pytest.mark.django_db
def test_contradiction_rows_pair_the_answer_sentence_with_the_quoted_line():
    claim = ClaimFactory(
        text="Refunds take 30 days.",
        labels_required=1,
        answer__text="Sure. Refunds take 30 days.",
        span_start=6,
        span_end=27,
    )
    passage = PassageFactory(answer=claim.answer, text=PASSAGE)
    analyst = _member(claim.project, name="ana")
    label_save(
        claim=claim, annotator=analyst, verdict=Verdict.CONTRADICTED, **_quote(passage, "14 days")
    )
    supported = ClaimFactory(answer=claim.answer, labels_required=1)
    label_save(claim=supported, annotator=analyst, verdict=Verdict.NOT_IN_PILE)

    rows = contradiction_rows(project=claim.project)
    assert [row.claim for row in rows] == [claim]
    row = rows[0]
    assert row.gold == Verdict.CONTRADICTED
    assert row.said == "Refunds take 30 days."
    label, line, _passage, _quoted = row.quotes[0]
    assert label.annotator == analyst
    assert (line.before, line.mark, line.after) == (
        "Refunds are processed within ",
        "14 days",
        ".",
    )


@pytest.mark.django_db
def test_contradiction_rows_include_contradicted_labels_before_gold_but_not_overruled_ones():
    claim = ClaimFactory(labels_required=2)
    a, b = _member(claim.project), _member(claim.project)
    label_save(claim=claim, annotator=a, verdict=Verdict.CONTRADICTED, require_quote=False)
    assert [row.claim for row in contradiction_rows(project=claim.project)] == [claim]
    label_save(claim=claim, annotator=b, verdict=Verdict.SUPPORTED, require_quote=False)
    lead = _member(claim.project, Role.LEAD)
    gold_adjudicate(claim=claim, verdict=Verdict.SUPPORTED, reason="b is right", user=lead)
    assert contradiction_rows(project=claim.project) == []


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_two_analysts_saving_at_once_still_make_unanimous_gold():
    """Gold is recomputed under the claim's row lock (label_save takes it, and so does
    gold_recompute_for_claim for other callers), so the second save sees the first one's
    committed label: however the two interleave, the claim ends with its unanimous gold."""
    import threading

    from django.db import connection

    for round_ in range(3):
        claim = ClaimFactory(labels_required=2)
        users = [_member(claim.project), _member(claim.project)]
        barrier = threading.Barrier(2)
        errors = []

        def save(user, claim=claim, barrier=barrier, errors=errors):
            try:
                barrier.wait()
                label_save(claim=claim, annotator=user, verdict=Verdict.NOT_IN_PILE)
            except Exception as error:  # surfaced below
                errors.append(error)
            finally:
                connection.close()

        threads = [threading.Thread(target=save, args=(user,)) for user in users]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        assert errors == [], round_
        assert claim.labels.count() == 2
        gold = Gold.objects.get(claim=claim)
        assert gold.verdict == Verdict.NOT_IN_PILE
