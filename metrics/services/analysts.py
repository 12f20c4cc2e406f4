"""Inter-analyst agreement: Krippendorff's alpha, each analyst against gold, pairwise kappas."""

import math

import numpy as np
import pandas as pd

from metrics import stats
from metrics.services.inputs import _Data


def _alpha(multi: pd.DataFrame) -> float:
    """Krippendorff's alpha over the claims with two or more analysts' labels."""
    if multi.empty:
        return math.nan
    matrix = multi.pivot_table(
        index="annotator_id", columns="claim_id", values="code", aggfunc="first"
    )
    return stats.krippendorff_alpha(matrix.to_numpy(dtype=float))


def _per_analyst(data: _Data, labels: pd.DataFrame) -> list[dict]:
    """Each analyst's agreement and kappa with gold, over the claims that have gold."""
    names = data.annotators
    gold = pd.Series(data.claims["gold"].to_numpy(), index=data.claim_ids)
    gold = gold[gold >= 0]
    with_gold = labels.merge(gold.rename("gold"), left_on="claim_id", right_index=True)
    rows = []
    for annotator_id, part in with_gold.groupby("annotator_id"):
        a, b = part["code"].to_numpy(), part["gold"].to_numpy()
        rows.append(
            {
                "annotator": names.get(annotator_id, str(annotator_id)),
                "n": len(part),
                "agreement": float(np.mean(a == b)),
                "kappa": stats.cohen_kappa(a, b),
            }
        )
    return rows


def _pairwise(names: dict, pairs: pd.DataFrame) -> list[dict]:
    """Agreement and kappa of each pair of analysts over the claims both labelled."""
    rows = []
    for (a_id, b_id), part in pairs.groupby(["annotator_id_a", "annotator_id_b"]):
        rows.append(
            {
                "a": names.get(a_id, str(a_id)),
                "b": names.get(b_id, str(b_id)),
                "n": len(part),
                "agreement": float(np.mean(part["code_a"] == part["code_b"])),
                "kappa": stats.cohen_kappa(part["code_a"].to_numpy(), part["code_b"].to_numpy()),
            }
        )
    return rows


def _analysts(data: _Data) -> dict:
    """Inter-analyst agreement: Krippendorff's alpha, per-analyst agreement with gold, kappas."""
    labels = data.labels[data.labels["code"] >= 0]
    per_claim = labels.groupby("claim_id")["annotator_id"].transform("size")
    multi = labels[per_claim >= 2]
    alpha = _alpha(multi)
    per_analyst = _per_analyst(data, labels)
    pairs = multi.merge(multi, on="claim_id", suffixes=("_a", "_b"))
    pairs = pairs[pairs["annotator_id_a"] < pairs["annotator_id_b"]]
    pairwise = _pairwise(data.annotators, pairs)
    human_kappa = (
        stats.cohen_kappa(pairs["code_a"].to_numpy(), pairs["code_b"].to_numpy())
        if len(pairs)
        else math.nan
    )
    return {
        "krippendorff_alpha": alpha,
        "analysts": int(labels["annotator_id"].nunique()),
        "labels": len(labels),
        "multi_labelled_claims": int(multi["claim_id"].nunique()),
        "per_analyst": per_analyst,
        "pairwise": pairwise,
        "human_human_kappa": human_kappa,
        "human_pairs": len(pairs),
    }
