"""A verify run's agreement with gold, on the claims that have both (shown on the run page).

Uses the team's statistics core (`metrics.stats`) when it is importable; otherwise
scikit-learn's `cohen_kappa_score` and a plain share of equal verdicts, and says so.
"""

from __future__ import annotations

import math

from annotate.vocabulary import VERDICT_VALUES
from judges.models import JudgeRun
from judges.selectors import run_gold_pairs, run_stale_count

VERDICT_ORDER = list(VERDICT_VALUES)


def run_agreement(*, run: JudgeRun) -> dict | None:
    """n, overall agreement, Cohen's kappa, the 3×3 confusion (rows gold), and the method.

    None for citation and canary runs: they judge against other evidence than gold does.
    """
    if run.kind != JudgeRun.Kind.VERIFY:
        return None
    gold, judged, unparseable = run_gold_pairs(run=run)
    stale = run_stale_count(run=run)
    n = len(gold)
    stale_note = (
        f" {stale} verdict{'s' if stale != 1 else ''} made on a claim's previous text "
        "(edited since) left out."
        if stale
        else ""
    )
    result = {
        "n": n,
        "unparseable_on_gold": unparseable,
        "stale": stale,
        "agreement": None,
        "kappa": None,
        "confusion": [],
        "method": "",
    }
    if n == 0:
        result["method"] = "No claim of this run has gold yet." + stale_note
        return result
    try:
        from metrics import stats

        agreement = float(stats.agreement(gold, judged))
        kappa = float(stats.cohen_kappa(gold, judged))
        table = stats.confusion(gold, judged)
        confusion = [
            (row, [int(table.loc[row, col]) for col in VERDICT_ORDER]) for row in VERDICT_ORDER
        ]
    except (ImportError, AttributeError):
        from sklearn.metrics import cohen_kappa_score, confusion_matrix

        agreement = sum(g == j for g, j in zip(gold, judged, strict=True)) / n
        kappa = float(cohen_kappa_score(gold, judged, labels=VERDICT_ORDER))
        matrix = confusion_matrix(gold, judged, labels=VERDICT_ORDER)
        confusion = [(row, [int(x) for x in matrix[i]]) for i, row in enumerate(VERDICT_ORDER)]
    result.update(
        agreement=agreement,
        kappa=None if kappa is None or math.isnan(kappa) else kappa,
        confusion=confusion,
        method=(
            f"Judge verdicts against gold on {n} claims that have both; "
            f"{unparseable} unparseable verdicts on gold claims left out.{stale_note} "
            "Agreement is the share of those claims where the judge's verdict equals gold; "
            "Cohen's kappa is that agreement beyond what chance would give."
        ),
    )
    return result
