"""Issue 30: the design PPI++ mean from sufficient statistics equals, to 1e-12, the version that
read every unaudited claim (kept verbatim in `_design_ppi_before`), on seeded fixtures of every
shape the report meets (one claim per answer, clustered answers, strata with and without gold,
answers spanning strata and the gold/unaudited split, 0/1 verdicts and confidences) and a
FaithBench-sized one. The golden reports (tests/metrics/golden/) pin the rest byte for byte."""

import math

import numpy as np
import pytest

from metrics.stats.design_ppi import design_ppi_mean
from metrics.stats.design_ppi_sums import design_ppi_from_sums, rest_sums
from tests.metrics.stats._design_ppi_before import design_ppi_mean as before


def _close(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or abs(a - b) <= 1e-12


def _same(new, old) -> None:
    for field in ("value", "lower", "upper", "se", "design_effect", "df"):
        a, b = getattr(new, field), getattr(old, field)
        if a is None or b is None:
            assert a is b, field
        else:
            assert _close(float(a), float(b)), (field, a, b)
    assert new.method == old.method
    assert (new.n, new.n_clusters, new.n_strata) == (old.n, old.n_clusters, old.n_strata)
    lam_new, lam_old = new.extra["lambda"], old.extra["lambda"]
    if isinstance(lam_old, dict):
        assert list(lam_new) == list(lam_old)
        assert all(_close(lam_new[k], lam_old[k]) for k in lam_old)
    else:
        assert _close(lam_new, lam_old)


def _fixture(rng, *, answers, per_answer, strata, gold, scores, by_answer_strata):
    """Claims of `answers` answers (1..per_answer claims each), strata per claim or per
    answer, a simple random gold sample of `gold` claims, a judge that is right 80% of the time."""
    sizes = rng.integers(1, per_answer + 1, answers)
    ids = np.repeat(np.arange(answers), sizes)
    n = ids.size
    st = rng.integers(0, strata, answers)[ids] if by_answer_strata else rng.integers(0, strata, n)
    truth = (rng.random(n) < 0.7).astype(float)
    right = rng.random(n) < 0.8
    verdict = np.where(right, truth, 1 - truth)
    f = np.clip(verdict * 0.8 + rng.random(n) * 0.2, 0, 1) if scores else verdict
    audited = np.zeros(n, bool)
    audited[rng.choice(n, size=min(gold, n), replace=False)] = True
    return truth, f, ids, st, audited


CASES = [
    {
        "answers": 400,
        "per_answer": 1,
        "strata": 1,
        "gold": 60,
        "scores": False,
        "by_answer_strata": True,
    },
    {
        "answers": 400,
        "per_answer": 1,
        "strata": 1,
        "gold": 60,
        "scores": True,
        "by_answer_strata": True,
    },
    {
        "answers": 300,
        "per_answer": 6,
        "strata": 1,
        "gold": 80,
        "scores": True,
        "by_answer_strata": True,
    },
    {
        "answers": 300,
        "per_answer": 6,
        "strata": 4,
        "gold": 80,
        "scores": False,
        "by_answer_strata": True,
    },
    {
        "answers": 300,
        "per_answer": 6,
        "strata": 4,
        "gold": 80,
        "scores": True,
        "by_answer_strata": False,
    },
    {
        "answers": 500,
        "per_answer": 5,
        "strata": 12,
        "gold": 40,
        "scores": True,
        "by_answer_strata": False,
    },
    {
        "answers": 200,
        "per_answer": 3,
        "strata": 3,
        "gold": 6,
        "scores": False,
        "by_answer_strata": False,
    },
]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_design_ppi_from_sums_equals_the_claim_by_claim_version(case, seed):
    rng = np.random.default_rng(seed)
    truth, f, ids, st, audited = _fixture(rng, **case)
    args = (truth[audited], f[audited], f[~audited], ids[audited], ids[~audited])
    _same(
        design_ppi_mean(*args, st[audited], st[~audited]), before(*args, st[audited], st[~audited])
    )
    _same(design_ppi_mean(*args), before(*args))


def test_string_strata_and_answer_ids_and_no_unaudited_claims():
    rng = np.random.default_rng(7)
    truth, f, ids, st, audited = _fixture(
        rng, answers=120, per_answer=4, strata=3, gold=50, scores=True, by_answer_strata=False
    )
    names = np.array(["SUPPORTED · conf 0.9–1", "health", "whole project"], dtype=object)[st]
    answers = np.array([f"a{i}" for i in ids], dtype=object)
    args = (truth[audited], f[audited], f[~audited], answers[audited], answers[~audited])
    _same(
        design_ppi_mean(*args, names[audited], names[~audited]),
        before(*args, names[audited], names[~audited]),
    )
    empty = (truth[audited], f[audited], [], answers[audited], [], names[audited], [])
    _same(design_ppi_mean(*empty), before(*empty))


def test_faithbench_sized_fixture():
    # FaithBench's size (about 750 summaries, a few claims each), gold on a fifth of them.
    rng = np.random.default_rng(11)
    truth, f, ids, st, audited = _fixture(
        rng, answers=750, per_answer=4, strata=6, gold=400, scores=True, by_answer_strata=False
    )
    args = (truth[audited], f[audited], f[~audited], ids[audited], ids[~audited])
    _same(
        design_ppi_mean(*args, st[audited], st[~audited]), before(*args, st[audited], st[~audited])
    )


def test_the_sums_of_a_million_claims_are_a_few_numbers_per_stratum():
    """What a user would notice at scale: the estimate is read from strata-sized sums."""
    rng = np.random.default_rng(5)
    truth, f, ids, st, audited = _fixture(
        rng, answers=20_000, per_answer=5, strata=4, gold=300, scores=True, by_answer_strata=False
    )
    rest = rest_sums(f[~audited], ids[~audited], st[~audited], ids[audited])
    assert rest.cross.shape == (8, 8)
    assert rest.touched_m.size <= 4 * 300
    est = design_ppi_from_sums(truth[audited], f[audited], ids[audited], st[audited], rest)
    old = before(
        truth[audited],
        f[audited],
        f[~audited],
        ids[audited],
        ids[~audited],
        st[audited],
        st[~audited],
    )
    _same(est, old)
