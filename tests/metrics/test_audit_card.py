"""Whole-output tests of the readable audit card (metrics/services/audit_card_text.py): the
readable dict and the Markdown compared whole with literals read off by hand, for a planted card
with every optional figure present (system, Youden's J, canaries, a recorded design, every
limit), for a card with nothing optional, and for the demo project's golden card JSON
(tests/metrics/golden/demo_audit_card.json, pinned by test_golden_report.py), whose Markdown is
golden too (tests/metrics/golden/demo_audit_card.md, regenerated with FA_UPDATE_GOLDEN=1).

The figures in the planted card come from planted gold/judge pairs, counted by hand and checked
against statsmodels' Wilson interval and scikit-learn's kappa; the whole percents in the
literals are those figures rounded halves up by hand (an independent rounding below).
No database."""

import csv
import io
import json
import math
import os
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import pytest
from django.core.management import call_command
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.proportion import proportion_confint

from metrics.services.audit_card_text import (
    _estimate_row,
    _interval,
    _limits,
    _row,
    _sample,
    _when,
    audit_card_markdown,
    audit_card_readable,
)
from tests.metrics.factories_report import build_planted_project
from tests.metrics.test_dashboard_summary import _card

DASH = "—"
GOLDEN = Path(__file__).parent / "golden"
CAVEAT = (
    "The guarantee holds in expectation over the calibration draw: the false-claim rate "
    "averaged over many random calibration sets is at most α. One deployment can overshoot it, "
    "and it assumes future answers are exchangeable with the calibration answers."
)

# 20 audited claims: 12 gold SUPPORTED (the judge says SUPPORTED on 10), 8 gold not (the judge
# says not SUPPORTED on 7). 1 = SUPPORTED.
GOLD = [1] * 12 + [0] * 8
JUDGE = [1] * 10 + [0] * 2 + [0] * 7 + [1]


def _half_up(x: float) -> int:
    """Independent whole percent, halves up on the decimal a reader sees."""
    return int((Decimal(str(x)) * 100).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def _wilson(k, n):
    return list(proportion_confint(k, n, alpha=0.05, method="wilson"))


def _counts():
    tp = sum(g == 1 and j == 1 for g, j in zip(GOLD, JUDGE, strict=True))
    tn = sum(g == 0 and j == 0 for g, j in zip(GOLD, JUDGE, strict=True))
    pos, neg = GOLD.count(1), GOLD.count(0)
    return tp, tn, pos, neg


def full_card() -> dict:
    tp, tn, pos, neg = _counts()
    sens, spec = tp / pos, tn / neg
    return {
        "judge": "strict-judge",
        "backend": "openai",
        "model": "gpt-x",
        "prompt_version": "abc123def456",
        "date": "2026-12-01T16:11:30+01:00",
        "project": "acme",
        "system": "assistant@2024-06",
        "audit_sample_size": len(GOLD),
        "judged_claims": 31,
        "gold_source": {"unanimous": 17, "adjudicated": 3},
        "sensitivity": {
            "value": sens,
            "ci": _wilson(tp, pos),
            "n": pos,
            "interval_method": "Wilson, clustered.",
        },
        "specificity": {
            "value": spec,
            "ci": _wilson(tn, neg),
            "n": neg,
            "interval_method": "Wilson, clustered.",
        },
        "youden_j": sens + spec - 1,
        "agreement": (tp + tn) / len(GOLD),
        "agreement_ci": _wilson(tp + tn, len(GOLD)),
        "kappa": cohen_kappa_score(GOLD, JUDGE),
        "human_kappa_ceiling": 0.8512,
        "naive_faithfulness": 0.55,
        "gold_only_faithfulness": {
            "value": pos / len(GOLD),
            "ci": _wilson(pos, len(GOLD)),
            "method": "audit sample alone, Wilson interval (95%)",
            "interval_method": "Wilson at the effective sample size.",
        },
        "debiased_faithfulness": {
            "value": 0.6012,
            "ci": [0.3012, 0.8988],
            "interval_method": "Lang–Reiczigel | clustered.",
        },
        "ppi_faithfulness": {
            "value": 0.6123,
            "ci": [0.5012, 0.7234],
            "method": "PPI++ (power-tuned).",
            "interval_method": "t with 7 df.",
        },
        "headline_estimate": "debiased_faithfulness",
        "headline_ci": [0.3012, 0.8988],
        "headline_reason": "Rogan–Gladen is the only valid one.",
        "ece": {"raw": 0.1234, "platt": 0.0567, "isotonic": 0.0449},
        "crc": {
            "alpha": 0.05,
            "lambda_hat": 0.8731,
            "retained": 7,
            "test_claims": 10,
            "realized_false_claim_rate": 0.0429,
        },
        "canary_pass_rate": 0.8,
        "canaries": 5,
        "unparseable": 3,
        "stale_verdicts_left_out": 2,
        "instruments_left_out_all_stale": ["model m, prompt p: 4 verdicts"],
        "not_computed": "too few answers",
        "method": "Audit of strict-judge.",
    }


DESIGN = {
    "strata": [{"name": "high"}, {"name": "low"}, {"name": "none"}],
    "answers_audited": 9,
    "claims_per_audited_answer": 2.2222,
    "method": "Stratified by risk,\nNeyman allocation.",
    "unseen_share": 0.125,
}

FULL_FIGURES = [
    {
        "label": "Faithfulness, gold only (audit sample)",
        "figure": "60%",
        "interval": "39–78%",
        "method": "audit sample alone, Wilson interval (95%). Wilson at the effective sample size.",
        "headline": False,
    },
    {
        "label": "Faithfulness, Rogan–Gladen (debiased) — headline",
        "figure": "60%",
        "interval": "30–90%",
        "method": "Lang–Reiczigel | clustered.",
        "headline": True,
    },
    {
        "label": "Faithfulness, PPI++ (prediction-powered)",
        "figure": "61%",
        "interval": "50–72%",
        "method": "PPI++ (power-tuned). t with 7 df.",
        "headline": False,
    },
    {
        "label": "Faithfulness the judge alone would claim (naive)",
        "figure": "55%",
        "interval": DASH,
        "method": "Share of the judge's verdicts that are SUPPORTED, with none of its errors "
        "corrected.",
    },
    {
        "label": "Sensitivity",
        "figure": "83%",
        "interval": "55–95%",
        "method": "On 12 audited claims. Wilson, clustered.",
    },
    {
        "label": "Specificity",
        "figure": "88%",
        "interval": "53–98%",
        "method": "On 8 audited claims. Wilson, clustered.",
    },
    {
        "label": "Agreement with gold",
        "figure": "85%",
        "interval": "64–95%",
        "method": "Share of audited claims where the judge's verdict equals gold; clustered by "
        "answer.",
    },
    {
        "label": "Cohen's kappa (judge–gold)",
        "figure": "0.69",
        "interval": DASH,
        "method": "Agreement beyond chance; the analysts' own kappa, 0.85, is its ceiling.",
    },
    {
        "label": "Youden's J",
        "figure": "0.71",
        "interval": DASH,
        "method": "Sensitivity + specificity − 1.",
    },
    {
        "label": "Expected calibration error",
        "figure": "0.12",
        "interval": DASH,
        "method": "Raw confidence; after Platt scaling 0.06, isotonic 0.04; out of fold.",
    },
    {
        "label": "Confidence cut for a false-claim rate ≤ 5%",
        "figure": "0.87",
        "interval": DASH,
        "method": "Conformal risk control: 7 of 10 held-out claims kept, realized false-claim "
        "rate 4%.",
    },
    {
        "label": "Canary pass rate",
        "figure": "80%",
        "interval": DASH,
        "method": "Planted claims the pile cannot support that came back NOT_IN_PILE, of 5.",
    },
]

FULL_LIMITS = [
    "The headline interval is wide (±30 points): 20 audited claims are few; more labels narrow it.",
    "3 judge responses could not be read and are not counted as verdicts.",
    "2 verdicts on a claim's earlier text are left out.",
    "Instrument left out, every verdict stale: model m, prompt p: 4 verdicts.",
    "Not computed: too few answers.",
    "13% of the project's claims are in strata with no gold: no figure covers them.",
    CAVEAT,
]

FULL_MARKDOWN = (
    "# Audit card: strict-judge\n"
    "\n"
    "- **Judge**: strict-judge\n"
    "- **Backend**: openai\n"
    "- **Model**: gpt-x\n"
    "- **Prompt version**: abc123def456\n"
    "- **Project**: acme\n"
    "- **Answers of**: assistant@2024-06\n"
    "- **Computed**: 2026-12-01 15:11 UTC\n"
    "\n"
    "## Audit sample\n"
    "\n"
    "- 20 audited claims (gold verdicts: 17 unanimous among analysts, 3 adjudicated by a lead) "
    "out of 31 claims the judge judged.\n"
    "- Design: 3 strata (high, low, none), 9 audited answers, 2.2 gold claims per audited "
    "answer. Stratified by risk, Neyman allocation.\n"
    "\n"
    "## Figures\n"
    "\n"
    "| Figure | Value | 95% interval | How |\n"
    "|---|---|---|---|\n"
    "| Faithfulness, gold only (audit sample) | 60% | 39–78% | audit sample alone, Wilson "
    "interval (95%). Wilson at the effective sample size. |\n"
    "| Faithfulness, Rogan–Gladen (debiased) — headline | 60% | 30–90% | Lang–Reiczigel \\| "
    "clustered. |\n"
    "| Faithfulness, PPI++ (prediction-powered) | 61% | 50–72% | PPI++ (power-tuned). t with 7 "
    "df. |\n"
    "| Faithfulness the judge alone would claim (naive) | 55% | — | Share of the judge's "
    "verdicts that are SUPPORTED, with none of its errors corrected. |\n"
    "| Sensitivity | 83% | 55–95% | On 12 audited claims. Wilson, clustered. |\n"
    "| Specificity | 88% | 53–98% | On 8 audited claims. Wilson, clustered. |\n"
    "| Agreement with gold | 85% | 64–95% | Share of audited claims where the judge's verdict "
    "equals gold; clustered by answer. |\n"
    "| Cohen's kappa (judge–gold) | 0.69 | — | Agreement beyond chance; the analysts' own "
    "kappa, 0.85, is its ceiling. |\n"
    "| Youden's J | 0.71 | — | Sensitivity + specificity − 1. |\n"
    "| Expected calibration error | 0.12 | — | Raw confidence; after Platt scaling 0.06, "
    "isotonic 0.04; out of fold. |\n"
    "| Confidence cut for a false-claim rate ≤ 5% | 0.87 | — | Conformal risk control: 7 of 10 "
    "held-out claims kept, realized false-claim rate 4%. |\n"
    "| Canary pass rate | 80% | — | Planted claims the pile cannot support that came back "
    "NOT_IN_PILE, of 5. |\n"
    "\n"
    "**Why the headline:** Rogan–Gladen is the only valid one.\n"
    "\n"
    "## Limits\n"
    "\n"
    "- The headline interval is wide (±30 points): 20 audited claims are few; more labels "
    "narrow it.\n"
    "- 3 judge responses could not be read and are not counted as verdicts.\n"
    "- 2 verdicts on a claim's earlier text are left out.\n"
    "- Instrument left out, every verdict stale: model m, prompt p: 4 verdicts.\n"
    "- Not computed: too few answers.\n"
    "- 13% of the project's claims are in strata with no gold: no figure covers them.\n"
    f"- {CAVEAT}\n"
    "\n"
    "## Method\n"
    "\n"
    "Audit of strict-judge.\n"
)


def test_full_card_figures_are_the_planted_pairs_counted_by_hand():
    """The planted card's figures, independently: sensitivity 10/12, specificity 7/8, agreement
    17/20, J = 10/12 + 7/8 − 1 = 0.7083, and the whole percents of the literals above from
    statsmodels' Wilson ends rounded halves up."""
    tp, tn, pos, neg = _counts()
    assert (tp, tn, pos, neg) == (10, 7, 12, 8)
    rows = {r["label"]: r for r in FULL_FIGURES}
    for label, k, n in (("Sensitivity", 10, 12), ("Specificity", 7, 8)):
        lo, hi = proportion_confint(k, n, method="wilson")
        assert rows[label]["figure"] == f"{_half_up(k / n)}%"
        assert rows[label]["interval"] == f"{_half_up(lo)}–{_half_up(hi)}%"
    lo, hi = proportion_confint(17, 20, method="wilson")
    assert rows["Agreement with gold"]["interval"] == f"{_half_up(lo)}–{_half_up(hi)}%"
    lo, hi = proportion_confint(12, 20, method="wilson")
    assert rows["Faithfulness, gold only (audit sample)"]["interval"] == (
        f"{_half_up(lo)}–{_half_up(hi)}%"
    )
    assert f"{10 / 12 + 7 / 8 - 1:.2f}" == rows["Youden's J"]["figure"] == "0.71"
    # kappa by hand: p_o = 17/20, p_e = (11/20)(12/20) + (9/20)(8/20) = 0.51
    kappa = (17 / 20 - 0.51) / (1 - 0.51)
    assert full_card()["kappa"] == pytest.approx(kappa)
    assert f"{kappa:.2f}" == "0.69"
    # (0.8988 − 0.3012)/2 = 0.2988 > 0.10: wide, ±round(29.88) = ±30 points
    assert round(50 * (0.8988 - 0.3012)) == 30


def test_full_card_readable_whole():
    readable = audit_card_readable(card=full_card(), design=DESIGN)
    assert readable == {
        "identity": [
            ("Judge", "strict-judge"),
            ("Backend", "openai"),
            ("Model", "gpt-x"),
            ("Prompt version", "abc123def456"),
            ("Project", "acme"),
            ("Answers of", "assistant@2024-06"),
            ("Computed", "2026-12-01 15:11 UTC"),
        ],
        "sample": [
            "20 audited claims (gold verdicts: 17 unanimous among analysts, 3 adjudicated by a "
            "lead) out of 31 claims the judge judged.",
            "Design: 3 strata (high, low, none), 9 audited answers, 2.2 gold claims per audited "
            "answer. Stratified by risk,\nNeyman allocation.",
        ],
        "figures": FULL_FIGURES,
        "headline_reason": "Rogan–Gladen is the only valid one.",
        "limits": FULL_LIMITS,
        "method": "Audit of strict-judge.",
        "history": [],
        "guidelines": [],
    }
    assert list(readable) == [
        "identity",
        "sample",
        "figures",
        "headline_reason",
        "limits",
        "method",
        "history",
        "guidelines",
    ]
    for row in readable["figures"]:
        assert list(row)[:4] == ["label", "figure", "interval", "method"]


def test_full_card_markdown_whole():
    assert audit_card_markdown(audit_card_readable(card=full_card(), design=DESIGN)) == (
        FULL_MARKDOWN
    )


def _bare_card(**extra) -> dict:
    """Only the keys the card always has; every optional figure absent."""
    return {
        "judge": "j",
        "backend": "baseline",
        "model": "",
        "prompt_version": "p1",
        "date": "not a date",
        "project": "demo",
        "audit_sample_size": 0,
        "judged_claims": 4,
        "gold_source": {"unanimous": 0, "adjudicated": 0},
        **extra,
    }


BARE_FIGURES = [
    {
        "label": "Faithfulness, gold only (audit sample)",
        "figure": DASH,
        "interval": DASH,
        "method": "",
        "headline": False,
    },
    {
        "label": "Faithfulness, Rogan–Gladen (debiased)",
        "figure": DASH,
        "interval": DASH,
        "method": "",
        "headline": False,
    },
    {
        "label": "Faithfulness, PPI++ (prediction-powered)",
        "figure": DASH,
        "interval": DASH,
        "method": "",
        "headline": False,
    },
    {
        "label": "Faithfulness the judge alone would claim (naive)",
        "figure": DASH,
        "interval": DASH,
        "method": "Share of the judge's verdicts that are SUPPORTED, with none of its errors "
        "corrected.",
    },
    {"label": "Sensitivity", "figure": DASH, "interval": DASH, "method": "On 0 audited claims."},
    {"label": "Specificity", "figure": DASH, "interval": DASH, "method": "On 0 audited claims."},
    {
        "label": "Agreement with gold",
        "figure": DASH,
        "interval": DASH,
        "method": "Share of audited claims where the judge's verdict equals gold; clustered by "
        "answer.",
    },
    {
        "label": "Cohen's kappa (judge–gold)",
        "figure": DASH,
        "interval": DASH,
        "method": "Agreement beyond chance; the analysts' own kappa, —, is its ceiling.",
    },
    {
        "label": "Youden's J",
        "figure": DASH,
        "interval": DASH,
        "method": "Sensitivity + specificity − 1.",
    },
    {
        "label": "Expected calibration error",
        "figure": DASH,
        "interval": DASH,
        "method": "Raw confidence; after Platt scaling —, isotonic —; out of fold.",
    },
    {
        "label": "Confidence cut for a false-claim rate ≤ —",
        "figure": "none meets the target",
        "interval": DASH,
        "method": "Conformal risk control: 0 of 0 held-out claims kept, realized false-claim "
        "rate —.",
    },
    {
        "label": "Canary pass rate",
        "figure": DASH,
        "interval": DASH,
        "method": "Planted claims the pile cannot support that came back NOT_IN_PILE, of 0.",
    },
]

NO_CANARY = (
    "No canaries were planted, so whether the judge refuses claims the pile cannot support is "
    "untested."
)


def test_bare_card_readable_and_markdown_whole():
    """No estimate, no block, no design, no reason, no method: dashes, zero counts, the design
    not recorded, no "Why the headline" paragraph and an empty method paragraph."""
    readable = audit_card_readable(card=_bare_card(), design=None)
    assert readable == {
        "identity": [
            ("Judge", "j"),
            ("Backend", "baseline"),
            ("Model", DASH),
            ("Prompt version", "p1"),
            ("Project", "demo"),
            ("Computed", "not a date"),
        ],
        "sample": [
            "0 audited claims (gold verdicts: 0 unanimous among analysts, 0 adjudicated by a "
            "lead) out of 4 claims the judge judged.",
            "Design: not recorded in this report (computed before designs were kept).",
        ],
        "figures": BARE_FIGURES,
        "headline_reason": "",
        "limits": [NO_CANARY, CAVEAT],
        "method": "",
        "history": [],
        "guidelines": [],
    }
    table = "".join(
        f"| {r['label']} | {r['figure']} | {r['interval']} | {r['method']} |\n"
        for r in BARE_FIGURES
    )
    assert audit_card_markdown(readable) == (
        "# Audit card: j\n\n"
        "- **Judge**: j\n- **Backend**: baseline\n- **Model**: —\n- **Prompt version**: p1\n"
        "- **Project**: demo\n- **Computed**: not a date\n\n"
        "## Audit sample\n\n"
        "- 0 audited claims (gold verdicts: 0 unanimous among analysts, 0 adjudicated by a lead) "
        "out of 4 claims the judge judged.\n"
        "- Design: not recorded in this report (computed before designs were kept).\n\n"
        "## Figures\n\n| Figure | Value | 95% interval | How |\n|---|---|---|---|\n"
        + table
        + f"\n## Limits\n\n- {NO_CANARY}\n- {CAVEAT}\n\n## Method\n\n\n"
    )


@pytest.mark.parametrize(
    ("design", "line"),
    [
        (
            {"strata": [{"name": "all"}], "answers_audited": 1, "claims_per_audited_answer": 3.0},
            "Design: 1 stratum (all), 1 audited answers, 3.0 gold claims per audited answer.",
        ),
        (
            {"strata": [], "method": "Uniform."},
            "Design: 0 strata (—), 0 audited answers, — gold claims per audited answer. Uniform.",
        ),
        (
            {"strata": None, "claims_per_audited_answer": 2.96, "method": "M."},
            "Design: 0 strata (—), 0 audited answers, 3.0 gold claims per audited answer. M.",
        ),
        (
            {"method": "Kept.", "answers_audited": 2, "unseen_share": 0.0},
            "Design: 0 strata (—), 2 audited answers, — gold claims per audited answer. Kept.",
        ),
    ],
)
def test_sample_design_line_every_default(design, line):
    card = _bare_card(audit_sample_size=3, gold_source={"unanimous": 2, "adjudicated": 1})
    assert _sample(card, design) == [
        "3 audited claims (gold verdicts: 2 unanimous among analysts, 1 adjudicated by a lead) "
        "out of 4 claims the judge judged.",
        line,
    ]
    # a recorded design with no unseen share adds no limit
    assert _limits(_bare_card(canaries=1), design) == [CAVEAT]


@pytest.mark.parametrize(
    ("extra", "limits"),
    [
        # exactly 80% agreement is not below the bar; half-width exactly 0.10 is not wide
        ({"agreement": 0.8, "headline_ci": [0.0, 0.2], "canaries": 1}, [CAVEAT]),
        (
            {"agreement": 0.79, "headline_ci": [0.0, 0.2002], "canaries": 1},
            [
                "The judge agrees with analysts on 79% of audited claims, below 80%: its own "
                "verdicts do not measure this project's definition; use the corrected estimates, "
                "not the naive one.",
                "The headline interval is wide (±10 points): 0 audited claims are few; more "
                "labels narrow it.",
                CAVEAT,
            ],
        ),
        # an interval with a missing end, or a wrong length, is never called wide
        ({"headline_ci": [None, 0.9], "canaries": 2}, [CAVEAT]),
        ({"headline_ci": [], "canaries": 2, "unparseable": 0}, [CAVEAT]),
        (
            {
                "headline_ci": [0.1, 0.9],
                "audit_sample_size": 7,
                "canaries": 0,
                "instruments_left_out_all_stale": ["a", "b"],
                "stale_verdicts_left_out": 1,
                "unparseable": 1,
            },
            [
                "The headline interval is wide (±40 points): 7 audited claims are few; more "
                "labels narrow it.",
                NO_CANARY,
                "1 judge responses could not be read and are not counted as verdicts.",
                "1 verdicts on a claim's earlier text are left out.",
                "Instrument left out, every verdict stale: a.",
                "Instrument left out, every verdict stale: b.",
                CAVEAT,
            ],
        ),
    ],
)
def test_limits_whole_list_at_each_boundary(extra, limits):
    assert 0.2 / 2 == 0.10  # the exact edge the first case sits on
    assert _limits(_bare_card(**extra), None) == limits


def test_limits_unseen_share_of_a_design():
    design = {"unseen_share": 0.005}
    assert _limits(_bare_card(canaries=1), design) == [
        "1% of the project's claims are in strata with no gold: no figure covers them.",
        CAVEAT,
    ]


@pytest.mark.parametrize(
    ("estimate", "row"),
    [
        (None, ("L", DASH, DASH, "")),
        ({}, ("L", DASH, DASH, "")),
        ({"value": 0.5, "method": "A."}, ("L", "50%", DASH, "A.")),
        ({"value": 0.5, "interval_method": "B"}, ("L", "50%", DASH, "B.")),
        (
            {"value": 0.5, "ci": [0.1, 0.9], "method": "A..", "interval_method": "B."},
            ("L", "50%", "10–90%", "A. B."),
        ),
        (
            {"value": 0.0, "ci": [0.0, 1.0], "method": "", "interval_method": ""},
            ("L", "0%", "0–100%", ""),
        ),
    ],
)
def test_estimate_row_joins_its_sentences(estimate, row):
    assert _estimate_row("L", estimate) == dict(
        zip(("label", "figure", "interval", "method"), row, strict=True)
    )


def test_row_and_interval_defaults():
    assert _row("a", "b") == {"label": "a", "figure": "b", "interval": DASH, "method": ""}
    assert [
        _interval(ci) for ci in (None, [], [0.1], [0.1, None], (0.125, 0.875), [0.1, 0.2, 0.3])
    ] == [
        DASH,
        DASH,
        DASH,
        DASH,
        "13–88%",
        DASH,
    ]


@pytest.mark.parametrize(
    ("stamp", "shown"),
    [
        ("2026-12-01T15:00:00+00:00", "2026-12-01 15:00 UTC"),
        ("2026-12-01T23:59:59-05:00", "2026-12-02 04:59 UTC"),
        ("<computed_at>", "<computed_at>"),
    ],
)
def test_when_in_utc_minutes(stamp, shown):
    assert _when(stamp) == shown


def test_markdown_cells_escape_pipes_and_newlines_but_not_the_title_reason_or_limits():
    readable = {
        "identity": [("Judge", "a|b"), ("Note", "x\ny")],
        "sample": ["s|1\ns2"],
        "figures": [{"label": "l|", "figure": "f\n", "interval": "i", "method": "m|m"}],
        "headline_reason": "r|r",
        "limits": ["z|z"],
        "method": "M|M",
    }
    assert audit_card_markdown(readable) == (
        "# Audit card: a|b\n\n- **Judge**: a\\|b\n- **Note**: x y\n\n## Audit sample\n\n"
        "- s\\|1 s2\n\n## Figures\n\n| Figure | Value | 95% interval | How |\n|---|---|---|---|\n"
        "| l\\| | f  | i | m\\|m |\n\n**Why the headline:** r|r\n\n## Limits\n\n- z|z\n\n"
        "## Method\n\nM|M\n"
    )


# --- the demo project's card (its golden JSON) as Markdown ------------------------------------


def _demo_card() -> dict:
    return json.loads((GOLDEN / "demo_audit_card.json").read_text(encoding="utf-8"))


def test_demo_card_markdown_golden():
    text = audit_card_markdown(audit_card_readable(card=_demo_card(), design=None))
    path = GOLDEN / "demo_audit_card.md"
    if os.environ.get("FA_UPDATE_GOLDEN") == "1":
        path.write_bytes(text.encode("utf-8"))
    assert path.exists(), f"{path} is missing: regenerate with FA_UPDATE_GOLDEN=1"
    assert text == path.read_bytes().decode("utf-8")


def test_demo_card_markdown_figures_by_hand():
    """The demo card's figures in its Markdown, each rounded independently from the card JSON
    (and the counts behind them: 8 of 16 gold-supported claims judged SUPPORTED, 8 of 8 others
    not, so J = 0.5 + 1 − 1 and agreement 15/24 = 0.625 → 63%, halves up)."""
    card = _demo_card()
    assert card["sensitivity"]["value"] == 8 / 16
    assert card["specificity"]["value"] == 8 / 8
    assert card["youden_j"] == pytest.approx(8 / 16 + 8 / 8 - 1)
    # agreement is over the three verdicts: 8 + 8 binary hits, one of them a CONTRADICTED /
    # NOT_IN_PILE mix-up, so 15 of 24
    assert card["agreement"] == pytest.approx(15 / 24)
    lines = audit_card_markdown(audit_card_readable(card=card, design=None)).split("\n")

    def ends(ci):
        return f"{_half_up(ci[0])}–{_half_up(ci[1])}%"

    sens, spec = card["sensitivity"], card["specificity"]
    expected_rows = {
        "Sensitivity": (f"{_half_up(sens['value'])}%", ends(sens["ci"])),
        "Specificity": (f"{_half_up(spec['value'])}%", ends(spec["ci"])),
        "Agreement with gold": ("63%", ends(card["agreement_ci"])),
        "Faithfulness, PPI++ (prediction-powered) — headline": (
            f"{_half_up(card['ppi_faithfulness']['value'])}%",
            ends(card["ppi_faithfulness"]["ci"]),
        ),
        "Youden's J": ("0.50", DASH),
        "Canary pass rate": (DASH, DASH),
    }
    for label, (figure, interval) in expected_rows.items():
        (line,) = [x for x in lines if x.startswith(f"| {label} |")]
        assert line.split(" | ")[1:3] == [figure, interval], label
    assert (
        *expected_rows["Sensitivity"],
        *expected_rows["Specificity"],
    ) == ("50%", "23–77%", "100%", "39–100%")
    assert "- **Answers of**: assistant@2024-06" in lines
    assert "- **Computed**: <computed_at>" in lines
    # the demo's limits: agreement 63% < 80%, wide (±20 points), no canaries, the caveat
    at = lines.index("## Limits")
    assert lines[at + 2 : at + 7] == [
        "- The judge agrees with analysts on 63% of audited claims, below 80%: its own verdicts "
        "do not measure this project's definition; use the corrected estimates, not the naive "
        "one.",
        "- The headline interval is wide (±20 points): 24 audited claims are few; more labels "
        "narrow it.",
        f"- {NO_CANARY}",
        f"- {CAVEAT}",
        "",
    ]
    assert round(50 * (0.8513817749675473 - 0.4442982194291075)) == 20
    assert not math.isnan(card["kappa"])


# --- metrics.services.audit_card_text: the readable card, every row, by hand ----------------
#
# The card of tests/metrics/test_dashboard_summary.py with 5 canaries, 4 of them passed. Each
# figure is the card's value rounded by hand to a whole percent, halves up (0.625 → 63%), or to
# two decimals (kappa 0.4375 → 0.44, ECE 0.39698 → 0.40, Platt 0.2391 → 0.24, isotonic
# 0.2669 → 0.27, the analysts' kappa 0.7985 → 0.80); intervals likewise (0.4231–0.8451 →
# 42–85%, 0.3934–1 → 39–100%, 0.3851–0.8160 → 39–82%).

FIGURES = [
    ("Faithfulness, gold only (audit sample)", "67%", "42–85%", "Wilson."),
    ("Faithfulness, Rogan–Gladen (debiased)", "59%", "0–100%", "RG."),
    ("Faithfulness, PPI++ (prediction-powered) — headline", "65%", "44–85%", "PPI++."),
    (
        "Faithfulness the judge alone would claim (naive)",
        "30%",
        DASH,
        "Share of the judge's verdicts that are SUPPORTED, with none of its errors corrected.",
    ),
    ("Sensitivity", "50%", "23–77%", "On 16 audited claims. Wilson."),
    ("Specificity", "100%", "39–100%", "On 8 audited claims. Wilson."),
    (
        "Agreement with gold",
        "63%",
        "39–82%",
        "Share of audited claims where the judge's verdict equals gold; clustered by answer.",
    ),
    (
        "Cohen's kappa (judge–gold)",
        "0.44",
        DASH,
        "Agreement beyond chance; the analysts' own kappa, 0.80, is its ceiling.",
    ),
    ("Youden's J", "0.50", DASH, "Sensitivity + specificity − 1."),
    (
        "Expected calibration error",
        "0.40",
        DASH,
        "Raw confidence; after Platt scaling 0.24, isotonic 0.27; out of fold.",
    ),
    (
        "Confidence cut for a false-claim rate ≤ 10%",
        "none meets the target",
        DASH,
        "Conformal risk control: 0 of 9 held-out claims kept, realized false-claim rate 0%.",
    ),
    (
        "Canary pass rate",
        "80%",
        DASH,
        "Planted claims the pile cannot support that came back NOT_IN_PILE, of 5.",
    ),
]


def _readable():
    return audit_card_readable(card=_card(canary_pass_rate=0.8, canaries=5), design=None)


def test_readable_card_every_figure_row_rounded_by_hand():
    """audit_card_text `_row` `_1` (default method "XXXX"), `_figures` `_64` (specificity key
    renamed: its row a dash), `_251` (the canary figure dropped: the row's columns shift), and
    every other row's label, figure, interval and sentence."""
    rows = _readable()["figures"]
    assert [(r["label"], r["figure"], r["interval"], r["method"]) for r in rows] == FIGURES
    assert [r.get("headline", False) for r in rows] == [False, False, True] + [False] * 9


def test_readable_card_identity_sample_and_limits_in_words():
    readable = _readable()
    assert readable["identity"] == [
        ("Judge", "baseline"),
        ("Backend", "baseline"),
        ("Model", "lexical-baseline"),
        ("Prompt version", "287adda8bc44"),
        ("Project", "demo"),
        ("Computed", "2026-12-01 15:00 UTC"),
    ]
    assert readable["sample"] == [
        "24 audited claims (gold verdicts: 24 unanimous among analysts, 0 adjudicated by a "
        "lead) out of 27 claims the judge judged.",
        "Design: not recorded in this report (computed before designs were kept).",
    ]
    assert readable["headline_reason"] == "PPI++ is the narrowest."
    assert readable["method"] == "Audit of baseline."
    limits = readable["limits"]
    assert len(limits) == 4  # agreement below 80%, wide, 2 unparseable, the CRC caveat
    assert limits[0].startswith(
        "The judge agrees with analysts on 63% of audited claims, below 80%"
    )
    # (0.8514 − 0.4443)/2 = 0.2036: ±20 points
    assert limits[1] == (
        "The headline interval is wide (±20 points): 24 audited claims are few; more labels "
        "narrow it."
    )
    assert limits[2] == "2 judge responses could not be read and are not counted as verdicts."


def test_card_markdown_is_the_readable_card_section_by_section():
    """The Markdown a lead pastes: title, identity bullets, the sample, the figures table (one
    line per row above, in order), the reason, the limits, the method."""
    text = audit_card_markdown(_readable())
    lines = text.splitlines()
    assert lines[:8] == [
        "# Audit card: baseline",
        "",
        "- **Judge**: baseline",
        "- **Backend**: baseline",
        "- **Model**: lexical-baseline",
        "- **Prompt version**: 287adda8bc44",
        "- **Project**: demo",
        "- **Computed**: 2026-12-01 15:00 UTC",
    ]
    at = lines.index("## Audit sample")
    assert lines[at + 1 : at + 5] == [
        "",
        "- 24 audited claims (gold verdicts: 24 unanimous among analysts, 0 adjudicated by a "
        "lead) out of 27 claims the judge judged.",
        "- Design: not recorded in this report (computed before designs were kept).",
        "",
    ]
    at = lines.index("## Figures")
    table = lines[at + 2 : at + 4 + len(FIGURES)]
    assert table[:2] == ["| Figure | Value | 95% interval | How |", "|---|---|---|---|"]
    assert table[2:] == [f"| {a} | {b} | {c} | {d} |" for a, b, c, d in FIGURES]
    assert "**Why the headline:** PPI++ is the narrowest." in lines
    at = lines.index("## Limits")
    assert lines[at + 2].startswith("- The judge agrees with analysts on 63%")
    assert lines[-3:] == ["## Method", "", "Audit of baseline."]


def test_audit_card_identity_of_pooled_systems_and_an_instrument_by_index():
    from metrics.services.audit_card import _identity, _jaudit_fields

    block = {"name": "j", "backend": "b", "model": None, "prompt_version": "p"}
    report = {
        "computed_at": "t",
        "project": {"slug": "s"},
        "system_scope": "all",
        "systems": [{"name": "rag", "version": "1"}, {"name": "bm25", "version": ""}],
    }
    assert _identity(report, block) == {
        "judge": "j",
        "backend": "b",
        "model": None,
        "prompt_version": "p",
        "date": "t",
        "project": "s",
        "system": "all systems, pooled (rag@1, bm25)",
    }
    assert "system" not in _identity({**report, "system_scope": "one"}, block)
    one = {**report, "system": {"name": "rag", "version": None}}
    assert _identity(one, block)["system"] == "rag"
    # a block from before the correction by category and CRC splits: every field None
    assert _jaudit_fields({}) == {
        "error_rate_correction": None,
        "error_rates_equality_p": None,
        "crc_splits": {
            "splits": None,
            "lambda_hat_full": None,
            "realized_mean": None,
            "realized_sd": None,
            "share_over_alpha": None,
            "retained_share_mean": None,
            "confidence_auc": None,
            "confidence_auc_ci": None,
        },
        "not_computed": None,
    }


def test_audit_card_rows_flatten_intervals_lists_and_cells():
    from metrics.services.audit_card import audit_card_rows

    card = {
        "a": 0.1,
        "b": None,
        "c": {"ci": [0.25, None], "x_ci": [1, 2], "list": ["u", None, 3], "ci3": [1, 2]},
        "d": [0.5, 0.75],
        "e": True,
    }
    assert audit_card_rows(card) == [
        ("a", "0.1", "", ""),
        ("b", "", "", ""),
        ("c.ci", "", "0.25", ""),
        ("c.x_ci", "", 1, 2),
        ("c.list", "u –  – 3", "", ""),
        ("c.ci3", "1 – 2", "", ""),
        ("d", "0.5 – 0.75", "", ""),
        ("e", True, "", ""),
    ]


def _exported_card(fmt: str) -> str:
    out = io.StringIO()
    call_command(
        "export_audit", "--project", "planted", "--judge", "lenient", "--format", fmt, stdout=out
    )
    return out.getvalue()


@pytest.mark.django_db
def test_audit_card_csv_gives_intervals_as_two_numeric_columns_at_full_precision():
    build_planted_project()
    card = json.loads(_exported_card("json"))
    rows = list(csv.reader(io.StringIO(_exported_card("csv"))))
    assert rows[0] == ["field", "value", "low", "high"]
    by_field = {row[0]: row[1:] for row in rows[1:]}
    assert all(len(row) == 4 for row in rows), [row for row in rows if len(row) != 4]
    value, low, high = by_field["sensitivity.ci"]
    assert value == ""
    # Full precision, as the JSON card: each number reads back to the very same float.
    assert float(low) == card["sensitivity"]["ci"][0]
    assert float(high) == card["sensitivity"]["ci"][1]
    assert [float(cell) for cell in by_field["headline_ci"][1:]] == card["headline_ci"]
    assert len(repr(card["kappa"]).split(".")[1]) > 4  # a figure rounding would change
    assert float(by_field["kappa"][0]) == card["kappa"]
    # The date row has its four columns too (two runs of the command: two clocks).
    assert by_field["date"][0][:10] == card["date"][:10]
    assert by_field["date"][1:] == ["", ""]
    assert by_field["audit_sample_size"] == ["40", "", ""]


def test_a_judge_versions_history_reads_on_the_card_and_its_markdown():
    """A tuned version (issue 28): the card names the version audited, each version of its
    lineage with its examples' source claims, and that only held-out gold audits it; a judge
    with no history adds nothing (the cases above)."""
    card = _bare_card() | {
        "judge_history": {
            "version": "j-v2 (prompt p2, version 2: j-v2 ← j, 2 few-shot examples)",
            "lineage": [
                {
                    "name": "j-v2",
                    "prompt_version": "p2",
                    "model": "m",
                    "few_shot": 2,
                    "few_shot_claim_ids": [12, 15],
                },
                {
                    "name": "j",
                    "prompt_version": "p1",
                    "model": "m",
                    "few_shot": 0,
                    "few_shot_claim_ids": [],
                },
            ],
            "heldout_only": True,
            "gold_split": {"seed": 7, "heldout_share": 0.5, "rule": "answer-hash"},
        }
    }
    readable = audit_card_readable(card=card, design=None)
    history = [
        "Audited version: j-v2 (prompt p2, version 2: j-v2 ← j, 2 few-shot examples).",
        "j-v2: prompt p2, model m, 2 few-shot examples from claims #12, #15.",
        "j: prompt p1, model m, 0 few-shot examples.",
        "Audited on held-out gold only: the gold is split by answer (seed 7, 50% held out) and "
        "the examples came from the development share.",
    ]
    assert readable["history"] == history
    markdown = audit_card_markdown(readable)
    assert "\n## Judge history\n\n" + "".join(f"- {line}\n" for line in history) in markdown
    assert markdown.index("## Judge history") < markdown.index("## Method")
