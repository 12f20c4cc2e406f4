"""Issue 30: the headline from rollups equals the report's figures, to 1e-12.

A project of clustered answers (several claims each), file strata (one without gold), a gold
sample drawn claim by claim (so answers span gold and unaudited claims and strata), an
abstaining answer and a judge run with confidences: `headline_from_rollups` must give the
report's (`report_compute`, which reads every claim) faithfulness, per-stratum rates and PPI++.
Run on SQLite (the ORM fallback) and on PostgreSQL (`metrics.sql.rollup_cells`)."""

import numpy as np
import pytest

from annotate.models import Claim, Gold
from judges.models import JudgeVerdict
from metrics.services import report_compute
from metrics.services.rollups import headline_from_rollups, rollups_read
from tests.factories import (
    AnswerFactory,
    ClaimFactory,
    JudgeFactory,
    JudgeRunFactory,
    LabelFactory,
    ProjectFactory,
)

pytestmark = pytest.mark.django_db
S, C, N = "SUPPORTED", "CONTRADICTED", "NOT_IN_PILE"


def _project(seed=3):
    rng = np.random.default_rng(seed)
    project = ProjectFactory()
    judge = JudgeFactory(project=project, name="j", model="m-1")
    run = JudgeRunFactory(judge=judge, prompt_version="p-1", model="m-1")
    strata = ["health", "legal", "travel"]
    claims = []
    for a in range(30):
        answer = AnswerFactory(project=project, abstention=(a == 29))
        for _ in range(int(rng.integers(2, 6))):
            claim = ClaimFactory(answer=answer)
            claim.stratum = strata[int(rng.integers(0, 3))] if a % 5 else ""
            claim.save(update_fields=["stratum"])
            claims.append(claim)
    for claim in claims:
        true = rng.random() < 0.7
        right = rng.random() < 0.8
        said = (S if true else N) if right else (N if true else S)
        conf = float(np.clip((0.8 if said == S else 0.2) + rng.normal(0, 0.1), 0, 1))
        JudgeVerdict.objects.create(run=run, claim=claim, verdict=said, confidence=conf)
        if claim.stratum != "travel" and rng.random() < 0.35:
            verdict = S if true else (C if rng.random() < 0.5 else N)
            Gold.objects.create(claim=claim, verdict=verdict, source="unanimous")
    return project, judge, run


def _check(project, judge, run):
    report = report_compute(project=project, judge=judge)
    rollups = rollups_read(project=project, run=run)
    head = headline_from_rollups(rollups)
    want = report["faithfulness"]["pooled"]
    got = head["faithfulness"]["pooled"]
    assert got["value"] == pytest.approx(want["value"], abs=1e-12)
    assert list(got["ci"]) == pytest.approx(list(want["ci"]), abs=1e-12)
    assert got["design_effect"] == pytest.approx(want["design_effect"], abs=1e-12)
    ppi = report["judge"]["ppi_faithfulness"]
    assert head["ppi_faithfulness"]["value"] == pytest.approx(ppi["value"], abs=1e-12)
    assert list(head["ppi_faithfulness"]["ci"]) == pytest.approx(list(ppi["ci"]), abs=1e-12)
    lam = head["ppi_faithfulness"]["lambda"]
    assert {str(k): v for k, v in lam.items()} == pytest.approx(ppi["lambda"], abs=1e-12)
    # The stratum without gold is counted in N, never given a rate of its own.
    assert rollups.sizes["travel"] > 0
    assert np.isnan(head["faithfulness"]["by_stratum"]["travel"]["value"])
    return rollups, head


def test_headline_from_rollups_equals_the_report():
    _check(*_project())


@pytest.mark.postgres
def test_rollups_read_few_rows_on_postgresql():
    """The `postgres` marker runs it on PostgreSQL only (and fails under REQUIRE_SERVICES=1
    when PostgreSQL is missing, as in CI)."""
    rollups, _ = _check(*_project(seed=4))
    # Strata, their cross-products, gold answers' cells and gold rows: not every claim.
    assert rollups.rows_read < 1 + 4 + 16 + 2 * len(rollups.gold_answer) + 1


def test_abstentions_are_left_out_of_every_stratum_size():
    project, judge, run = _project(seed=5)
    rollups = rollups_read(project=project, run=run)
    counted = Claim.objects.filter(project=project, answer__abstention=False).count()
    assert sum(rollups.sizes.values()) == counted


def test_gold_drawn_by_the_active_queue_is_refused_not_summed_raw():
    """Gold the active queue drew must be weighted by 1/π; the rollups do not read π yet, so
    they refuse rather than give the raw (biased) share."""
    project, judge, run = _project(seed=6)
    claim = Claim.objects.filter(project=project).first()
    LabelFactory(claim=claim, design="active", inclusion_probability=0.5)
    with pytest.raises(ValueError, match="active queue"):
        rollups_read(project=project, run=run)
