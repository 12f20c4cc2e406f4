"""The judge audit's failures (metrics/services/judge_audit.py): worst first, the larger group first
on a tie, then the order given."""

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from metrics.services import report_compute
from tests.factories import ProjectFactory

S, C, N = "SUPPORTED", "CONTRADICTED", "NOT_IN_PILE"


# --- metrics.services.judge_audit: failures worst first, the larger group first on a tie -------


@pytest.mark.django_db
def test_judge_failures_by_risk_category_worst_first_and_larger_first_on_a_tie():
    """judge_audit `_failures` `_33` (`+n` for `−n`: among categories with the same agreement the
    smaller came first). By hand: health 2 of 4 audited claims agree (0.5), legal 1 of 2 (0.5),
    financial 1 of 1 (1.0): health, legal, financial."""
    from judges.models import Judge
    from tests.compare.builders import answer_record, import_records

    project = ProjectFactory()
    import_records(
        project,
        [
            answer_record("q1", "rag", [(S, S), (N, N)], risk="health"),
            answer_record("q2", "rag", [(S, N), (C, S)], risk="health"),
            answer_record("q3", "rag", [(S, S), (S, N)], risk="legal"),
            answer_record("q4", "rag", [(S, S)], risk="financial"),
        ],
    )
    report = report_compute(project=project, judge=Judge.objects.get(name="j"))
    rows = report["judge"]["failures"]["by_risk_category"]
    assert [(r["group"], r["n"], r["agreement"]) for r in rows] == [
        ("health", 4, 0.5),
        ("legal", 2, 0.5),
        ("financial", 1, 1.0),
    ]


# --- judge audit: failures worst first, the larger group first, then the order given ---------


def test_failures_order_with_ties_whole():
    from metrics.services.judge_audit import _failures

    # 8 claims in the data; the judge judged 7 of them (positions below), 6 with gold
    risk = ["legal", "health", "health", "legal", "financial", "safety", "none", "legal"]
    claims = pd.DataFrame({"claim_id": range(8), "risk_category": risk})
    position = np.array([7, 0, 1, 2, 3, 4, 5])
    audited = np.array([True, True, True, True, True, True, False])
    # gold and judge codes per judged claim (position order)
    gold = np.array([0, 0, 1, 0, 2, 0, -1])
    judge = np.array([1, 0, 1, 2, 2, 0, 0])
    # agree per judged claim with gold (claims 7, 0, 1, 2, 3, 4): F, T, T, F, T, T
    tags = {
        "tag_same": np.array([1, 1, 0, 0, 0, 0, 0, 0], bool),  # claims 0, 1: 1.0 of 2
        "tag_small": np.array([1, 1, 0, 0, 0, 0, 0, 0], bool),  # the same: kept after it
        "tag_empty": np.array([0, 0, 0, 0, 0, 0, 1, 0], bool),  # claim 6 not judged: skipped
        "tag_big": np.array([1, 1, 0, 0, 1, 1, 0, 0], bool),  # 0, 1, 4 (5 no gold): 1.0 of 3
        "tag_half": np.array([0, 0, 1, 0, 0, 0, 0, 1], bool),  # claims 2, 7: F, F: 0.0 of 2
        "tag_twin": np.array([0, 0, 0, 0, 1, 1, 0, 0], bool),  # claim 4 (5 no gold): 1.0 of 1
    }
    data = SimpleNamespace(tag_masks=tags, claims=claims)
    judged = SimpleNamespace(
        position=position,
        audited=audited,
        gold_codes=gold,
        judge_codes=judge,
        strata=np.zeros(7, int),  # a simple random sample: one stratum, equal weights
        sizes={0: 8.0},
        weights=None,
    )
    # by risk: legal claims 0, 3, 7: T, T, F → 2/3; health claims 1, 2: T, F → 0.5; financial
    # claim 4: T; safety claim 5 has no gold and "none" claim 6 was not judged: both absent
    assert _failures(data, judged) == {
        "by_tag": [
            {"group": "tag_half", "n": 2, "agreement": 0.0},
            {"group": "tag_big", "n": 3, "agreement": 1.0},
            {"group": "tag_same", "n": 2, "agreement": 1.0},
            {"group": "tag_small", "n": 2, "agreement": 1.0},
            {"group": "tag_twin", "n": 1, "agreement": 1.0},
        ],
        "by_risk_category": [
            {"group": "health", "n": 2, "agreement": 0.5},
            {"group": "legal", "n": 3, "agreement": 2 / 3},
            {"group": "financial", "n": 1, "agreement": 1.0},
        ],
    }
