"""A judge whose error rates differ by risk category (seed 000's "Rigor flag").

Sensitivity and specificity per risk category with Wilson intervals, a test of their equality
across categories, and — when they differ — the debiased estimates (Rogan–Gladen and PPI++)
recomputed per category and combined by each category's share of the judged claims, replacing
the pooled ones in the instrument block (the pooled ones are kept here, and the page says so).
"""

import math

import numpy as np

from annotate.models import RiskCategory
from annotate.vocabulary import Verdict
from metrics import stats
from metrics.services import estimators
from metrics.services.audit_design import audited_unequally
from metrics.services.inputs import _Data
from metrics.stats import heterogeneity

PER_CATEGORY_RG_METHOD = (
    "Rogan–Gladen per risk category (each category's own sensitivity and specificity), "
    "combined by each category's share of the judged claims; delta-method interval (95%)"
)
PER_CATEGORY_PPI_METHOD = (
    "PPI++ per risk category (stratified PPI, Fisch et al. 2024), combined by each category's "
    "share of the judged claims (95%)"
)


def _categories(risk: np.ndarray) -> list[str]:
    present = set(risk[~_missing(risk)].tolist())
    known = [cat for cat in RiskCategory.values if cat in present]
    return known + sorted(present - set(known))


def _missing(risk: np.ndarray) -> np.ndarray:
    return np.array([value is None or value == "" for value in risk], dtype=bool)


def _rates(gold_s: np.ndarray, judge_s: np.ndarray) -> dict:
    """Sensitivity and specificity (positive = SUPPORTED) with Wilson intervals, from 0/1."""
    out = {}
    for name, truth, hit in (
        ("sensitivity", gold_s, judge_s),
        ("specificity", ~gold_s, ~judge_s),
    ):
        n = int(truth.sum())
        k = int((truth & hit).sum())
        out[name] = {
            "value": k / n if n else math.nan,
            "ci": stats.wilson_interval(k, n) if n else (math.nan, math.nan),
            "successes": k,
            "n": n,
        }
    out["youden_j"] = out["sensitivity"]["value"] + out["specificity"]["value"] - 1.0
    return out


def _method(result: dict) -> str:
    eq = result["equality"]
    tests = "; ".join(
        f"{name}: {eq[name]['test']}"
        + (f", p = {eq[name]['p_value']:.3g}" if math.isfinite(eq[name]["p_value"]) else "")
        for name in ("sensitivity", "specificity")
    )
    text = (
        "Sensitivity and specificity per risk category, Wilson intervals (95%); equality "
        f"across categories tested per error rate ({tests}); the rates differ when the "
        "Bonferroni-combined p = min(1, 2·min p) is below 0.05."
    )
    if result["correction"] == "per_category":
        text += (
            " They differ: the debiased estimates use each category's own correction, combined "
            "by each category's share of the judged claims."
        )
    else:
        text += " The debiased estimates use the pooled correction."
    return text


def _figure(value) -> str:
    return f"{value:.3f}" if value is not None and math.isfinite(value) else "n/a"


def _note(result: dict) -> str | None:
    if result["correction"] != "per_category":
        return None
    note = (
        "The judge's error rates differ by risk category "
        f"(p = {result['equality']['p_value']:.3g}): the Rogan–Gladen and PPI++ estimates "
        "above correct each category with its own sensitivity and specificity and combine "
        "them by each category's share of the judged claims. The pooled correction would "
        f"have given Rogan–Gladen {_figure(result['pooled']['debiased_faithfulness']['value'])}"
        f" and PPI++ {_figure(result['pooled']['ppi_faithfulness']['value'])}."
    )
    stuck = result["per_category"]["debiased_faithfulness"]["uncorrectable"]
    if stuck:
        note += (
            f" Rogan–Gladen cannot be corrected in {', '.join(stuck)} (no audited claim of one "
            "gold class there, or the judge no better than chance): audit more of it."
        )
    return note


def _per_category_estimates(
    cats: list[str], risk: np.ndarray, judged, judge_s: np.ndarray, audited_rates: dict
) -> tuple[dict, dict]:
    audited = judged.audited
    score = np.where(np.isnan(judged.confidence), judge_s.astype(float), judged.confidence)
    gold_s = judged.gold_codes == Verdict.SUPPORTED.code
    rg_groups, ppi_groups = {}, {}
    for cat in cats:
        in_cat = risk == cat
        rates = audited_rates[cat]
        rg_groups[cat] = {
            "pos": int((judge_s & in_cat).sum()),
            "n": int(in_cat.sum()),
            "se_successes": rates["sensitivity"]["successes"],
            "se_n": rates["sensitivity"]["n"],
            "sp_successes": rates["specificity"]["successes"],
            "sp_n": rates["specificity"]["n"],
        }
        ppi_groups[cat] = {
            "gold": gold_s[in_cat & audited].astype(float),
            "judge_on_gold": score[in_cat & audited],
            "judge_on_rest": score[in_cat & ~audited],
        }
    rg = heterogeneity.stratified_rogan_gladen(rg_groups)
    ppi = heterogeneity.stratified_ppi(ppi_groups)
    return (
        {
            "value": rg["value"],
            "ci": rg["ci"],
            "method": PER_CATEGORY_RG_METHOD,
            "uncorrectable": rg["uncorrectable"],
        },
        {
            "value": ppi["value"],
            "ci": ppi["ci"],
            "method": PER_CATEGORY_PPI_METHOD,
            "lambdas": {cat: g["lambda"] for cat, g in ppi["per_group"].items()},
        },
    )


def _by_category(data: _Data, judged) -> dict:
    """The per-category rates, the equality tests and the per-category estimates."""
    risk_all = data.claims["risk_category"].to_numpy(dtype=object)[judged.position]
    risk = np.where(_missing(risk_all), "(none)", risk_all).astype(object)
    cats = _categories(risk)
    audited = judged.audited
    judge_s = judged.judge_codes == Verdict.SUPPORTED.code
    gold_s = judged.gold_codes == Verdict.SUPPORTED.code
    rows, audited_rates = [], {}
    n_judged = judged.n_judged
    for cat in cats:
        in_cat = risk == cat
        sel = in_cat & audited
        rates = _rates(gold_s[sel], judge_s[sel])
        audited_rates[cat] = rates
        rows.append(
            {
                "category": cat,
                "judged": int(in_cat.sum()),
                "share": int(in_cat.sum()) / n_judged if n_judged else math.nan,
                "audited": int(sel.sum()),
                **rates,
            }
        )
    equality = {
        name: heterogeneity.rate_equality_test(
            [audited_rates[c][name]["successes"] for c in cats],
            [audited_rates[c][name]["n"] for c in cats],
        )
        for name in ("sensitivity", "specificity")
    }
    differ, p_value = heterogeneity.rates_differ(
        equality["sensitivity"]["p_value"], equality["specificity"]["p_value"]
    )
    equality.update({"p_value": p_value, "differ": differ, "alpha": heterogeneity.EQUALITY_ALPHA})
    rg, ppi = _per_category_estimates(cats, risk, judged, judge_s, audited_rates)
    unequal = audited_unequally(judged)
    return {
        "categories": rows,
        "equality": equality,
        # under an unequal design the per-category figures are unweighted: never the headline
        "correction": "per_category" if differ and not unequal else "pooled",
        "per_category": {"debiased_faithfulness": rg, "ppi_faithfulness": ppi},
        "not_under_design": (
            None
            if not unequal
            else PER_CATEGORY_NOT_UNDER_DESIGN
            if judged.weights is not None
            else PER_CATEGORY_NOT_UNDER_STRATA
        ),
    }


PER_CATEGORY_NOT_UNDER_DESIGN = (
    "Per-category rates and corrections are unweighted, and the labels were drawn by the active "
    "queue with unequal probabilities: they are shown for reading, and the headline keeps the "
    "design-weighted pooled correction."
)
PER_CATEGORY_NOT_UNDER_STRATA = (
    "Per-category rates and corrections are unweighted, and the design strata were audited at "
    "different rates: they are shown for reading, and the headline keeps the design-weighted "
    "pooled correction."
)


def category_correction(block: dict, *, data: _Data, judged) -> None:
    """Add `error_rates_by_risk_category` to an instrument block; when the judge's error rates
    differ by category, its debiased estimates (and so its headline) become the per-category
    ones, the pooled ones kept under `error_rates_by_risk_category.pooled`."""
    result = _by_category(data, judged)
    result["pooled"] = {
        "debiased_faithfulness": block["debiased_faithfulness"],
        "ppi_faithfulness": block["ppi_faithfulness"],
    }
    if result["correction"] == "per_category":
        block["debiased_faithfulness"] = result["per_category"]["debiased_faithfulness"]
        block["ppi_faithfulness"] = {
            **result["per_category"]["ppi_faithfulness"],
            "lambda": None,
        }
        block["headline_estimate"], block["headline_reason"] = estimators.headline_choose(
            block,
            youden_j=min(
                (row["youden_j"] for row in result["categories"] if math.isfinite(row["youden_j"])),
                default=math.nan,
            ),
        )
    result["note"] = _note(result)
    result["method"] = _method(result)
    block["error_rates_by_risk_category"] = result
    block["method"] = block["method"] + " " + result["method"]
