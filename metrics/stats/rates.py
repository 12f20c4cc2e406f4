"""Claim-level and answer-level rates, coverage, F1, and the plain-English method string."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from annotate.vocabulary import VERDICTS, Verdict
from metrics.format import percent

from ._common import NAN, as_label_array, verdict_codes


def claim_rates(verdicts: Iterable[Any]) -> dict[str, Any]:
    """Pooled claim rates.

    Formula: with n = #SUPPORTED + #CONTRADICTED + #NOT_IN_PILE,
    faithfulness = supported/n, contradiction_rate = contradicted/n, not_in_pile_rate =
    not_in_pile/n, hallucination_rate = 1 − faithfulness. Values outside the three verdicts
    (``"UNPARSEABLE"``, None) are not counted as any verdict; their number is reported as
    ``excluded``. All rates are nan when n = 0. Source: DESIGN.md "Metrics: definitions"; FActScore
    (Min et al. 2023) for faithfulness as the supported share of atomic claims.
    """
    codes = verdict_codes(verdicts)
    counts = np.bincount(codes[codes >= 0], minlength=len(VERDICTS))
    n = int(counts.sum())
    by = {verdict: int(counts[verdict.code]) for verdict in VERDICTS}
    s, c, nip = by[Verdict.SUPPORTED], by[Verdict.CONTRADICTED], by[Verdict.NOT_IN_PILE]
    faith = s / n if n else NAN
    return {
        **{verdict.value: count for verdict, count in by.items()},
        "n": n,
        "excluded": int(codes.size - n),
        "faithfulness": faith,
        "contradiction_rate": c / n if n else NAN,
        "not_in_pile_rate": nip / n if n else NAN,
        "hallucination_rate": 1.0 - faith if n else NAN,
    }


def answer_rates(answer_ids: Iterable[Any], verdicts: Iterable[Any]) -> dict[str, Any]:
    """Per-answer rates: what a reader of one answer experiences.

    Formula: for each answer with at least one counted verdict, f_a = supported_a / claims_a;
    mean_per_answer_faithfulness = mean_a f_a; answers_with_unsupported = #{a : claims_a >
    supported_a} (at least one CONTRADICTED or NOT_IN_PILE claim); answers_with_unsupported_rate =
    that / n_answers. Claims whose verdict is not one of the three are ignored; an answer left with
    none is not counted. Rates are nan when n_answers = 0. Source: DESIGN.md "per-answer
    unsupported rate".
    """
    ids = as_label_array(answer_ids)
    codes = verdict_codes(verdicts)
    if ids.shape != codes.shape:
        raise ValueError(f"answer_ids and verdicts differ in length: {ids.size} vs {codes.size}")
    keep = codes >= 0
    ids, codes = ids[keep], codes[keep]
    if ids.size == 0:
        return {
            "n_answers": 0,
            "mean_per_answer_faithfulness": NAN,
            "answers_with_unsupported": 0,
            "answers_with_unsupported_rate": NAN,
        }
    group, uniques = pd.factorize(ids)
    total = np.bincount(group, minlength=len(uniques))
    sup = np.bincount(
        group, weights=(codes == Verdict.SUPPORTED.code).astype(float), minlength=len(uniques)
    )
    n_answers = int(len(uniques))
    with_unsupported = int(np.sum(sup < total))
    return {
        "n_answers": n_answers,
        "mean_per_answer_faithfulness": float(np.mean(sup / total)),
        "answers_with_unsupported": with_unsupported,
        "answers_with_unsupported_rate": with_unsupported / n_answers,
    }


def coverage(grounded_fact_ids: Iterable[Any], all_fact_ids: Iterable[Any]) -> float:
    """Coverage (groundedness): the share of the pile's facts that the answer used.

    Formula: |{f ∈ F : some supported claim grounds f}| / |F|, with F = set(all_fact_ids);
    ids outside F are ignored. nan when F is empty. Source: seed 000, Definition 1 (recall over
    facts); RAGAS context recall (Es et al. 2024).
    """
    facts = set(all_fact_ids)
    if not facts:
        return NAN
    return len(facts.intersection(grounded_fact_ids)) / len(facts)


def f1(faithfulness: float, coverage: float) -> float:
    """Harmonic mean of faithfulness and coverage (the F1 of generation).

    Formula: 2·F·C/(F + C); 0 when both are measured as 0 (the limit, not a guess); nan when either
    is nan. Source: van Rijsbergen (1979); seed 000, Proposition 2.
    """
    p, r = float(faithfulness), float(coverage)
    if np.isnan(p) or np.isnan(r):
        return NAN
    if p + r == 0.0:
        return 0.0
    return 2.0 * p * r / (p + r)


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def _percent(part: int, whole: int) -> str:
    text = percent(part / whole)  # the pages' one rounding rule: 5 of 8 reads 63%
    # Never round a partial share to a clean 0% or 100%: that would claim none / all.
    if text == "100%" and part < whole:
        return ">99%"
    if text == "0%" and part > 0:
        return "<1%"
    return text


def method_string(
    supported: int,
    n_claims: int,
    n_answers: int,
    contradicted: int,
    source: str = "manual",
    level: str = "claim level",
    against: str = "the retrieved pile",
) -> str:
    """The sentence that goes beside every faithfulness figure: rate, counts, and method.

    E.g. ``"70% of claims supported across 27 claims in 5 answers; 1 contradicted. Method: manual,
    claim level, against the retrieved pile."`` Counts are pluralised ("1 claim", "1 answer"); a
    share is never rounded to 0% or 100% unless it is exactly that ("<1%", ">99%"); with no claims
    it says so instead of printing a rate. Source: DESIGN.md "method string"; seed 004 (report every
    rate with its numerator, denominator and method).
    """
    s, n, a, c = int(supported), int(n_claims), int(n_answers), int(contradicted)
    if min(s, n, a, c) < 0 or s > n or c > n:
        raise ValueError("counts must be non-negative and supported, contradicted <= n_claims")
    method = f"Method: {source}, {level}, against {against}."
    if n == 0:
        return f"No claims assessed yet (0 claims in {_plural(a, 'answer')}). {method}"
    return (
        f"{_percent(s, n)} of claims supported across {_plural(n, 'claim')} in "
        f"{_plural(a, 'answer')}; {c} contradicted. {method}"
    )
