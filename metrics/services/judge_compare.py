"""Two judge versions compared on the same held-out gold claims (issue 28); the hook that
keeps a tuned judge's audit on held-out gold is `metrics.services.judge_heldout`.

Glue only: the design (strata, inclusion probabilities) comes from `inputs._Data.design` via
`judged_of`, the per-version figures from the judge audit's own `_agreement`, the paired math
from `metrics.stats.judge_compare`.
"""

import math

import numpy as np

from annotate.models import Project, RiskCategory
from annotate.vocabulary import Verdict
from judges import versions
from judges.models import Judge
from metrics import selectors
from metrics.services.active_audit import (
    DEFAULT_DELTA,
    DEFAULT_TARGET_AGREEMENT,
    _verdict_confidence,
)
from metrics.services.common import _pct, json_safe
from metrics.services.inputs import _Data
from metrics.services.judge_audit import _agreement
from metrics.services.judge_heldout import _heldout_mask
from metrics.services.judged import Judged, expansion, judged_of
from metrics.stats import judge_compare as jc
from metrics.stats.selective_split import split_certified_abstention

# -- comparing two versions -------------------------------------------------------------------


def _restrict(judged: Judged, keep: np.ndarray) -> Judged:
    """`judged` cut to (or reordered by) `keep`, a mask or index array on `judged.position`."""
    fields = {}
    for name in ("position", "judge_codes", "confidence", "gold_codes", "answer_ids", "strata"):
        fields[name] = getattr(judged, name)[keep]
    fields["audited"] = np.ones(fields["position"].size, dtype=bool)
    for name in ("weights", "census"):
        value = getattr(judged, name)
        fields[name] = None if value is None else value[keep]
    return judged._replace(**fields)


def _common(a: Judged, b: Judged) -> tuple[Judged, Judged]:
    """Both versions cut to the held-out gold claims both judged, in one order."""
    both = np.intersect1d(a.position[a.audited], b.position[b.audited])
    keep_a, keep_b = np.isin(a.position, both), np.isin(b.position, both)
    ra, rb = _restrict(a, keep_a), _restrict(b, keep_b)
    order_a, order_b = np.argsort(ra.position), np.argsort(rb.position)
    ra = _restrict(ra, order_a)
    rb = _restrict(rb, order_b)
    return ra, rb


def _outcomes(judged: Judged) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """(y, g) per figure: y the version's per-claim success, g the claims it is a rate over."""
    sup = Verdict.SUPPORTED.code
    gold_pos = (judged.gold_codes == sup).astype(float)
    judge_pos = (judged.judge_codes == sup).astype(float)
    return {
        "sensitivity": (judge_pos, gold_pos),
        "specificity": (1 - judge_pos, 1 - gold_pos),
        "agreement": (
            (judged.judge_codes == judged.gold_codes).astype(float),
            np.ones(judged.gold_codes.size),
        ),
    }


def _version_block(judge: Judge, judged: Judged) -> dict:
    fields, _ = _agreement(judged, math.nan)
    sup = Verdict.SUPPORTED.code
    score = np.where(
        np.isnan(judged.confidence), judged.judge_codes == sup, judged.confidence
    ).astype(float)
    return {
        "judge_id": judge.pk,
        "name": judge.name,
        "version": versions.judge_version_label(judge),
        "prompt_version": judge.prompt_version,
        "few_shot": len(judge.few_shot or []),
        "sensitivity": fields["sensitivity"],
        "specificity": fields["specificity"],
        "agreement": {"value": fields["agreement"], "ci": fields["agreement_ci"]},
        "kappa": {"value": fields["kappa"], "ci": fields["kappa_ci"]},
        "break_even": _break_even_text(
            jc.ppi_break_even(score, (judged.gold_codes == sup).astype(float))
        ),
    }


def _break_even_text(be: dict) -> dict:
    if be["narrows"] is None:
        be["says"] = "undefined (too few claims, or a constant verdict or gold)"
    elif be["narrows"]:
        be["says"] = "this judge narrows the interval"
    else:
        be["says"] = "gold alone is as good"
    return be


def _differences(a: Judged, b: Judged, mask: np.ndarray | None = None) -> dict:
    keep = np.ones(a.position.size, dtype=bool) if mask is None else mask
    weights = expansion(a)
    out = {}
    oa, ob = _outcomes(a), _outcomes(b)
    for key, (y_a, g) in oa.items():
        y_b = ob[key][0]
        out[key] = jc.paired_difference(
            y_b[keep],
            y_a[keep],
            g[keep],
            a.answer_ids[keep],
            strata=a.strata[keep],
            weights=None if weights is None else weights[keep],
        )
    return out


def _groups(data: _Data, a: Judged, b: Judged) -> dict:
    risk = data.claims["risk_category"].to_numpy()[a.position]
    names = a.names or []
    by_risk = []
    for category in RiskCategory.values:
        mask = risk == category
        if mask.any():
            by_risk.append({"group": category, "n": int(mask.sum()), **_differences(a, b, mask)})
    by_stratum = []
    for code in np.unique(a.strata):
        mask = a.strata == code
        label = names[code] if code < len(names) else str(code)
        by_stratum.append({"group": label, "n": int(mask.sum()), **_differences(a, b, mask)})
    return {"by_risk_category": by_risk, "by_stratum": by_stratum}


# -- where each version abstains -------------------------------------------------------------


def _abstain_version(judge: Judge, judged: Judged, heldout: np.ndarray) -> dict:
    """One version's abstention: the threshold chosen on its development gold claims, its
    error where it decides certified on its held-out gold claims (`heldout` on `judged`)."""
    conf = _verdict_confidence(judged.judge_codes, judged.confidence)
    agree = judged.judge_codes == judged.gold_codes
    ok = judged.audited & np.isfinite(conf)
    dev, held = ok & ~heldout, ok & heldout
    head = {
        "judge_id": judge.pk,
        "name": judge.name,
        "version": versions.judge_version_label(judge),
    }
    if not held.any() and not dev.any():
        return {**head, "threshold": None, "certified": False, "says": "no confidence reported"}
    result = split_certified_abstention(
        conf[dev],
        agree[dev],
        conf[held],
        agree[held],
        heldout_answer_ids=judged.answer_ids[held],
        heldout_strata=judged.strata[held],
        heldout_weights=expansion(judged._replace(audited=held)),
        target=DEFAULT_TARGET_AGREEMENT,
        delta=DEFAULT_DELTA,
    )
    cov, err = result.coverage, result.error
    return {
        **head,
        "threshold": result.threshold,
        "coverage": {"value": cov.value, "ci": cov.ci, "n": cov.n},
        "error": {"value": err.value, "upper": err.upper, "n": err.n},
        "certified": result.certified,
        "says": "certified" if result.certified else f"not certified at δ = {result.delta:g}",
        "n_development": result.n_development,
        "n_heldout": result.n_heldout,
        "method": result.method,
    }


def _abstain(triples: list[tuple[Judge, Judged, np.ndarray]]) -> dict:
    """Per version (judge, its judged claims, their held-out mask), where it abstains."""
    blocks = {
        side: _abstain_version(judge, judged, heldout)
        for side, (judge, judged, heldout) in zip(("a", "b"), triples, strict=True)
    }
    return {
        **blocks,
        "target_agreement": DEFAULT_TARGET_AGREEMENT,
        "delta": DEFAULT_DELTA,
        "method": (
            "The judge decides alone at confidence ≥ the threshold and abstains below it; the "
            f"threshold is chosen on development gold only (agreement ≥ "
            f"{_pct(DEFAULT_TARGET_AGREEMENT)} with probability ≥ {_pct(1 - DEFAULT_DELTA)}, "
            "fixed-sequence exact tests), then certified on held-out gold only: the one-sided "
            f"{_pct(1 - DEFAULT_DELTA)} Clopper–Pearson bound on the error where the judge "
            "decides (at the Korn–Graubard effective sample size with answers or weights) must "
            f"be at most {_pct(1 - DEFAULT_TARGET_AGREEMENT)}."
        ),
    }


def _recommendation(a: dict, b: dict, diff: dict) -> str:
    """One sentence: which version and why."""
    lo, hi = diff["agreement"]["ci"]
    delta = diff["agreement"]["value"]
    if not math.isfinite(delta):
        return "No recommendation: the two versions share no held-out gold claim."
    if lo > 0:
        return (
            f"Use {b['name']}: on the same held-out claims it agrees with gold "
            f"{_pct(delta)} more often than {a['name']} (95% interval {_pct(lo)} to {_pct(hi)})."
        )
    if hi < 0:
        return (
            f"Keep {a['name']}: {b['name']} agrees with gold {_pct(-delta)} less often on the "
            f"same held-out claims (95% interval {_pct(-hi)} to {_pct(-lo)})."
        )
    return (
        f"Keep {a['name']}: the held-out claims cannot tell the versions apart (agreement "
        f"difference {_pct(delta)}, 95% interval {_pct(lo)} to {_pct(hi)}); label more "
        "held-out gold to decide."
    )


def judge_compare(*, project: Project, a: Judge, b: Judge, data: _Data | None = None) -> dict:
    """Versions `a` (the baseline) and `b` on the held-out gold claims both judged: each one's
    figures with intervals clustered by answer, the paired differences b − a, per risk category
    and stratum, the break-even indicators and the recommendation. Without a split, on every
    gold claim both judged, and it says so."""
    data = data or _Data(project=project, progress=lambda *_: None)
    judged_a = judged_of(data, selectors.judge_verify_columns(judge=a))
    judged_b = judged_of(data, selectors.judge_verify_columns(judge=b))
    split = versions.gold_split_get(project=project)
    for_a = _heldout_mask(project.pk, judged_a.answer_ids)
    for_b = _heldout_mask(project.pk, judged_b.answer_ids)
    abstain = None
    if for_a is not None:
        abstain = _abstain([(a, judged_a, for_a), (b, judged_b, for_b)])
        judged_a = judged_a._replace(audited=judged_a.audited & for_a)
        judged_b = judged_b._replace(audited=judged_b.audited & for_b)
    ca, cb = _common(judged_a, judged_b)
    block_a, block_b = _version_block(a, ca), _version_block(b, cb)
    diff = _differences(ca, cb)
    claims = int(ca.position.size)
    scope = (
        f"held-out gold (seed {split.seed}, {_pct(split.heldout_share)} of answers held out)"
        if split
        else "all gold (the project's gold is not split: no held-out share exists yet)"
    )
    return json_safe(
        {
            "a": block_a,
            "b": block_b,
            "claims": claims,
            "answers": int(np.unique(ca.answer_ids).size),
            "scope": scope,
            "split": split is not None,
            "differences": diff,
            **_groups(data, ca, cb),
            "recommendation": _recommendation(block_a, block_b, diff),
            **({"abstain": abstain} if abstain is not None else {}),
            "method": (
                f"{b.name} − {a.name} on the {claims} claims of {scope} both versions judged; "
                "per version: sensitivity, specificity and agreement clustered by answer and "
                "stratified by the audit design, κ clustered by answer; paired differences "
                "linearised on the same claims, clustered by answer within design strata (the "
                "unpaired interval beside it treats the versions as audited apart); McNemar's exact "
                "test on the discordant claims (claims taken as independent) and the clustered Wald "
                "test; PPI break-even: the version's correlation with gold against 1/√(n − 2) "
                "(Mani et al. 2025)."
            ),
        }
    )
