"""A verify run's agreement with gold, as its run page shows it.

Where a current report snapshot of the run's judge holds the run's instrument (its model and
prompt version), the page shows the report's figure (design-based agreement and kappa with
their 95% intervals), so one figure reads the same on the run page, the dashboard and the
audit card; otherwise it shows the run's own figure (a plain share and Cohen's kappa on the
claims that have both a verdict of this run and gold) with its method sentence.
"""

from __future__ import annotations

import math

from annotate.vocabulary import VERDICT_VALUES
from judges.models import JudgeRun
from judges.selectors import (
    run_gold_claims_count,
    run_gold_drawn_unequally,
    run_gold_pairs,
    run_stale_count,
)
from metrics import format as fmt
from metrics import selectors, stats

VERDICT_ORDER = list(VERDICT_VALUES)
_LIVE = (JudgeRun.Status.PENDING, JudgeRun.Status.RUNNING)


def run_agreement(*, run: JudgeRun) -> dict | None:
    """What the run page shows of the run's agreement with gold: n, agreement, its interval
    (report only), kappa and its interval (report only), the 3×3 confusion (rows gold), the
    method, and `report_at` (the snapshot's time when the figure is the report's, else None).

    None for citation and canary runs: they judge against other evidence than gold does.
    """
    if run.kind != JudgeRun.Kind.VERIFY:
        return None
    own = run_own_agreement(run=run)
    return _from_report(run, own) or own


def run_own_agreement(*, run: JudgeRun) -> dict:
    """The run's own verdicts against gold, on the claims that have both."""
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
        "agreement_ci": None,
        "kappa": None,
        "kappa_ci": None,
        "confusion": [],
        "method": "",
        "report_at": None,
    }
    if n == 0:
        result["method"] = _no_pairs_sentence(run, unparseable) + stale_note
        return result
    table = stats.confusion(gold, judged)
    confusion = [
        (row, [int(table.loc[row, col]) for col in VERDICT_ORDER]) for row in VERDICT_ORDER
    ]
    if run_gold_drawn_unequally(run=run):
        # A plain share over gold drawn by the active or stratified queue is biased: the
        # design-weighted figure is the report's (`_from_report`), never made up here.
        result.update(
            confusion=confusion,
            method=(
                f"This run's verdicts against gold on {n} claims that have both (the table "
                "counts them as drawn). Their labels were drawn by the active or stratified "
                "queue, so these claims stand for unequal numbers of the project's claims and "
                "a plain share of them is not the project's agreement: the design-weighted "
                "agreement and kappa are the report's, shown here once the dashboard's report "
                f"covers this run.{stale_note}"
            ),
        )
        return result
    kappa = float(stats.cohen_kappa(gold, judged))
    so_far = (
        " The run is still going: these are the verdicts written so far (the page reloads "
        "when it has finished)."
        if run.status in _LIVE
        else ""
    )
    result.update(
        agreement=float(stats.agreement(gold, judged)),
        kappa=None if math.isnan(kappa) else kappa,
        confusion=confusion,
        method=(
            f"This run's verdicts against gold on {n} claims that have both; "
            f"{unparseable} unparseable verdicts on gold claims left out.{stale_note} "
            "Agreement is the share of those claims where the judge's verdict equals gold; "
            "Cohen's kappa is that agreement beyond what chance would give." + so_far
        ),
    )
    return result


def _no_pairs_sentence(run: JudgeRun, unparseable: int) -> str:
    """Why no claim pairs a verdict of this run with gold, in the words a lead acts on."""
    gold_claims = run_gold_claims_count(run=run)
    if not gold_claims:
        return (
            "No claim of this project has gold yet: agreement shows once analysts agree on "
            "a claim or a lead adjudicates it."
        )
    has = f"{gold_claims} claim{'s' if gold_claims != 1 else ''} of the project "
    has += "have gold" if gold_claims != 1 else "has gold"
    if run.status in _LIVE:
        return (
            f"The run has not judged a claim with gold yet ({has}); the agreement shows as "
            "it judges them, and the page reloads when the run has finished."
        )
    if unparseable:
        return (
            f"{has.capitalize()}, but every verdict of this run on them was unparseable "
            f"({unparseable}): there is no verdict to compare with gold."
        )
    return (
        f"{has.capitalize()}, but this run judged none of them (its claims: {run.scope}). "
        "A run on all claims, or on the claims with gold, measures its agreement."
    )


def _report_snapshot(run: JudgeRun):
    """The done report snapshot of the run's judge over the run's claims, newest first: all
    systems pooled in a project of two systems or more, else the project's default."""
    systems = list(selectors.systems_for_project(project=run.project))
    if len(systems) >= 2:
        return selectors.snapshot_latest_done(
            project=run.project, judge=run.judge, all_systems=True, default=False
        )
    return selectors.snapshot_latest_done(
        project=run.project, judge=run.judge, system=systems[0] if systems else None
    )


def _from_report(run: JudgeRun, own: dict) -> dict | None:
    """The report's figure for the run's instrument, when a current snapshot holds it: one
    computed after the run finished, with no label changed since, over the run's claims (not
    a run on a filtered answers list). None otherwise."""
    if run.status != JudgeRun.Status.DONE or run.finished_at is None or run.answer_ids:
        return None
    snapshot = _report_snapshot(run)
    if snapshot is None or snapshot.computed_at is None or snapshot.computed_at < run.finished_at:
        return None
    if selectors.labels_since_count(project=run.project, since_id=snapshot.labels_at_compute):
        return None
    block = next(
        (
            block
            for block in snapshot.data.get("instruments") or []
            if (block.get("model") or "") == (run.model or "")
            and (block.get("prompt_version") or "") == (run.prompt_version or "")
        ),
        None,
    )
    if block is None or not block.get("n_audited"):
        return None
    return _report_figures(block, own, snapshot)


def _report_figures(block: dict, own: dict, snapshot) -> dict:
    """The run page's agreement from one instrument block of the report."""
    n = int(block["n_audited"])
    matrix = (block.get("confusion") or {}).get("matrix") or []
    confusion = [(row, [int(x) for x in matrix[i]]) for i, row in enumerate(VERDICT_ORDER)]
    kappa = fmt.finite(block.get("kappa"))
    method = (
        f"The report's audit of {block.get('instrument') or 'this instrument'} on {n} claims "
        "with gold (the newest verdict of this model and prompt version on each claim, this "
        "run's among them), as the dashboard and the audit card show it: agreement and "
        "Cohen's kappa with their 95% intervals, clustered by answer."
    )
    if own["n"] != n:
        method += f" This run's own verdicts meet gold on {own['n']} of those claims."
    return {
        **own,
        "n": n,
        "agreement": fmt.finite(block.get("agreement")),
        "agreement_ci": _interval(block.get("agreement_ci")),
        "kappa": kappa,
        "kappa_ci": _interval(block.get("kappa_ci")) if kappa is not None else None,
        "confusion": confusion if len(matrix) == len(VERDICT_ORDER) else own["confusion"],
        "method": method,
        "report_at": snapshot.computed_at,
        "report_all_systems": snapshot.all_systems,
    }


def _interval(pair) -> tuple[float, float] | None:
    """An interval whose two ends are figures, else None (nothing to show)."""
    if not pair or len(pair) != 2:
        return None
    low, high = fmt.finite(pair[0]), fmt.finite(pair[1])
    return None if low is None or high is None else (low, high)
