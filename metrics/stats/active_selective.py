"""Selective judging with a guarantee: the confidence threshold above which the judge may decide."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from scipy.stats import beta as beta_dist
from scipy.stats import binom

from metrics.format import percent

from ._common import NAN, as_binary

# --------------------------------------------------------------------------------------------
# 5. selective judging (Trust or Escalate)


@dataclass(frozen=True)
class SelectiveResult:
    """The judge may decide alone at confidence ≥ ``threshold`` (None: nowhere certified)."""

    threshold: float | None
    accepted_share: float
    agreement: float
    lower_bound: float
    n_accepted: int
    n: int
    target: float
    delta: float
    tests: list[dict[str, float]]
    method: str

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def selective_threshold(
    confidence: Iterable[float],
    agree: Iterable[Any],
    target: float = 0.9,
    delta: float = 0.1,
    *,
    thresholds: Iterable[float] | str = "deciles",
) -> SelectiveResult:
    """A confidence threshold above which the judge agrees with gold at ≥ target, w.p. ≥ 1 − δ.

    On the audited claims (``confidence`` the judge's confidence in its verdict, ``agree`` 1 when
    its verdict matched gold): candidate thresholds t_1 > t_2 > … (``"deciles"``, the default:
    the confidence deciles 0.9, 0.8, …, 0.0; ``"distinct"``: every distinct confidence; or an
    explicit list), tested in that fixed order. At t_j, H0: P(agree | conf ≥ t_j) < target,
    with the exact binomial p-value p_j = P(Bin(m_j, target) ≥ k_j) (m_j audited claims at or
    above t_j, k_j agreeing; Clopper–Pearson one-sided). Testing continues while p_j ≤ δ; the
    threshold is the last rejected t_j (None when the first test fails). Fixed-sequence testing
    controls the family-wise error at δ without a multiplicity correction, so with probability
    ≥ 1 − δ over the audit, the agreement among claims at or above the threshold is ≥ target.
    The lower bound reported is the one-sided (1 − δ) Clopper–Pearson bound there.

    Assumption: the audited claims are exchangeable draws from the claims the threshold will be
    applied to (a uniform random audit of the project). Claims of one answer are correlated; the
    test counts claims, not answers, so the guarantee is over claims drawn like these and is
    optimistic when one answer contributes many claims (then audit more answers, fewer claims
    each). Source: Jung, Brahman & Choi (2025), "Trust or Escalate", ICLR, arXiv:2407.18370,
    §3 (fixed-sequence testing); Bauer (1991); Bates et al. (2021), "Learn then Test"; Clopper &
    Pearson (1934).
    """
    conf = np.asarray(
        confidence if isinstance(confidence, np.ndarray) else list(confidence), dtype=float
    ).reshape(-1)
    ok = as_binary(agree, "agree")
    if conf.size != ok.size:
        raise ValueError(f"confidence and agree differ in length: {conf.size} vs {ok.size}")
    if np.isnan(conf).any():
        raise ValueError("confidence contains NaN")
    tgt, dl = float(target), float(delta)
    if not 0.0 < tgt < 1.0:
        raise ValueError(f"target must be strictly between 0 and 1, got {target!r}")
    if not 0.0 < dl < 1.0:
        raise ValueError(f"delta must be strictly between 0 and 1, got {delta!r}")
    n = conf.size
    if isinstance(thresholds, str):
        if thresholds == "deciles":
            cands = np.quantile(conf, np.linspace(0.9, 0.0, 10)) if n else np.empty(0)
        elif thresholds == "distinct":
            cands = np.unique(conf)[::-1]
        else:
            raise ValueError(
                f"thresholds must be 'deciles', 'distinct' or numbers, not {thresholds!r}"
            )
    else:
        cands = np.sort(np.asarray(list(thresholds), dtype=float))[::-1]
    cands = np.unique(cands)[::-1]
    order = np.argsort(-conf, kind="stable")
    conf_desc, ok_desc = conf[order], ok[order]
    cum = np.cumsum(ok_desc)
    tests: list[dict[str, float]] = []
    chosen = None
    for t in cands:
        m = int(np.searchsorted(-conf_desc, -t, side="right"))  # claims with conf ≥ t
        k = int(cum[m - 1]) if m else 0
        pval = float(binom.sf(k - 1, m, tgt)) if m else 1.0
        lower = float(beta_dist.ppf(dl, k, m - k + 1)) if k > 0 else 0.0
        tests.append({"threshold": float(t), "n": m, "agree": k, "p_value": pval, "lower": lower})
        if pval > dl:
            break
        chosen = tests[-1]
    what = (
        f"fixed-sequence testing over {len(cands)} thresholds, exact binomial, "
        f"P(agreement ≥ {percent(tgt)}) ≥ {percent(1 - dl)} over audited claims drawn like "
        f"these ({n} audited claims, assumed exchangeable: claims of one answer are counted as "
        "independent)"
    )
    if chosen is None:
        return SelectiveResult(
            None, 0.0, NAN, NAN, 0, n, tgt, dl, tests,
            f"No threshold certified: the judge may decide no claim alone; {what}.",
        )  # fmt: skip
    m, k = int(chosen["n"]), int(chosen["agree"])
    return SelectiveResult(
        threshold=chosen["threshold"],
        accepted_share=m / n,
        agreement=k / m,
        lower_bound=chosen["lower"],
        n_accepted=m,
        n=n,
        target=tgt,
        delta=dl,
        tests=tests,
        method=(
            f"The judge may decide alone at confidence ≥ {chosen['threshold']:.3f} "
            f"({percent(m / n)} of audited claims; agreement {percent(k / m, 1)}, lower "
            f"{percent(1 - dl)} bound {percent(chosen['lower'], 1)}); {what}."
        ),
    )
