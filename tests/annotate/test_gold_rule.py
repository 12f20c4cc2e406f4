"""One unanimous-gold rule (issue 31 item 2): the bulk pass an import runs
(`gold_unanimous_bulk`) and the per-claim recompute a save runs (`gold_recompute_for_claim`)
give every claim the same gold, reason and review flag — including the two clauses the bulk
pass used to leave out: a label changed after a reveal is not counted (and the reason says so),
and a claim flagged for review whose labels are all fresh again loses its flag."""

import pytest

from annotate.models import Claim, Gold
from annotate.services.review import gold_recompute_for_claim, gold_unanimous_bulk
from annotate.vocabulary import Verdict
from tests.factories import ClaimFactory, LabelFactory, ProjectFactory, UserFactory

S, C = Verdict.SUPPORTED, Verdict.CONTRADICTED

# (labels_required, claim flagged, [(verdict, label flagged, changed after reveal)], expected
# gold verdict or None, expected reason, expected flag after)
CASES = [
    (
        2,
        False,
        [(S, False, False), (S, False, False)],
        S,
        "All 2 analysts labelled it SUPPORTED.",
        False,
    ),
    (2, False, [(S, False, False), (C, False, False)], None, None, False),
    (2, False, [(S, False, False)], None, None, False),
    (2, False, [(S, True, False), (S, False, False)], None, None, False),
    (
        2,
        False,
        [(S, False, False), (S, False, False), (C, False, True)],
        S,
        "All 2 analysts labelled it SUPPORTED. 1 label changed after a reveal not counted.",
        False,
    ),
    (1, True, [(C, False, False)], C, "All 1 analysts labelled it CONTRADICTED.", False),
]


def _build(project, cases):
    claims = []
    for required, flagged, labels, *_ in cases:
        claim = ClaimFactory(
            answer__project=project, labels_required=required, needs_review=flagged
        )
        for verdict, review, changed in labels:
            LabelFactory(
                claim=claim,
                annotator=UserFactory(),
                verdict=verdict,
                needs_review=review,
                changed_after_reveal=changed,
            )
        claims.append(claim)
    return claims


def _outcome(claims):
    out = []
    for claim in Claim.objects.filter(pk__in=[c.pk for c in claims]).order_by("pk"):
        gold = Gold.objects.filter(claim=claim).first()
        out.append(
            (
                gold.verdict if gold else None,
                gold.reason if gold else None,
                claim.needs_review,
            )
        )
    return out


@pytest.mark.django_db
def test_bulk_and_per_claim_give_the_same_gold_reason_and_flag():
    expected = [(case[3], case[4], case[5]) for case in CASES]
    bulk_project = ProjectFactory()
    bulk_claims = _build(bulk_project, CASES)
    made = gold_unanimous_bulk(project=bulk_project)
    assert made == sum(1 for case in CASES if case[3] is not None)
    assert _outcome(bulk_claims) == expected

    one_project = ProjectFactory()
    one_claims = _build(one_project, CASES)
    for claim in one_claims:
        gold_recompute_for_claim(claim=claim)
    assert _outcome(one_claims) == expected


@pytest.mark.django_db
def test_bulk_counts_a_changed_label_where_the_project_says_so():
    project = ProjectFactory(count_changed_after_reveal=True)
    claims = _build(project, [(2, False, [(S, False, False), (C, False, True)], None, None, False)])
    assert gold_unanimous_bulk(project=project) == 0
    assert _outcome(claims) == [(None, None, False)]
