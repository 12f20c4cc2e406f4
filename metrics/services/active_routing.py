"""The lead's action on the active audit's selective judging (issue 14): route to the judge the
claims whose verdict's confidence clears the threshold certified on the audited claims, or stop
routing. The report's view of it is `metrics.services.active_audit`."""

import numpy as np
from django.db import transaction

from annotate.models import Claim, Project
from judges.models import Judge
from metrics import format as fmt
from metrics import selectors, stats
from metrics.services.active_audit import (
    DEFAULT_DELTA,
    DEFAULT_TARGET_AGREEMENT,
    _finite,
    _verdict_confidence,
)
from metrics.services.common import _codes, _newest_per_claim
from metrics.services.instruments import _instrument_keys


class RoutingError(ValueError):
    """Routing refused; the message names the field or the reason, nothing was written."""


ROUTE_BATCH = 10_000


def selective_judged_columns(*, project: Project, judge: Judge) -> dict:
    """The judge's newest instrument (as the report's "judge"): per judged claim its id, its
    confidence in its own verdict, and for gold claims whether it agrees with gold.

    Read now from the tables (the routing acts on today's verdicts and gold, not on a stored
    report): every gold claim counts as audited here, where the report leaves out gold made
    only outside the queue and claims of abstentions, so with such gold the threshold applied
    can differ slightly from the report's."""
    verdicts = selectors.judge_verify_columns(judge=judge)
    keys = _instrument_keys(verdicts)
    if keys:
        model, prompt_version = keys[0]
        verdicts = verdicts[
            (verdicts["model"] == model) & (verdicts["prompt_version"] == prompt_version)
        ]
    newest = _newest_per_claim(verdicts)
    gold = selectors.gold_columns(project=project).set_index("claim_id")["verdict"]
    claim_ids = newest["claim_id"].to_numpy(dtype=np.int64)
    codes = _codes(newest["verdict"])
    confidence = _verdict_confidence(codes, newest["confidence"].to_numpy(dtype=float))
    gold_codes = _codes(gold.reindex(claim_ids))
    return {
        "claim_ids": claim_ids,
        "confidence": confidence,
        "audited": gold_codes >= 0,
        "agree": gold_codes == codes,
    }


@transaction.atomic
def selective_routing_apply(
    *,
    project: Project,
    judge: Judge,
    target: float = DEFAULT_TARGET_AGREEMENT,
    delta: float = DEFAULT_DELTA,
) -> dict:
    """Route to the judge every claim whose newest verdict's confidence is at or above the
    threshold certified on the audited claims (`stats.selective_threshold`), clear the others,
    and turn the project's selective judging on: one transaction, bulk updates.

    Raises `RoutingError` (nothing written) when the judge gives no confidences or no
    threshold reaches the target agreement at level δ."""
    if not 0.0 < target < 1.0:
        raise RoutingError("target agreement must be between 0 and 1")
    if not 0.0 < delta < 1.0:
        raise RoutingError("delta must be between 0 and 1")
    cols = selective_judged_columns(project=project, judge=judge)
    audited = cols["audited"] & np.isfinite(cols["confidence"])
    if not audited.any():
        raise RoutingError(
            "selective judging needs audited claims with the judge's confidence: this judge "
            "gives no confidences or has no verdict on a gold claim"
        )
    result = stats.selective_threshold(
        cols["confidence"][audited], cols["agree"][audited], target=target, delta=delta
    )
    threshold = _finite(result.threshold)
    if threshold is None:
        raise RoutingError(
            f"no confidence threshold certifies {fmt.percent(target)} agreement with gold at "
            f"δ = {delta:g} on the {int(audited.sum())} audited claims: nothing routed"
        )
    chosen = cols["claim_ids"][np.isfinite(cols["confidence"]) & (cols["confidence"] >= threshold)]
    locked = Project.objects.select_for_update().get(pk=project.pk)
    Claim.objects.filter(project=locked, routed_to_judge=True).update(routed_to_judge=False)
    ids = chosen.tolist()
    for start in range(0, len(ids), ROUTE_BATCH):
        Claim.objects.filter(project=locked, pk__in=ids[start : start + ROUTE_BATCH]).update(
            routed_to_judge=True
        )
    Project.objects.filter(pk=locked.pk).update(selective_judging=True)
    project.selective_judging = True
    return {"threshold": threshold, "routed": len(ids), "method": result.method}


@transaction.atomic
def selective_routing_clear(*, project: Project) -> int:
    """Stop routing: every claim back to the analysts' queue, selective judging off."""
    locked = Project.objects.select_for_update().get(pk=project.pk)
    cleared = Claim.objects.filter(project=locked, routed_to_judge=True).update(
        routed_to_judge=False
    )
    Project.objects.filter(pk=locked.pk).update(selective_judging=False)
    project.selective_judging = False
    return cleared
