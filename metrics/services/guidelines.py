"""Agreement per guideline version (issue 28 item 5): when the marking guidelines change while
a project is being labelled, the analysts' agreement with each other and the judge's agreement
with gold are shown for each version, and gold made under an older version being pooled with
newer gold is said, not hidden.

A label records the project's guidelines version in force when it was saved
(`Label.guideline_version`; none for imported labels). A gold verdict carries no version of its
own: it is counted under the newest version among the labels that stand behind it (the claim's
counted labels: a unanimous gold is decided again when its newest label is saved, and a lead
adjudicates claims whose labels are already there). A claim whose labels carry no version is
"not recorded".

The section is in the report only when the labels carry two recorded versions or more: a
project that never changed its guidelines reads exactly as before.
"""

import math

import numpy as np
import pandas as pd

from annotate.vocabulary import VERDICT_VALUES
from metrics import stats
from metrics.services import report_types as t
from metrics.services.inputs import _Data
from metrics.services.judged import Judged, expansion

NOT_RECORDED = -1  # the version code of a label (or gold) saved with no version


def _label_versions(labels: pd.DataFrame) -> np.ndarray:
    """Each counted label's guidelines version, NOT_RECORDED where it has none."""
    versions = pd.to_numeric(labels["guideline_version"], errors="coerce")
    return versions.fillna(NOT_RECORDED).to_numpy(dtype=np.int64)


def gold_versions(data: _Data) -> np.ndarray:
    """Per claim of the report, the guidelines version its gold was made under: the newest
    version among its counted labels; NOT_RECORDED where none has one (or no gold)."""
    labels = data.labels
    newest = pd.Series(_label_versions(labels), index=labels["claim_id"].to_numpy())
    newest = newest.groupby(level=0).max()
    out = np.array(newest.reindex(data.claim_ids).fillna(NOT_RECORDED), dtype=np.int64)
    out[data.claims["gold"].to_numpy() < 0] = NOT_RECORDED
    return out


def _analyst_agreement(labels: pd.DataFrame) -> dict:
    """Raw pairwise agreement and Krippendorff's alpha among the labels of one version (a pair
    counts when both its labels were made under it)."""
    per_claim = labels.groupby("claim_id")["annotator_id"].transform("size")
    multi = labels[per_claim >= 2]
    pairs = multi.merge(multi, on="claim_id", suffixes=("_a", "_b"))
    pairs = pairs[pairs["annotator_id_a"] < pairs["annotator_id_b"]]
    alpha = math.nan
    if not multi.empty:
        matrix = multi.pivot_table(
            index="annotator_id", columns="claim_id", values="code", aggfunc="first"
        )
        alpha = stats.krippendorff_alpha(matrix.to_numpy(dtype=float))
    return {
        "labels": len(labels),
        "analysts": int(labels["annotator_id"].nunique()),
        "multi_labelled_claims": int(multi["claim_id"].nunique()),
        "analyst_pairs": len(pairs),
        "analyst_agreement": (
            float(np.mean(pairs["code_a"].to_numpy() == pairs["code_b"].to_numpy()))
            if len(pairs)
            else math.nan
        ),
        "krippendorff_alpha": alpha,
    }


def _judge_agreement(judged: Judged | None, versions: np.ndarray, version: int) -> dict:
    """The judge's agreement and κ with the gold of one version, clustered by answer (each
    audited claim weighted by its share of the project where the design samples unequally)."""
    empty = {
        "judge_audited": 0,
        "judge_agreement": math.nan,
        "judge_agreement_ci": (math.nan, math.nan),
        "judge_kappa": math.nan,
        "judge_kappa_ci": (math.nan, math.nan),
    }
    if judged is None:
        return empty
    audited = np.flatnonzero(judged.audited)
    share = expansion(judged)
    here = versions[judged.position[audited]] == version
    n = int(here.sum())
    if n == 0:
        return empty
    gold, judge = judged.gold_codes[audited][here], judged.judge_codes[audited][here]
    ids = judged.answer_ids[audited][here]
    weights = None if share is None else share[here]
    agreement = stats.design_proportion((gold == judge).astype(float), ids, weights=weights)
    names = np.asarray(VERDICT_VALUES, dtype=object)
    kappa = stats.design_kappa(names[gold], names[judge], ids, weights=weights) if n >= 2 else None
    return {
        "judge_audited": n,
        "judge_agreement": agreement.value,
        "judge_agreement_ci": agreement.ci,
        "judge_kappa": kappa.value if kappa is not None else math.nan,
        "judge_kappa_ci": kappa.ci if kappa is not None else (math.nan, math.nan),
    }


def _warning(rows: list[t.GuidelineVersion], current: int) -> str | None:
    """One sentence when gold of an older version is pooled with newer gold."""
    with_gold = [row for row in rows if row.gold_claims and row.version is not None]
    if len(with_gold) < 2:
        return None
    older = sum(row.gold_claims for row in with_gold if row.version < current)
    parts = ", ".join(f"{row.gold_claims} under v{row.version}" for row in with_gold)
    return (
        f"Gold made under different guidelines is pooled: {parts} (current: v{current}); "
        f"{older} gold claim{'' if older == 1 else 's'} predate{'s' if older == 1 else ''} the "
        "current guidelines. If the change moved verdicts, every figure mixes two definitions: "
        "compare the agreement per version, and re-label or adjudicate the older gold."
    )


def guidelines_section(*, project, data: _Data, judge_run) -> t.Guidelines | None:
    """Agreement per guidelines version, or None when the labels carry fewer than two."""
    labels = data.labels[data.labels["code"] >= 0]
    label_versions = _label_versions(labels)
    recorded = sorted({int(v) for v in label_versions if v != NOT_RECORDED}, reverse=True)
    if len(recorded) < 2:
        return None
    judged = judge_run.judged if judge_run is not None else None
    versions = gold_versions(data)
    rows = []
    for version in [*recorded, NOT_RECORDED]:
        part = labels[label_versions == version]
        if version == NOT_RECORDED and part.empty:
            continue
        rows.append(
            t.GuidelineVersion(
                version=None if version == NOT_RECORDED else version,
                current=version == project.guidelines_version,
                gold_claims=int((versions == version).sum()),
                **_analyst_agreement(part),
                **_judge_agreement(judged, versions, version),
            )
        )
    current = project.guidelines_version
    return t.Guidelines(
        current_version=current,
        versions=tuple(rows),
        mixed_gold=sum(1 for row in rows if row.gold_claims and row.version is not None) >= 2,
        warning=_warning(rows, current),
        method=(
            "Each label counts under the guidelines version in force when it was saved; a gold "
            "verdict under the newest version among its labels. Analysts' agreement: the share "
            "of pairs of labels on one claim, both made under the version, that agree, and "
            "Krippendorff's alpha over those claims. The judge's (the report's headline "
            "instrument) agreement and Cohen's kappa with that version's gold: intervals "
            "clustered by answer."
        ),
    )
