"""Inter-analyst agreement with imported annotators, and without labels changed after a reveal.

Expected figures from the `krippendorff` package and scikit-learn, on hand-written verdicts.
"""

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from annotate.models import Gold, ImportedAnnotator
from metrics.services import report_compute
from tests.factories import (
    AnswerFactory,
    ClaimFactory,
    GoldFactory,
    JudgeFactory,
    LabelFactory,
    ProjectFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db
S, C, N = "SUPPORTED", "CONTRADICTED", "NOT_IN_PILE"
GOLD = [S, S, C, N, S, C, N, S]
ALICE = [S, S, C, N, S, C, C, S]  # imported from a file under the name "alice"
BOB = [S, C, C, N, S, C, N, S]  # a member
CARA = [C, C, N, S]  # claims 0-3, each changed after the judge was revealed to her
CODE = {S: 0, C: 1, N: 2}


def _project(*, count_changed: bool):
    project = ProjectFactory(count_changed_after_reveal=count_changed)
    alice = ImportedAnnotator.objects.create(project=project, name="alice")
    bob, cara = UserFactory(username="bob"), UserFactory(username="cara")
    for i, gold in enumerate(GOLD):
        claim = ClaimFactory(answer=AnswerFactory(project=project), position=0)
        GoldFactory(claim=claim, verdict=gold, source=Gold.Source.ADJUDICATED)
        LabelFactory(claim=claim, annotator=None, imported_annotator=alice, verdict=ALICE[i])
        LabelFactory(claim=claim, annotator=bob, verdict=BOB[i])
        if i < len(CARA):
            LabelFactory(claim=claim, annotator=cara, verdict=CARA[i], changed_after_reveal=True)
    return project


def _alpha(*rows):
    matrix = np.array(
        [[CODE[v] for v in row] + [np.nan] * (len(GOLD) - len(row)) for row in rows], dtype=float
    )
    return krippendorff.alpha(reliability_data=matrix, level_of_measurement="nominal")


def test_agreement_names_imported_annotators_and_leaves_out_changed_labels():
    project = _project(count_changed=False)
    analysts = report_compute(project=project, judge=JudgeFactory(project=project))["analysts"]
    rows = {row["annotator"]: row for row in analysts["per_analyst"]}
    assert set(rows) == {"alice (imported)", "bob"}
    assert rows["alice (imported)"]["n"] == 8
    assert rows["alice (imported)"]["kappa"] == pytest.approx(cohen_kappa_score(ALICE, GOLD))
    assert rows["bob"]["kappa"] == pytest.approx(cohen_kappa_score(BOB, GOLD))
    assert analysts["krippendorff_alpha"] == pytest.approx(_alpha(ALICE, BOB))
    assert analysts["labels"] == 16
    (pair,) = analysts["pairwise"]
    assert {pair["a"], pair["b"]} == {"alice (imported)", "bob"}
    assert pair["kappa"] == pytest.approx(cohen_kappa_score(ALICE, BOB))


def test_agreement_counts_changed_labels_when_the_project_says_so():
    project = _project(count_changed=True)
    analysts = report_compute(project=project, judge=JudgeFactory(project=project))["analysts"]
    rows = {row["annotator"]: row for row in analysts["per_analyst"]}
    assert set(rows) == {"alice (imported)", "bob", "cara"}
    assert rows["cara"]["kappa"] == pytest.approx(cohen_kappa_score(CARA, GOLD[:4]))
    assert analysts["krippendorff_alpha"] == pytest.approx(_alpha(ALICE, BOB, CARA))
