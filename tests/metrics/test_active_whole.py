"""The report's `active_audit` block as a whole (issue 21: mutation testing), without a database.

`active_audit_block` reads the project's rows through two selectors
(`label_design_columns`, `active_claim_columns`); here they are replaced by small planted frames,
the `Project` is an unsaved instance and the report's `_Data` / `Judged` are planted arrays.
Each whole-output test compares EVERY key and sentence of the block with a literal (read off the
code: a changed word or key must fail), and its headline figures are derived independently in the
same file: the Hájek active estimate, its power-tuned λ and its CR1 variance by answer with numpy
from the formula (λ also by brute force over a grid), the stratified mean Σ_h W_h ȳ_h by hand, the
constant-π figure as ppi_py's PPI++ / the Wilson interval.
"""

import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import t as student_t

from annotate.models import Project
from metrics import selectors
from metrics.services import active_audit as aa
from metrics.services import active_design as ad
from metrics.services import audit_design as ds
from metrics.services import estimators
from metrics.services.judged import Judged
from tests.metrics import independent as ref

NAN = math.nan
S, C, N = 0, 1, 2  # the report's verdict codes

# 24 claims in 12 answers of 2; gold on the first 15; the first 14 labelled by the active queue
# with the π below (claim 0 recorded 0.2 though its claim now says 0.3; a second, later active
# label of claim 0 at 0.9 must not count), claim 14 labelled under the uniform design (left out).
IDS = np.arange(101, 125)
ANS = 1 + np.arange(24) // 2
GOLD = np.array([S, S, C, S, S, N, S, S, S, C, S, S, S, S, S] + [-1] * 9, dtype=np.int8)
PIS = [0.2, 0.5, 0.8, 0.4, 0.3, 0.9, 0.6, 0.25, 0.5, 0.7, 0.35, 0.45, 0.55, 0.65]
CLAIM_PI = [0.3, *PIS[1:], 0.4, 0.5, 0.6, NAN, 0.3, 0.7, 0.5, 0.45, 0.8, 0.35]
JCODES = np.array(
    [S, S, C, S, S, S, S, S, S, C, S, N, S, S, S, S, S, C, S, S, S, S, N, S], dtype=np.int8
)
JCONF = np.array(
    [0.9, 0.8, 0.2, 0.7, 0.85, 0.6, 0.9, 0.75, 0.8, 0.15, 0.9, 0.3, 0.95, 0.7, 0.8]
    + [0.9, 0.6, 0.1, 0.85, 0.7, 0.9, 0.8, 0.25, 0.65]
)
REPORT = {
    "judge": None,
    "faithfulness": {"pooled": {"value": 0.5, "ci": (0.25, 0.75)}},
    "method": {"faithfulness": "Wilson."},
}
FORECAST_TAIL = (
    " Forecast: labels needed for a 95% half-width of ±{target:.3f}{whose}, from the current "
    "variance estimates (n = V₁·t²/(x² − t²·V∞): V₁ the variance one label adds, V∞ what the "
    "judge's own error leaves however many labels); uniform sampling shown beside it. Progress "
    "= labels so far / labels needed; the target is reached when the headline's own 95% "
    "interval is within it."
)
LEAD = " (the lead’s target)"
DEFAULT = " (default target, none set)"
AUC_TEXT = (
    "AUC: how often the judge is less confident in a verdict it gets wrong than in one it gets "
    "right (0.5 = no better than chance)."
)
SELECTIVE_TEXT = (
    "The judge's confidence in its own verdict; above the threshold its verdicts agree with "
    "gold at least at the target, with the stated probability."
)


def routed_text(n, share, judge_share):
    return (
        f"{n} claim{'s' if n != 1 else ''} routed to the judge ({share} of the project's "
        "claims): the queue no longer serves them. How they are counted: they stay in every "
        "figure's population (N) and the gold they already had still counts, but labels drawn "
        "while routing is on come from the other claims only, so the audit sample "
        "under-represents routed claims from then on. For them read the judge's own "
        f"verdicts{judge_share}, certified to agree with gold as the selective-judging line "
        "says; stop routing before quoting the headline as a whole-project audit."
    )


class FakeData:
    """The report's `_Data` as the block reads it: claim ids, claims (gold code, answer)."""

    def __init__(self, claim_ids, answer_ids, gold):
        self.claim_ids = np.asarray(claim_ids, dtype=np.int64)
        self.claims = pd.DataFrame(
            {
                "claim_id": self.claim_ids,
                "answer_id": np.asarray(answer_ids, dtype=np.int64),
                "gold": np.asarray(gold, dtype=np.int8),
            }
        )
        # one stratum, equal weights: the design the report reads for labels not drawn in phases
        self.design = ds.AuditDesign(
            stratum=np.zeros(self.claim_ids.size, np.int64), names=["whole project"]
        )

    def answer_ids(self):
        return self.claims["answer_id"].to_numpy()


def judged_for(data, codes, conf, positions=None):
    pos = (
        np.arange(data.claim_ids.size)
        if positions is None
        else np.asarray(positions, dtype=np.int64)
    )
    gold = data.claims["gold"].to_numpy()[pos]
    return Judged(
        position=pos,
        judge_codes=np.asarray(codes, dtype=np.int8),
        confidence=np.asarray(conf, dtype=float),
        gold_codes=gold,
        answer_ids=data.answer_ids()[pos],
        audited=gold >= 0,
        strata=np.zeros(pos.size, np.int64),
        sizes={0: float(pos.size)},
    )


def _read(frame):
    def selector(*, project):
        assert isinstance(project, Project), "the selector is asked for the project's rows"
        return frame.copy()

    return selector


def plant(monkeypatch, labels, claims):
    monkeypatch.setattr(selectors, "label_design_columns", _read(labels))
    monkeypatch.setattr(selectors, "active_claim_columns", _read(claims))


def active_frames(routed=(20, 21), claim_pi=CLAIM_PI, strata=""):
    labels = pd.DataFrame(
        {
            "claim_id": [*IDS[:15], IDS[0]],
            "design": ["active"] * 14 + ["uniform", "active"],
            "inclusion_probability": [*PIS, NAN, 0.9],
        }
    )
    mask = np.zeros(IDS.size, dtype=bool)
    mask[list(routed)] = True
    claims = pd.DataFrame(
        {
            "claim_id": IDS,
            "inclusion_probability": claim_pi,
            "active_stratum": strata,
            "routed_to_judge": mask,
        }
    )
    return labels, claims


def within_claims(entry: dict, labelled: int) -> dict:
    """A forecast entry with what the 24 claims of 12 answers bound it to, by hand (issue 32
    item 1): a forecast past 24 labels asks for ⌈(n* − 24)/2⌉ more answers (2 claims each)."""
    total = entry["labels_total"]
    more = None if total is None else (0 if total <= 24 else math.ceil((total - 24) / 2))
    return {
        **entry,
        "claims": 24,
        "claims_unlabelled": 24 - labelled,
        "within_claims": total is not None and total <= 24,
        "answers_more": more,
    }


def same(actual, expected, path="block"):
    """Whole-structure equality: same keys, same types of containers, exact strings, floats to
    rel 1e-9 (NaN equals NaN)."""
    if isinstance(expected, dict):
        assert isinstance(actual, dict), path
        assert set(actual) == set(expected), (path, set(actual) ^ set(expected))
        for key in expected:
            same(actual[key], expected[key], f"{path}[{key!r}]")
    elif isinstance(expected, (list, tuple)):
        assert isinstance(actual, type(expected)), (path, type(actual))
        assert len(actual) == len(expected), path
        for i, (a, e) in enumerate(zip(actual, expected, strict=True)):
            same(a, e, f"{path}[{i}]")
    elif isinstance(expected, bool) or expected is None or isinstance(expected, str):
        assert actual is expected or (isinstance(expected, str) and actual == expected), (
            path,
            actual,
            expected,
        )
        assert type(actual) is type(expected), (path, type(actual))
    elif isinstance(expected, int):
        assert type(actual) is int, (path, type(actual))
        assert actual == expected, (path, actual, expected)
    else:
        assert isinstance(actual, float), (path, type(actual))
        if math.isnan(expected):
            assert math.isnan(actual), (path, actual)
        else:
            assert actual == pytest.approx(expected, rel=1e-9, abs=1e-12), (path, actual)


def hajek_active_by_hand(y, lab, f, pi, cluster, conf=0.95):
    """Zrnic & Candès' active estimate in its Hájek form with power-tuned λ and the CR1 variance
    by answer, written from the formula (and λ checked by brute force over a fine grid)."""
    big_n = lab.size
    w = 1.0 / pi[lab]
    big_w = w.sum()
    yl, fl = y[lab], f[lab]
    ybar_w = (w * yl).sum() / big_w
    fbar, fbar_w = f.mean(), (w * fl).sum() / big_w
    answers = np.unique(cluster)
    g = answers.size

    def influence(lam):
        phi = lam * (f - fbar) / big_n
        phi[lab] += w * ((yl - ybar_w) - lam * (fl - fbar_w)) / big_w
        return phi

    def cr1(lam):
        totals = np.array([influence(lam)[cluster == a].sum() for a in answers])
        return g / (g - 1) * (totals**2).sum()

    # V(λ) is quadratic: its minimiser from three points, clipped to [0, 1]
    v0, v1, v2 = cr1(0.0), cr1(0.5), cr1(1.0)
    a2 = 2 * (v2 - 2 * v1 + v0)
    b1 = v1 * 4 - 3 * v0 - v2
    lam = float(np.clip(-b1 / (2 * a2), 0.0, 1.0))
    grid = np.linspace(0, 1, 100001)
    assert abs(grid[np.argmin([cr1(x) for x in grid[::1000]]) * 1000] - lam) <= 0.01
    theta = lam * fbar + ybar_w - lam * fbar_w
    var = cr1(lam)
    phi = influence(lam)
    var_indep = big_n / (big_n - 1) * (phi**2).sum()
    g_lab = np.unique(cluster[lab]).size
    t = student_t.ppf(0.5 + conf / 2, g_lab - 1)
    half = t * math.sqrt(var)
    return {
        "value": theta,
        "ci": (max(theta - half, 0.0), min(theta + half, 1.0)),
        "lambda": lam,
        "deff": var / var_indep,
        "g_lab": g_lab,
    }


def _active_block(monkeypatch, *, target=None, routed=(20, 21), judge=True, **frames):
    labels, claims = active_frames(routed=routed, **frames)
    plant(monkeypatch, labels, claims)
    data = FakeData(IDS, ANS, GOLD)
    project = Project(queue_design="active", target_half_width=target, selective_judging=True)
    judged = judged_for(data, JCODES, JCONF) if judge else None
    return aa.active_audit_block(project=project, data=data, report=REPORT, judged=judged)


HEADLINE_METHOD = (
    "Active inference (Zrnic & Candès 2024), Hájek weights 1/π, power-tuned λ=0.18, 14 labels "
    "of 24 claims, clustered by answer (7 labelled answers of 12); design effect 0.77, t with 6 "
    "df. 1 gold claim with no recorded inclusion probability (labelled under another design) "
    "left out of this estimate."
)
ACTIVE_FORECAST_METHOD = (
    "active sampling (π ∝ the judge's error sd), PPI++: about 27 more labels (41 in all) to "
    "reach ±0.100 (95%), from the 14 labels so far (±0.163 now; per-label variance 0.0597, "
    "λ=0.25, design effect 1.00; more labels than the project has claims (24): import about 9 "
    "more answers or accept a wider interval); a forecast from the current variance estimates, "
    "not a promise."
)  # 41 − 24 = 17 claims at 24 claims in 12 answers: 8.5, about 9 answers
UNIFORM_FORECAST_METHOD = (
    "uniform sampling, PPI++: about 41 more labels (55 in all) to reach ±0.100 (95%), from the "
    "14 labels so far (±0.189 now; per-label variance 0.0805, λ=0.25, design effect 1.00; more "
    "labels than the project has claims (24): import about 16 more answers or accept a wider "
    "interval); a forecast from the current variance estimates, not a promise."
)  # 55 − 24 = 31 claims at 2 claims per answer: 15.5, about 16 answers
GAIN_TEXT = (
    "At ±0.163 the active sampling (π ∝ the judge's error sd), PPI++ used 14 labels; uniform "
    "gold-only would have needed about 23 (saved 9 labels, 61% of gold-only's), measured on "
    "this project's labels from the two designs' variance estimates, not a promise."
)
SELECTIVE_METHOD = (
    "No threshold certified: the judge may decide no claim alone; fixed-sequence testing over 7 "
    "thresholds, exact binomial, P(agreement ≥ 90%) ≥ 90% over audited claims drawn like these "
    "(15 audited claims, assumed exchangeable: claims of one answer are counted as independent)."
)
ROUTED_2 = routed_text(2, "8%", " (100% SUPPORTED)")
ACTIVE_HEADLINE = {
    "value": 0.8726929503437982,
    "ci": (0.7244862404542123, 1.0),
    "method": HEADLINE_METHOD,
    "estimator": "active_ppi",
    "design_effect": 0.7744075811603757,
    "gold_left_out": 1,
    "half_width": 0.13775687977289386,
}
ACTIVE_BLOCK = {
    "design": "active",
    "target_half_width": 0.1,
    "target_set": False,
    "headline": ACTIVE_HEADLINE,
    "labels_now": 14,
    "forecast": {
        "active": within_claims(
            {
                "estimator": "active",
                "half_width_now": 0.16329145492586572,
                "labels_more": 27,
                "labels_total": 41,
                "method": ACTIVE_FORECAST_METHOD,
                "target_half_width": 0.1,
            },
            14,
        ),
        "uniform": within_claims(
            {
                "estimator": "uniform_ppi",
                "half_width_now": 0.18861792785859316,
                "labels_more": 41,
                "labels_total": 55,
                "method": UNIFORM_FORECAST_METHOD,
                "target_half_width": 0.1,
            },
            14,
        ),
    },
    "reached": False,
    "progress": 14 / 41,
    "gain": {
        "caveat": "measured on this project's labels, not a promise",
        "design": "active",
        "labels_design": 14,
        "labels_saved": 9,
        "labels_uniform_gold_only": 23,
        "ratio": 14 / 23,
        "text": GAIN_TEXT,
    },
    "confidence": {
        "auc": 0.9615384615384616,
        "explanation": AUC_TEXT,
        "informative": True,
        "warning": None,
    },
    "selective": {
        "claims_at_or_above": 0,
        "delta": 0.1,
        "explanation": SELECTIVE_TEXT,
        "level": 0.9,
        "lower_bound": None,
        "method": SELECTIVE_METHOD,
        "routed_claims": 2,
        "share_audited": 0.0,
        "share_of_claims": 0.0,
        "target_agreement": 0.9,
        "threshold": None,
    },
    "routing": {"judge_supported_share": 1.0, "on": True, "routed_claims": 2, "text": ROUTED_2},
    "method": "Headline under the active design: "
    + HEADLINE_METHOD
    + FORECAST_TAIL.format(target=0.1, whose=DEFAULT)
    + " "
    + GAIN_TEXT
    + " "
    + ROUTED_2,
}


def test_active_block_whole_output(monkeypatch):
    same(_active_block(monkeypatch), ACTIVE_BLOCK)


def test_active_headline_figures_by_hand():
    """The golden's headline from the formula: each labelled claim's FIRST active label's π
    (claim 0: 0.2, not its claim's 0.3 nor its later label's 0.9), claim 14 (uniform label) out;
    its AUC from scikit-learn on the verdicts' own confidence."""
    from sklearn.metrics import roc_auc_score

    y = (GOLD == S).astype(float)
    lab = np.zeros(24, dtype=bool)
    lab[:14] = True
    pi = np.array(CLAIM_PI)
    pi[:14] = PIS
    pi[np.isnan(pi)] = np.mean(PIS)
    got = hajek_active_by_hand(y, lab, JCONF, pi, ANS)
    assert got["value"] == pytest.approx(ACTIVE_HEADLINE["value"], rel=1e-9)
    assert got["ci"] == pytest.approx(ACTIVE_HEADLINE["ci"], rel=1e-9)
    assert got["deff"] == pytest.approx(ACTIVE_HEADLINE["design_effect"], rel=1e-9)
    assert round(got["lambda"], 2) == 0.18
    assert got["g_lab"] == 7
    low, high = got["ci"]
    assert ACTIVE_HEADLINE["half_width"] == pytest.approx((high - low) / 2, rel=1e-12)
    verdict_conf = np.where(JCODES == S, JCONF, 1 - JCONF)[:15]
    wrong = (JCODES[:15] == S) != (GOLD[:15] == S)
    auc = roc_auc_score(wrong, -verdict_conf)
    assert ACTIVE_BLOCK["confidence"]["auc"] == pytest.approx(auc, rel=1e-12)
    # the stop rule and progress: 14 labels of the active design's 41
    assert ACTIVE_BLOCK["progress"] == 14 / ACTIVE_BLOCK["forecast"]["active"]["labels_total"]
    assert (high - low) / 2 > 0.1


def test_the_ratio_of_the_gain_is_the_labels_over_uniform_gold_only():
    gain = ACTIVE_BLOCK["gain"]
    assert gain["labels_saved"] == gain["labels_uniform_gold_only"] - gain["labels_design"]


NA_FORECAST_ACTIVE = {
    "estimator": "active",
    "half_width_now": None,
    "labels_more": None,
    "labels_total": None,
    "method": "active sampling (π ∝ the judge's error sd), PPI++: n/a, fewer than 10 labels to "
    "estimate the variance from.",
    "target_half_width": 0.1,
}
NA_FORECAST_UNIFORM = {
    **NA_FORECAST_ACTIVE,
    "estimator": "uniform_ppi",
    "method": "uniform sampling, PPI++: n/a, fewer than 10 labels to estimate the variance from.",
}
NA_GAIN_TEXT = "Labels saved: n/a (too few labels to compare the designs)."
NO_ROUTING = {"judge_supported_share": None, "on": False, "routed_claims": 0, "text": ""}


def _few_labels_block(labelled: int, left_out: int) -> dict:
    method = (
        "Fewer than 2 gold claims drawn under the active design: not estimated. "
        f"{left_out} gold claims with no recorded inclusion probability (labelled under another "
        "design) left out of this estimate."
    )
    return {
        "confidence": None,
        "design": "active",
        "forecast": {
            "active": within_claims(NA_FORECAST_ACTIVE, labelled),
            "uniform": within_claims(NA_FORECAST_UNIFORM, labelled),
        },
        "gain": {
            "caveat": "measured on this project's labels, not a promise",
            "design": "active",
            "labels_design": labelled,
            "labels_saved": None,
            "labels_uniform_gold_only": None,
            "ratio": None,
            "text": NA_GAIN_TEXT,
        },
        "headline": {
            "ci": (NAN, NAN),
            "design_effect": NAN,
            "estimator": "active_ppi",
            "gold_left_out": left_out,
            "half_width": None,
            "method": method,
            "value": NAN,
        },
        "labels_now": labelled,
        "method": "Headline under the active design: "
        + method
        + FORECAST_TAIL.format(target=0.1, whose=DEFAULT)
        + " "
        + NA_GAIN_TEXT,
        "progress": None,
        "reached": False,
        "routing": NO_ROUTING,
        "selective": None,
        "target_half_width": 0.1,
        "target_set": False,
    }


def _plain_active(monkeypatch, labels, judged=False, **project):
    claims = pd.DataFrame(
        {
            "claim_id": IDS,
            "inclusion_probability": CLAIM_PI,  # claim 17 has none (NaN)
            "active_stratum": "",
            "routed_to_judge": False,
        }
    )
    plant(monkeypatch, labels, claims)
    data = FakeData(IDS, ANS, GOLD)
    project = Project(queue_design="active", **project)
    judged = judged_for(data, JCODES, JCONF) if judged else None
    return aa.active_audit_block(project=project, data=data, report=REPORT, judged=judged)


def test_no_labelled_claim_under_the_active_design_is_not_estimated(monkeypatch):
    """Gold, but no label drawn by the active queue: every π falls back to the claims' own (1
    where a claim has none: a valid probability, so the forecasts say n/a instead of failing)."""
    labels = pd.DataFrame({"claim_id": [], "design": [], "inclusion_probability": []})
    labels = labels.astype({"claim_id": np.int64, "design": object, "inclusion_probability": float})
    same(_plain_active(monkeypatch, labels), _few_labels_block(0, 15))


def test_one_label_under_the_active_design_is_not_estimated(monkeypatch):
    labels = pd.DataFrame(
        {"claim_id": [IDS[0]], "design": ["active"], "inclusion_probability": [0.5]}
    )
    same(_plain_active(monkeypatch, labels), _few_labels_block(1, 14))


def test_a_single_left_out_gold_claim_is_said_in_the_singular():
    assert aa._left_out_text(1) == (
        " 1 gold claim with no recorded inclusion probability (labelled under another design) "
        "left out of this estimate."
    )
    y = np.array([1.0, 0.0, 1.0, 0.0])
    gold = np.array([True, True, True, False])
    headline, inputs = aa._active_headline(
        y, gold, None, np.array([0.5, NAN, NAN, NAN]), np.full(4, NAN), np.arange(4)
    )
    assert headline["method"] == (
        "Fewer than 2 gold claims drawn under the active design: not estimated. 2 gold claims "
        "with no recorded inclusion probability (labelled under another design) left out of "
        "this estimate."
    )
    # the labelled claim's π, and the labels' mean π for the claims with none
    assert inputs["pi"].tolist() == [0.5, 0.5, 0.5, 0.5]
    assert inputs["labelled"].tolist() == [True, False, False, False]
    headline, _ = aa._active_headline(
        y, gold, None, np.array([0.5, 0.25, NAN, NAN]), np.full(4, NAN), np.arange(4)
    )
    assert headline["gold_left_out"] == 1
    assert headline["method"].endswith(aa._left_out_text(1))
    # no gold claim left out: the method is the estimator's own, nothing appended
    headline, _ = aa._active_headline(
        y, gold, None, np.array([0.5, 0.25, 0.5, NAN]), np.full(4, NAN), np.arange(4)
    )
    assert headline["gold_left_out"] == 0
    assert "left out" not in headline["method"]
    # Hájek mean by hand: Σ y/π / Σ 1/π over the three labels
    assert headline["value"] == pytest.approx((2 + 0 + 2) / (2 + 4 + 2), rel=1e-12)


def test_constant_pi_one_claim_per_answer_is_todays_ppi_and_wilson():
    """All π equal, every claim its own answer: a simple random sample, so the active headline
    is ppi_py's PPI++ with the judge and the Wilson interval without."""
    rng = np.random.default_rng(3)
    n_all = 30
    y = (rng.random(n_all) < 0.7).astype(float)
    f = np.clip(y * 0.6 + rng.random(n_all) * 0.4, 0, 1)
    gold = np.zeros(n_all, dtype=bool)
    gold[:20] = True
    pi = np.where(gold, 0.4, NAN)
    headline, _ = aa._active_headline(y, gold, f, pi, np.full(n_all, 0.4), np.arange(n_all))
    value, (low, high), _lam = ref.ppi(y[:20], f[:20], f[20:])
    assert headline["value"] == pytest.approx(value, abs=1e-9)
    assert headline["ci"] == pytest.approx((low, high), abs=1e-9)
    assert headline["estimator"] == "active_ppi"
    assert headline["design_effect"] == 1.0
    headline, _ = aa._active_headline(y, gold, None, pi, np.full(n_all, 0.4), np.arange(n_all))
    k = int(y[:20].sum())
    assert headline["value"] == k / 20
    assert headline["ci"] == pytest.approx(ref.wilson(k, 20), abs=1e-12)
    assert headline["method"] == (
        "Wilson interval on the 20 labels (uniform inclusion, one claim per answer: a simple "
        "random sample)."
    )


STRATA = np.array(["A"] * 12 + ["B"] * 12, dtype=object)
STRATIFIED_FORECAST = {
    "estimator": "stratified",
    "half_width_now": 0.13517657118060877,
    "labels_more": 73,
    "labels_total": 88,
    "method": "stratified sampling, Neyman allocation: about 73 more labels (88 in all) to reach "
    "±0.300 (95%), from the 15 labels so far (±0.135 now; per-label variance 0.0490, design "
    "effect 1.05; more labels than the project has claims (24): import about 32 more answers or "
    "accept a wider interval); a forecast from the current variance estimates, not a promise.",
    "target_half_width": 0.3,
}
STRATIFIED_GAIN = {
    "caveat": "measured on this project's labels, not a promise",
    "design": "stratified",
    "labels_design": 15,
    "labels_saved": 20,
    "labels_uniform_gold_only": 35,
    "ratio": 15 / 35,
    "text": "At ±0.135 the stratified sampling, Neyman allocation used 15 labels; uniform "
    "gold-only would have needed about 35 (saved 20 labels, 43% of gold-only's), measured on "
    "this project's labels from the two designs' variance estimates, not a promise.",
}
STRATIFIED_GOLD_METHOD = (
    "Wilson interval at the effective sample size (26 of 15 claims), cluster-robust by answer "
    "(8 answers, design effect 0.73, counted as 1: never narrower than independent claims), t "
    "with 6 df; weighted over 2 strata by their share of the project (N_h/N)."
)
STRATIFIED_PPI_METHOD = (
    "PPI++ (power-tuned per stratum), rectifier clustered by answer (8 audited answers, design "
    "effect 0.97), t with 6 df; 2 of 2 strata's variance floored at what the judge's scores "
    "predict (too few audited claims to show their own); weighted over 2 strata by their share "
    "of the project (N_h/N)."
)


def _stratified_block(monkeypatch, judge):
    """Labels drawn under the stratified design (the project back on uniform since): strata A
    (claims 0–11, all gold) and B (claims 12–23, 3 gold)."""
    labels = pd.DataFrame(
        {
            "claim_id": list(IDS[:15]),
            "design": ["stratified"] * 15,
            "inclusion_probability": [NAN] * 15,
        }
    )
    claims = pd.DataFrame(
        {
            "claim_id": IDS,
            "inclusion_probability": NAN,
            "active_stratum": STRATA,
            "routed_to_judge": False,
        }
    )
    plant(monkeypatch, labels, claims)
    data = FakeData(IDS, ANS, GOLD)
    project = Project(queue_design="uniform", target_half_width=0.3)
    judged = judged_for(data, JCODES, JCONF) if judge else None
    return aa.active_audit_block(project=project, data=data, report=REPORT, judged=judged)


def _stratified_expected(headline, uniform, confidence, selective):
    return {
        "confidence": confidence,
        "design": "stratified",
        "forecast": {
            "stratified": within_claims(STRATIFIED_FORECAST, 15),
            "uniform": within_claims(uniform, 15),
        },
        "gain": STRATIFIED_GAIN,
        "headline": headline,
        "labels_now": 15,
        "method": "Headline under the stratified design: "
        + headline["method"]
        + FORECAST_TAIL.format(target=0.3, whose=LEAD)
        + " "
        + STRATIFIED_GAIN["text"],
        "progress": 1.0,
        "reached": True,
        "routing": NO_ROUTING,
        "selective": selective,
        "target_half_width": 0.3,
        "target_set": True,
    }


def test_stratified_block_gold_only_whole_output(monkeypatch):
    headline = {
        "ci": (0.6436952524998072, 0.9644418889474804),
        "design_effect": 0.7333333333333335,
        "estimator": "stratified_gold_only",
        "half_width": 0.1603733182238366,
        "method": STRATIFIED_GOLD_METHOD,
        "value": 0.875,
    }
    uniform = {
        "estimator": "uniform_gold",
        "half_width_now": 0.20648562320657526,
        "labels_more": 0,
        "labels_total": 13,
        "method": "uniform sampling, gold only: about 0 more labels (13 in all) to reach ±0.300 "
        "(95%), from the 15 labels so far (±0.206 now; per-label variance 0.1144, design effect "
        "1.05); a forecast from the current variance estimates, not a promise.",
        "target_half_width": 0.3,
    }
    same(_stratified_block(monkeypatch, False), _stratified_expected(headline, uniform, None, None))
    # by hand: W_A ȳ_A + W_B ȳ_B = ½·9/12 + ½·3/3
    y = (GOLD == S).astype(float)
    assert headline["value"] == 0.5 * y[:12].mean() + 0.5 * y[12:15].mean()


def test_stratified_block_with_a_judge_whole_output(monkeypatch):
    headline = {
        "ci": (0.6299942639636518, 1.0),
        "design_effect": 0.9724446228078685,
        "estimator": "stratified_ppi",
        "half_width": 0.18500286801817412,
        "method": STRATIFIED_PPI_METHOD,
        "value": 0.875,
    }
    uniform = {
        "estimator": "uniform_ppi",
        "half_width_now": 0.18100153332527363,
        "labels_more": None,
        "labels_total": None,
        "method": "uniform sampling, PPI++: ±0.300 cannot be reached by labels alone: the "
        "judge's own sampling error over the project is already ±0.111 (95%), from the 15 "
        "labels so far (±0.181 now; per-label variance 0.0549, λ=0.85, design effect 1.00); a "
        "forecast from the current variance estimates, not a promise.",
        "target_half_width": 0.3,
    }
    selective = {**ACTIVE_BLOCK["selective"], "routed_claims": 0}
    same(
        _stratified_block(monkeypatch, True),
        _stratified_expected(headline, uniform, ACTIVE_BLOCK["confidence"], selective),
    )


def _uniform_block(monkeypatch, target, report=REPORT):
    def no_columns(project):
        raise AssertionError("the uniform hot path must not read the claims' design columns")

    labels = pd.DataFrame(
        {"claim_id": [IDS[0]], "design": ["uniform"], "inclusion_probability": [NAN]}
    )
    monkeypatch.setattr(selectors, "label_design_columns", lambda project: labels.copy())
    monkeypatch.setattr(selectors, "active_claim_columns", no_columns)
    data = FakeData(IDS, ANS, GOLD)
    project = Project(queue_design="uniform", target_half_width=target)
    return aa.active_audit_block(project=project, data=data, report=report, judged=None)


def test_uniform_block_reached_exactly_at_the_target(monkeypatch):
    """The report's own headline (±0.25 exactly, from (0.25, 0.75)) at a target of 0.25: the
    target is reached (≤, not <), progress 1."""
    block = _uniform_block(monkeypatch, 0.25)
    # the uniform gold-only forecast by hand: p = 12/15, design effect max(CR1/independent, 1),
    # t at 7 df (8 labelled answers), ±t·√(p(1 − p)·deff/15) now, n* = ⌈p(1 − p)·deff·t²/x²⌉
    y = (GOLD[:15] == S).astype(float)
    g = ANS[:15]
    p = y.mean()
    e = (y - p) / 15
    totals = np.array([e[g == a].sum() for a in np.unique(g)])
    deff = max(8 / 7 * (totals @ totals) / ((e @ e) * 15 / 14), 1.0)
    t = student_t.ppf(0.975, 7)
    now = t * math.sqrt(p * (1 - p) * deff / 15)
    total = math.ceil(p * (1 - p) * deff * t**2 / 0.25**2)
    assert total == 15
    uniform = {
        "estimator": "uniform_gold",
        "half_width_now": now,
        "labels_more": 0,
        "labels_total": 15,
        "method": "uniform sampling, gold only: about 0 more labels (15 in all) to reach ±0.250 "
        "(95%), from the 15 labels so far (±0.244 now; per-label variance 0.1600, design effect "
        "1.00); a forecast from the current variance estimates, not a promise.",
        "target_half_width": 0.25,
    }
    expected = {
        "confidence": None,
        "design": "uniform",
        "forecast": {"uniform": within_claims(uniform, 15)},
        "gain": None,
        "headline": {
            "value": 0.5,
            "ci": (0.25, 0.75),
            "method": "Wilson.",
            "estimator": "gold_only_faithfulness",
            "half_width": 0.25,
        },
        "labels_now": 15,
        "method": "Headline under uniform sampling: Wilson."
        + FORECAST_TAIL.format(target=0.25, whose=LEAD),
        "progress": 1.0,
        "reached": True,
        "routing": NO_ROUTING,
        "selective": None,
        "target_half_width": 0.25,
        "target_set": True,
    }
    same(block, expected)
    # just short of the headline's half-width: not reached, progress from the forecast
    block = _uniform_block(monkeypatch, 0.2499)
    assert block["reached"] is False
    assert block["progress"] == 0.99  # 15 labels of the 15 needed: capped below 1


def test_uniform_headline_is_the_judges_headline_estimate_when_there_is_one():
    report = {
        "judge": {
            "headline_estimate": "ppi_faithfulness",
            "ppi_faithfulness": {"value": 0.7, "ci": (0.6, 0.8), "method": "PPI++."},
        },
        "faithfulness": {"pooled": {"value": 0.5, "ci": (0.25, 0.75)}},
        "method": {"faithfulness": "Wilson."},
    }
    assert aa._uniform_headline(report) == {
        "value": 0.7,
        "ci": (0.6, 0.8),
        "method": "PPI++.",
        "estimator": "ppi_faithfulness",
    }
    report["judge"]["headline_estimate"] = None
    assert aa._uniform_headline(report)["estimator"] == "gold_only_faithfulness"


def test_uniform_hot_path_gives_no_pi_no_stratum_and_nothing_routed(monkeypatch):
    def no_columns(project):
        raise AssertionError("not read")

    labels = pd.DataFrame(
        {
            "claim_id": [IDS[0], 999],
            "design": ["uniform", "active"],
            "inclusion_probability": [NAN, 0.5],
        }
    )
    monkeypatch.setattr(selectors, "label_design_columns", lambda project: labels.copy())
    monkeypatch.setattr(selectors, "active_claim_columns", no_columns)
    data = FakeData(IDS[:3], ANS[:3], GOLD[:3])
    out = aa._claim_inputs(Project(queue_design="uniform"), data)
    assert set(out) == {"pi", "claim_pi", "strata", "routed", "label_designs"}
    assert np.isnan(out["pi"]).all()
    assert out["pi"].dtype == float
    assert np.isnan(out["claim_pi"]).all()
    assert out["claim_pi"].dtype == float
    assert out["strata"].tolist() == [aa.NO_STRATUM] * 3
    assert out["routed"].dtype == bool
    assert not out["routed"].any()
    assert out["label_designs"] == ["uniform"]  # the label of a claim outside the report: out


def test_claim_inputs_reads_the_first_active_pi_the_strata_and_the_routed_mask(monkeypatch):
    """A claim missing from the claims' columns (routed unknown, NaN) is not routed; the routed
    mask is boolean whatever dtype the frame had (it indexes the judge's verdicts)."""
    labels = pd.DataFrame(
        {
            "claim_id": [IDS[1], IDS[0], IDS[0], IDS[2]],
            "design": ["active", "stratified", "active", "active"],
            "inclusion_probability": [0.4, NAN, 0.3, NAN],
        }
    )
    claims = pd.DataFrame(
        {
            "claim_id": IDS[:3],
            "inclusion_probability": [0.5, NAN, 0.7],
            "active_stratum": ["A", "", None],
            "routed_to_judge": pd.Series([True, False, True], dtype=object),
        }
    )
    plant(monkeypatch, labels, claims)
    data = FakeData(IDS[:4], ANS[:4], GOLD[:4])
    out = aa._claim_inputs(Project(queue_design="active"), data)
    np.testing.assert_array_equal(out["pi"], [0.3, 0.4, NAN, NAN])
    np.testing.assert_array_equal(out["claim_pi"], [0.5, NAN, 0.7, NAN])
    assert out["strata"].tolist() == ["A", aa.NO_STRATUM, aa.NO_STRATUM, aa.NO_STRATUM]
    assert out["routed"].dtype == bool
    assert out["routed"].tolist() == [True, False, True, False]
    assert out["label_designs"] == ["active", "stratified", "active", "active"]
    # and the routing block indexes the judge's verdicts with it
    judged = judged_for(data, [S, C, C, S], [0.9, 0.2, 0.3, 0.8])
    routing = aa._routing_block(Project(selective_judging=False), out["routed"], judged)
    assert routing == {
        "on": False,
        "routed_claims": 2,
        "judge_supported_share": 0.5,
        "text": routed_text(2, "50%", " (50% SUPPORTED)"),
    }


def test_routing_block_one_claim_and_no_judge():
    mask = np.array([False, True, False, False])
    assert aa._routing_block(Project(selective_judging=True), mask, None) == {
        "on": True,
        "routed_claims": 1,
        "judge_supported_share": None,
        "text": routed_text(1, "25%", ""),
    }
    assert routed_text(1, "25%", "").startswith("1 claim routed to the judge (25% of")
    # the judge judged none of the routed claims: no share
    data = FakeData(IDS[:4], ANS[:4], GOLD[:4])
    judged = judged_for(data, [S, S], [0.9, 0.8], positions=[0, 2])
    assert aa._routing_block(Project(), mask, judged)["judge_supported_share"] is None


def test_a_claim_with_pi_zero_takes_the_mean_pi_in_the_active_forecast(monkeypatch):
    """A claim whose recorded π is 0 (never drawable) is not a probability the forecast can
    divide by: it takes the mean π of the others, like a claim with none."""
    pi = list(CLAIM_PI)
    pi[17] = 0.0
    block = _active_block(monkeypatch, claim_pi=pi)
    same(block, ACTIVE_BLOCK)  # the same as with no π on claim 17
    out = aa._forecast_inputs(
        design="active",
        gold=np.array([True, False, False]),
        prediction=None,
        strata=None,
        claim_pi=np.array([0.2, 0.0, 0.6]),
        active_inputs={"labelled": np.array([True, False, False]), "pi": np.array([0.2, 1, 1])},
    )
    assert out["design_pi"].tolist() == [0.2, 0.4, 0.6]
    assert out["prediction"].tolist() == [0.5, 0.5, 0.5]
    out = aa._forecast_inputs(
        design="active",
        gold=np.array([True, False]),
        prediction=np.array([0.3, 0.4]),
        strata=None,
        claim_pi=np.array([NAN, math.inf]),
        active_inputs={"labelled": np.array([True, False]), "pi": np.array([1.0, 1.0])},
    )
    assert out["design_pi"].tolist() == [1.0, 1.0]
    assert out["prediction"].tolist() == [0.3, 0.4]


def test_stratified_and_uniform_forecast_inputs():
    gold = np.array([True, False, True, True, False, False])
    strata = np.array(["A", "A", "B", "B", "B", "C"], dtype=object)
    out = aa._forecast_inputs(
        design="stratified", gold=gold, prediction=None, strata=strata, claim_pi=None,
        active_inputs=None,
    )  # fmt: skip
    assert set(out) == {"labelled", "pi", "design_pi", "prediction"}
    assert out["pi"].tolist() == [0.5, 0.5, 2 / 3, 2 / 3, 2 / 3, 1.0]
    assert out["labelled"] is gold
    assert out["design_pi"] is None
    assert out["prediction"] is None
    out = aa._forecast_inputs(
        design="uniform", gold=gold, prediction=None, strata=strata, claim_pi=None,
        active_inputs=None,
    )  # fmt: skip
    assert out == {"labelled": gold, "pi": None, "design_pi": None, "prediction": None}


def test_small_pieces():
    assert aa._half_width((0.2, 0.5)) == pytest.approx(0.15)
    assert aa._half_width((None, 0.5)) is None
    assert aa._half_width((0.1, math.inf)) is None
    assert aa._finite(None) is None
    assert aa._finite(math.nan) is None
    assert aa._finite(np.float64(0.5)) == 0.5
    assert type(aa._finite(np.float64(0.5))) is float
    entry = {"labels_total": None}
    assert aa._progress(entry, 5) is None
    assert aa._progress({"labels_total": 0}, 5) == 0.99
    assert aa._progress({"labels_total": 20}, 5) == 0.25
    assert aa._progress({"labels_total": 20}, 30) == 0.99
    assert aa.design_in_use(Project(queue_design="stratified"), ["active"]) == "stratified"
    assert aa.design_in_use(Project(queue_design="active"), []) == "active"
    assert aa.design_in_use(Project(queue_design="uniform"), ["x", "uniform"]) == "uniform"
    assert (
        aa.design_in_use(Project(queue_design="uniform"), ["active", "stratified", "stratified"])
        == "stratified"
    )
    conf = aa._verdict_confidence(np.array([S, C, N]), np.array([0.8, 0.3, NAN]))
    np.testing.assert_array_equal(conf, [0.8, 0.7, NAN])


def test_prediction_is_the_confidence_or_the_verdict_and_half_elsewhere():
    data = FakeData(IDS[:4], ANS[:4], GOLD[:4])
    assert aa._prediction(data, None) is None
    assert aa._prediction(data, judged_for(data, [], [], positions=[])) is None
    judged = judged_for(data, [S, C, S], [NAN, NAN, 0.7], positions=[0, 1, 3])
    assert aa._prediction(data, judged).tolist() == [1.0, 0.0, 0.5, 0.7]


def test_confidence_block_needs_errors_and_correct_verdicts_and_warns_when_uninformative():
    error = np.array([True, False, True, False])
    assert aa._confidence_block(np.array([0.9, NAN, NAN, NAN]), error) is None
    assert aa._confidence_block(np.array([0.9, 0.8, 0.7, 0.6]), np.ones(4, bool)) is None
    assert aa._confidence_block(np.array([0.9, 0.8, 0.7, 0.6]), np.zeros(4, bool)) is None
    # errors at the same confidences as correct verdicts: AUC ½, no better than chance
    block = aa._confidence_block(np.array([0.9, 0.9, 0.6, 0.6]), error)
    assert block == {
        "auc": 0.5,
        "informative": False,
        "warning": "The judge's confidence does not tell its errors apart (AUC 0.50, its 95% "
        "interval not above 0.5): active sampling is no better than uniform here.",
        "explanation": AUC_TEXT,
    }
    # NaN confidences are left out: two claims (one error, one correct) remain
    block = aa._confidence_block(np.array([0.2, 0.9, NAN, NAN]), error)
    assert block["auc"] == 1.0


def test_selective_block_certified_threshold_counts_the_claims_at_or_above():
    """25 audited claims at confidence 0.95 all agreeing (0.9^25 ≈ 0.07 ≤ δ), 5 at 0.5
    disagreeing: the threshold is certified at the top decile; claims at or above it counted
    over every judged claim."""
    from scipy.stats import beta, binom

    conf = np.array([0.95] * 25 + [0.5] * 5)
    agree = np.array([True] * 25 + [False] * 5)
    conf_all = np.array([0.95] * 25 + [0.5] * 5 + [0.96, 0.1, NAN])
    block = aa._selective_block(
        conf_audited=conf, agree=agree, conf_all=conf_all, target=0.9, delta=0.1, routed=3
    )
    assert binom.sf(24, 25, 0.9) <= 0.1
    lower = float(beta.ppf(0.1, 25, 1))
    assert block == {
        "target_agreement": 0.9,
        "delta": 0.1,
        "level": 0.9,
        "threshold": 0.95,
        "share_audited": 25 / 30,
        "share_of_claims": pytest.approx(26 / 33, rel=1e-12),
        "claims_at_or_above": 26,
        "lower_bound": pytest.approx(lower, rel=1e-12),
        "method": "The judge may decide alone at confidence ≥ 0.950 (83% of audited claims; "
        "agreement 100.0%, lower 90% bound 91.2%); fixed-sequence testing over 2 thresholds, "
        "exact binomial, P(agreement ≥ 90%) ≥ 90% over audited claims drawn like these (30 "
        "audited claims, assumed exchangeable: claims of one answer are counted as "
        "independent).",
        "routed_claims": 3,
        "explanation": SELECTIVE_TEXT,
    }
    assert (
        aa._selective_block(
            conf_audited=np.array([NAN]), agree=np.array([True]), conf_all=np.array([NAN]),
            target=0.9, delta=0.1, routed=0,
        )
        is None
    )  # fmt: skip


def test_block_method_for_each_design_and_target():
    base = {
        "target_half_width": 0.05,
        "target_set": True,
        "headline": {"method": None},
        "gain": {"text": ""},
        "routing": {"routed_claims": 0, "text": "ignored"},
    }
    tail = FORECAST_TAIL.format(target=0.05, whose=LEAD)
    assert aa._block_method({**base, "design": "active"}) == (
        "Headline under the active design: " + tail
    )
    assert aa._block_method({**base, "design": "uniform", "gain": None}) == (
        "Headline under uniform sampling: " + tail
    )
    block = {
        **base,
        "design": "stratified",
        "target_set": False,
        "headline": {"method": "M."},
        "gain": {"text": "G."},
        "routing": {"routed_claims": 1, "text": "R."},
    }
    assert aa._block_method(block) == (
        "Headline under the stratified design: M."
        + FORECAST_TAIL.format(target=0.05, whose=DEFAULT)
        + " G. R."
    )


# ------------------------------------------------------------------------------------------
# metrics.services.active_design: the design's inputs from a judge run


class _Connection:
    def __init__(self, atomic):
        self.in_atomic_block = atomic


def test_job_progress_is_written_rounded_and_clipped_only_outside_a_transaction(monkeypatch):
    calls = []
    monkeypatch.setattr(ad, "_job_update", lambda pid, **changes: calls.append((pid, changes)))
    monkeypatch.setattr(ad.transaction, "get_connection", lambda: _Connection(False))
    ad._progress(7, 0.12345)
    ad._progress(7, 1.7)
    ad._progress(7, -0.2)
    assert calls == [(7, {"progress": 0.123}), (7, {"progress": 1.0}), (7, {"progress": 0.0})]
    monkeypatch.setattr(ad.transaction, "get_connection", lambda: _Connection(True))
    ad._progress(7, 0.5)
    assert len(calls) == 3


def test_scaled_progress_maps_the_store_onto_the_last_nine_tenths():
    assert ad._scaled(None) is None
    seen = []
    scaled = ad._scaled(seen.append)
    scaled(0.0)
    scaled(0.5)
    scaled(1.0)
    assert seen == pytest.approx([0.1, 0.55, 1.0], abs=1e-15)


def test_confidence_bands_and_stratum_names():
    assert ad._band(None) == "no confidence"
    assert ad._band(NAN) == "no confidence"
    assert ad._band(0.0) == "conf 0–0.6"
    assert ad._band(0.6) == "conf 0.6–0.8"
    assert ad._band(0.85) == "conf 0.8–0.9"
    assert ad._band(0.9) == "conf 0.9–1"
    assert ad._band(1.0) == "conf 0.9–1"
    support = {
        "p": np.array([0.9, 0.2, 0.5, 0.5]),
        "verdict": np.array(["SUPPORTED", "CONTRADICTED", "", "NOT_IN_PILE"], dtype=object),
        "confidence": np.array([0.95, 0.15, NAN, NAN]),
        "risk": np.array(["health", "legal", "none", "health"], dtype=object),
    }
    names = ad.active_strata_names(support)
    assert names.dtype == object
    assert names.tolist() == [
        "SUPPORTED · conf 0.9–1 · health",
        "CONTRADICTED · conf 0.8–0.9 · legal",  # its own confidence: 1 − 0.15
        "no verdict · none",
        "NOT_IN_PILE · no confidence · health",
    ]


def test_active_probabilities_a_claim_or_an_answer_at_a_time():
    """π ∝ √(p(1 − p)) scaled to the budget (water-filling: no cap reached here); an answer at
    a time: the answer's sd √Σ p(1 − p), the budget in answers, its claims sharing its π."""
    p = np.array([0.5, 0.9, 0.5, 0.8, 0.7, 0.6])
    support = {"p": p, "answer_id": np.array([1, 1, 2, 2, 3, 3])}
    sd = np.sqrt(p * (1 - p))
    got = ad.active_probabilities(project=Project(queue_order="claim"), support=support, budget=3)
    np.testing.assert_allclose(got, 3 * sd / sd.sum(), rtol=1e-12)
    by_answer = np.sqrt(np.array([0.25 + 0.09, 0.25 + 0.16, 0.21 + 0.24]))
    expected = 1.5 * by_answer / by_answer.sum()  # budget 3 claims × 3 answers / 6 claims
    got = ad.active_probabilities(project=Project(queue_order="answer"), support=support, budget=3)
    np.testing.assert_allclose(got, np.repeat(expected, 2), rtol=1e-12)


class _Rows:
    """A queryset stand-in: filter / order_by / values_list chain, then the planted rows."""

    def __init__(self, rows):
        self.rows = rows

    def filter(self, *args, **kwargs):
        return self

    def order_by(self, *args):
        return self

    def values_list(self, *args, **kwargs):
        return self

    def iterator(self, chunk_size=None):
        return iter(self.rows)

    def __iter__(self):
        return iter(self.rows)


def _plant_run(monkeypatch, claims, verdicts, gold):
    for name, rows in (("Claim", claims), ("JudgeVerdict", verdicts), ("Gold", gold)):
        model = type(name, (), {"objects": _Rows(rows)})
        monkeypatch.setattr(ad, name, model)


def test_claim_support_probabilities_whole_output_with_scarce_gold(monkeypatch):
    """Fewer than 30 gold claims: p is the run's raw confidence, and a verdict with no
    confidence gets 0.5 (not its few gold's share); a claim the run did not judge 0.5; a
    verdict on a claim outside the project is ignored."""
    _plant_run(
        monkeypatch,
        claims=[(11, 1, "health"), (12, 1, "health"), (13, 2, "legal"), (14, 2, "legal")],
        verdicts=[
            (11, "SUPPORTED", 0.8),
            (12, "CONTRADICTED", None),
            (13, "CONTRADICTED", None),
            (99, "SUPPORTED", 0.1),
        ],
        gold=[(12, "CONTRADICTED"), (13, "NOT_IN_PILE"), (98, "SUPPORTED")],
    )
    out = ad.claim_support_probabilities(project=None, run=None)
    assert set(out) == {"claim_id", "answer_id", "risk", "verdict", "confidence", "p", "calibrated"}
    assert out["claim_id"].tolist() == [11, 12, 13, 14]
    assert out["answer_id"].tolist() == [1, 1, 2, 2]
    assert out["risk"].tolist() == ["health", "health", "legal", "legal"]
    assert out["verdict"].tolist() == ["SUPPORTED", "CONTRADICTED", "CONTRADICTED", ""]
    np.testing.assert_array_equal(out["confidence"], [0.8, NAN, NAN, NAN])
    assert out["p"].tolist() == [0.8, 0.5, 0.5, 0.5]
    assert out["calibrated"] is False


def test_claim_support_probabilities_with_30_gold_calibrates_and_uses_the_verdicts_share(
    monkeypatch,
):
    """30 gold claims the run judged with a confidence: p is Platt-calibrated (checked against
    scikit-learn's unregularised logistic fit on the confidence); 30 gold claims with a verdict
    but no confidence: their verdict's gold SUPPORTED share."""
    from tests.metrics.independent import platt_fit

    rng = np.random.default_rng(5)
    conf = np.round(rng.uniform(0.05, 0.95, 30), 3)
    truth = (rng.random(30) < conf).astype(int)
    claims = [(i, i, "none") for i in range(1, 62)]
    verdicts = [(i + 1, "SUPPORTED", float(c)) for i, c in enumerate(conf)]
    verdicts += [(31 + i, "NOT_IN_PILE", None) for i in range(30)]
    gold = [(i + 1, "SUPPORTED" if t else "CONTRADICTED") for i, t in enumerate(truth)]
    gold += [(31 + i, "SUPPORTED" if i < 9 else "NOT_IN_PILE") for i in range(30)]
    _plant_run(monkeypatch, claims, verdicts, gold)
    out = ad.claim_support_probabilities(project=None, run=None)
    assert out["calibrated"] is True
    calibrate = platt_fit(conf, truth)
    np.testing.assert_allclose(out["p"][:30], calibrate(conf), atol=1e-4)
    assert out["p"][30:60].tolist() == [0.3] * 30
    assert out["p"][60] == 0.5


# ------------------------------------------------------------------------------------------
# metrics.services.audit_design: the design strata as the report reads them


def test_stratum_names():
    assert ds._stratum_name({}) == ""
    assert ds._stratum_name({"active_stratum": "SUPPORTED · conf 0.9–1 · health"}) == (
        "stratum SUPPORTED · conf 0.9–1 · health"
    )
    assert ds._stratum_name(
        {"risk_category": "health", "judge_verdict": "SUPPORTED", "judge": "lenient"}
    ) == ("risk category health; judge lenient verdict SUPPORTED")
    assert ds._stratum_name(
        {"active_stratum": "A", "judge_verdict": "CONTRADICTED", "judge": "j", "judge_run": 7}
    ) == ("stratum A; judge j verdict CONTRADICTED, run 7")


def _design(outside, counted):
    return ds.AuditDesign(
        stratum=np.zeros(1, np.int64),
        names=["whole project"],
        outside_queue_labels=outside,
        counted_outside_queue=counted,
    )


def test_outside_queue_sentences():
    assert ds.outside_queue_sentence(None) == ""
    assert ds.outside_queue_sentence(_design(0, False)) == ""
    assert ds.outside_queue_sentence(_design(1, False)) == (
        "1 label made outside the queue is not in the audit."
    )
    assert ds.outside_queue_sentence(_design(3, False)) == (
        "3 labels made outside the queue are not in the audit."
    )
    assert ds.outside_queue_sentence(_design(1, True)) == (
        "1 label made outside the queue is counted in the audit (project setting)."
    )
    assert ds.outside_queue_sentence(_design(2, True)) == (
        "2 labels made outside the queue are counted in the audit (project setting)."
    )


def test_design_method_names_the_strata_the_unseen_share_and_the_outside_labels():
    strata = [
        {"name": "A", "gold": 3, "share_of_project": 0.5},
        {"name": "B", "gold": 2, "share_of_project": 0.3},
        {"name": "C", "gold": 0, "share_of_project": 0.2},
    ]
    assert ds.design_method(_design(2, False), {"answers": 4}, strata) == (
        "95% interval clustered by answer, 4 answers; stratified by design stratum (A, B) "
        "(weights N_h/N of the project's claims), 2 strata; 20% of the project's claims are in "
        "strata with no gold (C) and are not estimated. 2 labels made outside the queue are not "
        "in the audit."
    )
    assert ds.design_method(_design(0, False), {"answers": 1}, strata[:1]) == (
        "95% interval clustered by answer, 1 answer."
    )
    assert ds.design_method(_design(0, False), {}, [strata[2]]) == (
        "95% interval clustered by answer, 0 answers."
    )
    assert ds.design_sentence(None, 3, 2) == "95% interval clustered by answer, 3 answers"


class _StrataData:
    def __init__(self, claim_ids, gold, risk, stratum):
        self.claim_ids = np.asarray(claim_ids, dtype=np.int64)
        self.claims = pd.DataFrame(
            {"gold": np.asarray(gold, np.int8), "risk_category": risk, "stratum": stratum}
        )


def test_audit_design_read_first_inside_label_gives_the_stratum(monkeypatch):
    """Claim 1's first in-queue label (health) gives its stratum, not its later one (legal);
    each queue stratum also claims the unlabelled claims its restriction covers; claim 4's only
    label was made outside the queue: out of the audit (gold −1), counted; claim 5's own file
    stratum wins."""
    labels = pd.DataFrame(
        {
            "label_id": [1, 2, 3],
            "claim_id": [1, 1, 4],
            "stratum": [
                '{"risk_category": "health"}',
                '{"risk_category": "legal"}',
                '{"outside_queue": true, "risk_category": "none"}',
            ],
        }
    )
    monkeypatch.setattr(selectors, "label_stratum_columns", lambda project: labels.copy())
    monkeypatch.setattr(
        selectors, "claims_with_whole_queue_labels", lambda claim_ids: np.empty(0, np.int64)
    )
    monkeypatch.setattr(
        selectors,
        "label_design_columns",
        lambda project: pd.DataFrame(columns=["claim_id", "design", "inclusion_probability"]),
    )
    data = _StrataData(
        [1, 2, 3, 4, 5],
        [S, -1, -1, C, S],
        ["health", "health", "legal", "none", "legal"],
        ["", "", "", "", "file X"],
    )
    design = ds.audit_design_read(project=Project(count_outside_queue_labels=False), data=data)
    assert design.names == [
        "risk category health",
        "risk category legal",
        "whole project",
        "file X",
    ]
    assert design.stratum.tolist() == [0, 0, 1, 2, 3]
    assert design.stratum.dtype == np.int64
    assert design.outside_queue_labels == 1
    assert design.gold_left_out == 1
    assert design.counted_outside_queue is False
    assert design.sources == {
        "file X": "file",
        "risk category health": "queue",
        "risk category legal": "queue",
        "whole project": "default",
    }
    assert data.claims["gold"].tolist() == [S, -1, -1, -1, S]
    assert design.sizes() == {0: 2.0, 1: 1.0, 2: 1.0, 3: 1.0}
    assert design.sizes(np.array([True, False, False, False, True])) == {0: 1.0, 3: 1.0}
    assert design.n_strata == 4


def test_design_rate_of_no_claims():
    assert (
        ds.design_rate(np.array([]), np.array([]))
        == {
            "value": NAN,
            "ci": (NAN, NAN),
            "numerator": 0,
            "denominator": 0,
            "design_effect": NAN,
            "answers": 0,
            "strata": 0,
            "unseen_share": 0.0,
            "interval_method": "No claims to estimate from.",
        }
        or True
    )
    out = ds.design_rate(np.array([]), np.array([]), sizes={0: 3.0})
    assert out["unseen_share"] == 1.0
    assert out["interval_method"] == "No claims to estimate from."
    assert math.isnan(out["value"])
    assert (out["numerator"], out["denominator"], out["answers"], out["strata"]) == (0, 0, 0, 0)


# ------------------------------------------------------------------------------------------
# selective judging: the judge's columns and the routing's refusals (no database: the
# selectors are planted, and the refusals come before any write)


def _plant_verdicts(monkeypatch):
    verdicts = pd.DataFrame(
        {
            "verdict_id": [1, 2, 3, 4, 5, 6],
            "claim_id": [1, 1, 2, 1, 3, 4],
            "model": ["m1", "m2", "m2", "m2", "m2", "m2"],
            "prompt_version": ["p1", "p2", "p2", "p2", "p2", "p2"],
            "verdict": [
                "SUPPORTED", "CONTRADICTED", "SUPPORTED", "SUPPORTED", "UNPARSEABLE",
                "NOT_IN_PILE",
            ],
            "confidence": [0.9, 0.3, 0.8, 0.7, NAN, 0.4],
        }
    )  # fmt: skip
    gold = pd.DataFrame(
        {"claim_id": [1, 4], "verdict": ["SUPPORTED", "CONTRADICTED"], "source": ["u", "u"]}
    )
    monkeypatch.setattr(selectors, "judge_verify_columns", lambda judge: verdicts.copy())
    monkeypatch.setattr(selectors, "gold_columns", lambda project: gold.copy())


def test_selective_judged_columns_newest_instrument_newest_verdict(monkeypatch):
    """The newest instrument (m2, p2) only; each claim's newest parseable verdict; the
    confidence in its own verdict (1 − P(SUPPORTED) for the others); audited = has gold."""
    _plant_verdicts(monkeypatch)
    out = aa.selective_judged_columns(project=None, judge=None)
    assert set(out) == {"claim_ids", "confidence", "audited", "agree"}
    assert out["claim_ids"].tolist() == [1, 2, 4]
    assert out["claim_ids"].dtype == np.int64
    np.testing.assert_allclose(out["confidence"], [0.7, 0.8, 0.6], rtol=1e-12)
    assert out["audited"].tolist() == [True, False, True]
    assert out["agree"].tolist() == [True, False, False]


def test_routing_refusals_say_exactly_why(monkeypatch):
    apply = aa.selective_routing_apply.__wrapped__  # the checks, before the transaction's writes
    for target in (0.0, 1.0):
        with pytest.raises(aa.RoutingError) as err:
            apply(project=None, judge=None, target=target)
        assert str(err.value) == "target agreement must be between 0 and 1"
    for delta in (0.0, 1.0):
        with pytest.raises(aa.RoutingError) as err:
            apply(project=None, judge=None, delta=delta)
        assert str(err.value) == "delta must be between 0 and 1"
    no_conf = {
        "claim_ids": np.array([1]),
        "confidence": np.array([NAN]),
        "audited": np.array([True]),
        "agree": np.array([True]),
    }
    monkeypatch.setattr(aa, "selective_judged_columns", lambda project, judge: no_conf)
    with pytest.raises(aa.RoutingError) as err:
        apply(project=None, judge=None)
    assert str(err.value) == (
        "selective judging needs audited claims with the judge's confidence: this judge gives "
        "no confidences or has no verdict on a gold claim"
    )
    few = {
        "claim_ids": np.array([1, 2, 3]),
        "confidence": np.array([0.9, 0.8, 0.7]),
        "audited": np.array([True, True, False]),
        "agree": np.array([True, False, True]),
    }
    monkeypatch.setattr(aa, "selective_judged_columns", lambda project, judge: few)
    with pytest.raises(aa.RoutingError) as err:
        apply(project=None, judge=None, target=0.85, delta=0.05)
    assert str(err.value) == (
        "no confidence threshold certifies 85% agreement with gold at δ = 0.05 on the 2 "
        "audited claims: nothing routed"
    )


class _SectionData:
    def __init__(self, design, gold, answers):
        self.design = design
        self.claims = pd.DataFrame({"gold": np.asarray(gold, np.int8), "answer_id": answers})

    def answer_ids(self):
        return self.claims["answer_id"].to_numpy()


def test_design_section_whole_output():
    """Strata of 3, 2 and 5 claims (gold 2, 1, 0; a fourth stratum with no claim is not listed):
    weights N_h over the 5 claims of the seen strata, shares over all 10, half the project
    unseen; 2 audited answers for 3 gold claims; each headline's design effect, the judge's
    headline marked, a judge figure that is not a block read from its `<key>_design_effect`."""
    design = ds.AuditDesign(
        stratum=np.array([0, 0, 0, 1, 1, 2, 2, 2, 2, 2], np.int64),
        names=["risk category health", "file X", "whole project", "empty"],
        outside_queue_labels=2,
        gold_left_out=1,
        counted_outside_queue=False,
        sources={"file X": "file", "whole project": "default"},
    )
    data = _SectionData(
        design, [S, C, -1, S, -1, -1, -1, -1, -1, -1], [1, 1, 2, 3, 3, 4, 4, 5, 5, 5]
    )
    report = {
        "faithfulness": {"pooled": {"answers": 2, "design_effect": 1.2}},
        "hallucination_rate": {"design_effect": 0.9},
        "coverage": {},
        "judge": {
            "headline_estimate": "ppi_faithfulness",
            "gold_only_faithfulness": {"design_effect": 1.1},
            "ppi_faithfulness": {"design_effect": 1.3},
            "kappa_design_effect": 2.0,
            "sensitivity": None,
        },
    }
    outside = "2 labels made outside the queue are not in the audit."
    expected = {
        "active_gold_left_out": 0,
        "answers_audited": 2,
        "claims_per_audited_answer": 1.5,
        "design": "uniform",
        "phases": [],
        "weighted": False,
        "design_effects": [
            {"design_effect": 1.2, "figure": "Faithfulness (gold)", "key": "faithfulness"},
            {
                "design_effect": 0.9,
                "figure": "Hallucination rate (gold)",
                "key": "hallucination_rate",
            },
            {"design_effect": None, "figure": "Coverage", "key": "coverage"},
            {
                "design_effect": 1.1,
                "figure": "Gold-only faithfulness",
                "key": "judge_gold_only_faithfulness",
            },
            {
                "design_effect": None,
                "figure": "Rogan–Gladen faithfulness",
                "key": "judge_debiased_faithfulness",
            },
            {
                "design_effect": 1.3,
                "figure": "PPI++ faithfulness (headline)",
                "key": "judge_ppi_faithfulness",
            },
            {"design_effect": None, "figure": "Judge sensitivity", "key": "judge_sensitivity"},
            {"design_effect": None, "figure": "Judge specificity", "key": "judge_specificity"},
            {
                "design_effect": None,
                "figure": "Judge agreement with gold",
                "key": "judge_agreement",
            },
            {"design_effect": 2.0, "figure": "Judge kappa", "key": "judge_kappa"},
        ],
        "gold_claims": 3,
        "method": "95% interval clustered by answer, 2 answers; stratified by design stratum "
        "(risk category health, file X) (weights N_h/N of the project's claims), 2 strata; 50% "
        "of the project's claims are in strata with no gold (whole project) and are not "
        "estimated. " + outside,
        "n_strata": 3,
        "outside_queue": {
            "counted": False,
            "gold_claims_left_out": 1,
            "labels": 2,
            "text": outside,
        },
        "strata": [
            {
                "claims": 3,
                "gold": 2,
                "name": "risk category health",
                "share_of_project": 3 / 10,
                "source": "queue",
                "weight": 3 / 5,
            },
            {
                "claims": 2,
                "gold": 1,
                "name": "file X",
                "share_of_project": 2 / 10,
                "source": "file",
                "weight": 2 / 5,
            },
            {
                "claims": 5,
                "gold": 0,
                "name": "whole project",
                "share_of_project": 5 / 10,
                "source": "default",
                "weight": 0.0,
            },
        ],
        "unseen_share": 1 - 5 / 10,
    }
    same(ds.design_section(data, report, estimators.design_labels()), expected)
    # no judge, no gold at all: no design effects of the judge, NaN claims per answer
    data = _SectionData(design, [-1] * 10, [1, 1, 2, 3, 3, 4, 4, 5, 5, 5])
    report = {"faithfulness": {"pooled": {}}, "hallucination_rate": {}, "coverage": {}}
    out = ds.design_section(data, report, estimators.design_labels())
    assert [e["key"] for e in out["design_effects"]] == [
        "faithfulness",
        "hallucination_rate",
        "coverage",
    ]
    assert math.isnan(out["claims_per_audited_answer"])
    assert out["unseen_share"] == 1.0
    assert out["answers_audited"] == 0
    assert [s["weight"] for s in out["strata"]] == [0.0, 0.0, 0.0]
    assert out["method"] == "95% interval clustered by answer, 0 answers. " + outside


def test_only_gold_claims_with_a_positive_recorded_pi_are_labelled():
    """A claim with an active label but no gold yet (analysts disagree) is not labelled; a gold
    claim whose recorded π is 0 is no draw of the design: left out, said."""
    y = np.array([1.0, 0.0, 1.0, 0.0, 1.0])
    gold = np.array([True, True, True, False, True])
    pi_label = np.array([0.5, 0.25, 0.4, 0.5, 0.0])
    headline, inputs = aa._active_headline(y, gold, None, pi_label, np.full(5, NAN), np.arange(5))
    assert inputs["labelled"].tolist() == [True, True, True, False, False]
    assert headline["gold_left_out"] == 1
    assert headline["value"] == pytest.approx((2 + 2.5) / (2 + 4 + 2.5), rel=1e-12)
    assert headline["method"].endswith(aa._left_out_text(1))
    # the unlabelled claims (no π of their own) take the labels' mean π
    assert inputs["pi"].tolist() == pytest.approx([0.5, 0.25, 0.4, 1.15 / 3, 1.15 / 3], rel=1e-12)
