"""The dashboard's answer first (metrics/services/summary.py) and the readable audit card
(metrics/services/audit_card_text.py), on hand-built report blocks: every expected sentence
is worked out by hand from the figures given."""

import pytest

from metrics.glossary import GLOSSARY
from metrics.services.audit_card_text import audit_card_markdown, audit_card_readable
from metrics.services.summary import dashboard_summary


def _report(**extra):
    return {
        "claims": {"total": 25},
        "faithfulness": {"pooled": {"value": 16 / 25, "ci": [0.4496, 0.8046]}},
        **extra,
    }


def _audit(agreement, **extra):
    return {
        "name": "baseline",
        "n_audited": 25,
        "agreement": agreement,
        "headline_estimate": "ppi_faithfulness",
        "ppi_faithfulness": {"value": 0.6449, "ci": [0.4451, 0.8049]},
        **extra,
    }


def test_summary_gold_only_reads_the_pooled_figure_rounded_to_whole_percents():
    summary = dashboard_summary(report=_report(), audit=None)
    # 16/25 = 64%; 0.4496 -> 45, 0.8046 -> 80.
    assert summary["faithfulness"]["text"] == (
        "About 64% of claims are supported (95% interval 45–80%, from 25 gold claims)."
    )
    assert summary["judge"] is None
    assert summary["next"] is None


def test_summary_with_a_judge_reads_its_headline_and_says_it_is_not_trustworthy_below_80():
    summary = dashboard_summary(report=_report(), audit=_audit(15 / 25))
    assert summary["faithfulness"]["text"] == (
        "About 64% of claims are supported (95% interval 45–80%, from 25 audited claims)."
    )
    assert summary["judge"]["text"] == (
        "The baseline judge is not trustworthy here: it agrees with analysts on 60% of claims "
        "(needs ≥ 80%)."
    )
    assert summary["judge"]["trustworthy"] is False


@pytest.mark.parametrize(("agreement", "trustworthy"), [(0.80, True), (0.7999, False)])
def test_summary_the_80_percent_bar_is_inclusive(agreement, trustworthy):
    assert (
        dashboard_summary(report=_report(), audit=_audit(agreement))["judge"]["trustworthy"]
        is trustworthy
    )


def test_summary_a_judge_with_no_audited_claim_cannot_be_checked():
    judge = dashboard_summary(report=_report(), audit=_audit(None, n_audited=0))["judge"]
    assert judge["trustworthy"] is None
    assert "cannot be checked yet" in judge["text"]


def test_summary_no_gold_says_nothing_rather_than_a_zero():
    report = {"claims": {"total": 0}, "faithfulness": {"pooled": {"value": None, "ci": None}}}
    assert dashboard_summary(report=report, audit=None)["faithfulness"] is None


def test_summary_next_step_from_the_active_audit_forecast():
    forecast = {
        "uniform": {
            "labels_total": 65,
            "labels_more": 40,
            "half_width_now": 0.18,
            "target_half_width": 0.10,
        }
    }
    report = _report(active_audit={"forecast": forecast, "reached": False})
    step = dashboard_summary(report=report, audit=None)["next"]
    assert step["text"] == "Label about 40 more claims to reach ±10 points."
    report["active_audit"]["reached"] = True
    assert dashboard_summary(report=report, audit=None)["next"]["labels_more"] == 0


def test_summary_next_step_follows_the_audits_design_when_it_has_a_forecast():
    forecast = {
        "uniform": {"labels_more": 101, "target_half_width": 0.10},
        "active": {"labels_more": 62, "target_half_width": 0.10},
    }
    report = _report(active_audit={"design": "active", "forecast": forecast, "reached": False})
    assert dashboard_summary(report=report, audit=None)["next"]["labels_more"] == 62
    report["active_audit"]["design"] = "stratified"  # no forecast of its own: uniform's
    assert dashboard_summary(report=report, audit=None)["next"]["labels_more"] == 101


def test_summary_next_step_hidden_without_a_forecast():
    assert dashboard_summary(report=_report(active_audit={}), audit=None)["next"] is None


def test_glossary_every_entry_is_one_short_plain_sentence():
    assert len(GLOSSARY) >= 25
    for key, (name, text) in GLOSSARY.items():
        assert key.isidentifier(), key
        assert name, key
        assert text.endswith("."), key
        assert len(text) <= 160, key
        plain = text.replace("NOT_IN_PILE", "")  # verdict names are the vocabulary
        assert "metrics." not in plain, key  # no internal names
        assert "_" not in plain, key


def _card(**extra):
    block = {"value": 0.5, "ci": [0.2329, 0.7671], "n": 16, "interval_method": "Wilson."}
    return {
        "judge": "baseline",
        "backend": "baseline",
        "model": "lexical-baseline",
        "prompt_version": "287adda8bc44",
        "date": "2026-12-01T15:00:00+00:00",
        "project": "demo",
        "audit_sample_size": 24,
        "judged_claims": 27,
        "gold_source": {"unanimous": 24, "adjudicated": 0},
        "sensitivity": block,
        "specificity": {**block, "value": 1.0, "ci": [0.3934, 1.0], "n": 8},
        "youden_j": 0.5,
        "agreement": 0.625,
        "agreement_ci": [0.3851, 0.8160],
        "kappa": 0.4375,
        "human_kappa_ceiling": 0.7985,
        "naive_faithfulness": 0.2963,
        "gold_only_faithfulness": {"value": 0.6667, "ci": [0.4231, 0.8451], "method": "Wilson"},
        "debiased_faithfulness": {"value": 0.5926, "ci": [0.0, 1.0], "method": "RG"},
        "ppi_faithfulness": {"value": 0.6478, "ci": [0.4443, 0.8514], "method": "PPI++"},
        "headline_estimate": "ppi_faithfulness",
        "headline_ci": [0.4443, 0.8514],
        "headline_reason": "PPI++ is the narrowest.",
        "ece": {"raw": 0.39698, "platt": 0.2391, "isotonic": 0.2669},
        "crc": {
            "alpha": 0.1,
            "lambda_hat": None,
            "retained": 0,
            "test_claims": 9,
            "realized_false_claim_rate": 0.0,
        },
        "canary_pass_rate": None,
        "canaries": 0,
        "unparseable": 2,
        "stale_verdicts_left_out": 0,
        "instruments_left_out_all_stale": [],
        "not_computed": None,
        "method": "Audit of baseline.",
        **extra,
    }


def test_readable_card_rounds_each_figure_with_its_interval():
    readable = audit_card_readable(card=_card(), design=None)
    rows = {row["label"]: row for row in readable["figures"]}
    ppi = rows["Faithfulness, PPI++ (prediction-powered) — headline"]
    assert (ppi["figure"], ppi["interval"], ppi["method"]) == ("65%", "44–85%", "PPI++.")
    assert ppi["headline"] is True
    assert rows["Sensitivity"]["interval"] == "23–77%"
    assert rows["Agreement with gold"]["figure"] == "63%"  # 62.5: halves up, as a reader does
    assert rows["Cohen's kappa (judge–gold)"]["figure"] == "0.44"
    assert rows["Expected calibration error"]["figure"] == "0.40"
    assert rows["Confidence cut for a false-claim rate ≤ 10%"]["figure"] == "none meets the target"
    assert dict(readable["identity"])["Prompt version"] == "287adda8bc44"
    assert dict(readable["identity"])["Computed"] == "2026-12-01 15:00 UTC"


def test_readable_card_joins_an_estimates_method_and_interval_sentences():
    card = _card()
    card["gold_only_faithfulness"]["interval_method"] = "Wilson at the effective size."
    rows = audit_card_readable(card=card, design=None)["figures"]
    assert rows[0]["method"] == "Wilson. Wilson at the effective size."


def test_readable_card_says_its_limits_in_words():
    limits = " ".join(audit_card_readable(card=_card(), design=None)["limits"])
    assert "agrees with analysts on 63% of audited claims, below 80%" in limits
    assert "wide (±20 points)" in limits  # (0.8514 - 0.4443) / 2 = 0.2035
    assert "No canaries were planted" in limits
    assert "2 judge responses could not be read" in limits
    assert "exchangeable" in limits  # the conformal caveat
    trusted = _card(agreement=0.9, headline_ci=[0.60, 0.70], canaries=5, unparseable=0)
    limits = " ".join(audit_card_readable(card=trusted, design=None)["limits"])
    assert "below 80%" not in limits
    assert "wide" not in limits
    assert "canaries" not in limits


def test_readable_card_names_the_design():
    design = {
        "strata": [{"name": "high"}, {"name": "low"}],
        "answers_audited": 8,
        "claims_per_audited_answer": 3.0,
        "method": "Stratified.",
        "unseen_share": 0.25,
    }
    readable = audit_card_readable(card=_card(), design=design)
    assert readable["sample"][1] == (
        "Design: 2 strata (high, low), 8 audited answers, 3.0 gold claims per audited answer. "
        "Stratified."
    )
    assert any("25% of the project's claims" in line for line in readable["limits"])


def test_card_markdown_is_a_table_a_reader_can_paste():
    text = audit_card_markdown(audit_card_readable(card=_card(judge="a|b"), design=None))
    assert text.startswith("# Audit card: a|b\n")
    assert "| Figure | Value | 95% interval | How |" in text
    assert "| Faithfulness, PPI++ (prediction-powered) — headline | 65% | 44–85% | PPI++. |" in text
    assert "- **Judge**: a\\|b" in text  # a pipe in a name does not break the table
    assert "## Limits" in text


@pytest.mark.parametrize(
    ("share", "shown"),
    [(0.625, 63), (0.285, 29), (0.6449, 64), (0.0049, 0), (0.995, 100), (1.0, 100), (0.0, 0)],
)
def test_whole_percent_rounds_halves_up_on_the_decimal_a_reader_sees(share, shown):
    from metrics.services.summary import whole_percent

    assert whole_percent(share) == shown


def test_dashboard_summary_faithfulness_carries_its_figures():
    """summary `_faithfulness` `_89` (the "value" key renamed: the dashboard's figure lost). By
    hand: 16/25 → 64, the interval 0.4496–0.8046 → 45–80, from 25 gold claims."""
    from metrics.services.summary import dashboard_summary

    faith = dashboard_summary(report=_report(), audit=None)["faithfulness"]
    assert {k: faith[k] for k in ("value", "low", "high", "n", "source")} == {
        "value": 64,
        "low": 45,
        "high": 80,
        "n": 25,
        "source": "gold",
    }


# --- the dashboard summary, the gate's judge, the eager snapshot, selective routing ------------


def test_dashboard_summary_gives_no_figure_from_zero_claims():
    """summary `_faithfulness` `_46` (`… is None and not n` for `or not n`: a figure "from 0
    gold claims" when a stored report has a pooled value but no claim count)."""
    from metrics.services.summary import dashboard_summary

    report = {"claims": {"total": 0}, "faithfulness": {"pooled": {"value": 0.5, "ci": [0.1, 0.9]}}}
    assert dashboard_summary(report=report, audit=None)["faithfulness"] is None
    audit = {"headline_estimate": "ppi", "ppi": {"value": 0.5, "ci": [0.1, 0.9]}}  # no n_audited
    assert dashboard_summary(report=report, audit=audit)["faithfulness"] is None


# --- summary: a figure without an interval says so -------------------------------------------------


def test_dashboard_summary_of_a_figure_without_an_interval_says_no_interval():
    """summary `_faithfulness` `_81` (`text -=`: a pooled figure without an interval made the
    summary fail). By hand: 2/3 → 67%, from 3 gold claims."""
    from metrics.services.summary import dashboard_summary

    report = {"claims": {"total": 3}, "faithfulness": {"pooled": {"value": 2 / 3, "ci": None}}}
    faith = dashboard_summary(report=report, audit=None)["faithfulness"]
    assert faith["text"] == "About 67% of claims are supported (from 3 gold claims; no interval)."
    assert (faith["low"], faith["high"]) == (None, None)


# --- the dashboard summary: every branch, whole dicts ----------------------------------------


GOLD_25 = {
    "value": 64,
    "low": 45,
    "high": 80,
    "n": 25,
    "source": "gold",
    "text": "About 64% of claims are supported (95% interval 45–80%, from 25 gold claims).",
}


@pytest.mark.parametrize(
    ("report", "audit", "expected"),
    [
        (_report(), None, GOLD_25),
        # a headline whose estimate has no value: the gold figure instead
        (
            _report(),
            {"headline_estimate": "ppi", "ppi": {"value": None}, "n_audited": 9},
            GOLD_25,
        ),
        # a headline named but absent from the block: the gold figure
        (_report(), {"headline_estimate": "ppi", "n_audited": 9}, GOLD_25),
        # no headline chosen: the gold figure even though an estimate is there
        (_report(), {"headline_estimate": None, "ppi": {"value": 0.1}, "n_audited": 9}, GOLD_25),
        (
            _report(),
            {
                "headline_estimate": "ppi",
                "ppi": {"value": 0.125, "ci": [0.005, 0.995]},
                "n_audited": 1,
            },
            {
                "value": 13,
                "low": 1,
                "high": 100,
                "n": 1,
                "source": "audited",
                "text": "About 13% of claims are supported (95% interval 1–100%, from 1 audited "
                "claim).",
            },
        ),
        (
            {"claims": {"total": 2}, "faithfulness": {"pooled": {"value": 0.5, "ci": None}}},
            None,
            {
                "value": 50,
                "low": None,
                "high": None,
                "n": 2,
                "source": "gold",
                "text": "About 50% of claims are supported (from 2 gold claims; no interval).",
            },
        ),
        (
            {"claims": {"total": 1}, "faithfulness": {"pooled": {"value": 1.0, "ci": [0.2, None]}}},
            None,
            {
                "value": 100,
                "low": None,
                "high": None,
                "n": 1,
                "source": "gold",
                "text": "About 100% of claims are supported (from 1 gold claim; no interval).",
            },
        ),
        ({}, None, None),
        ({"faithfulness": None, "claims": None}, None, None),
        ({"faithfulness": {"pooled": {"value": 0.5}}, "claims": {}}, None, None),
        ({"faithfulness": {"pooled": {"value": 0.5}}, "claims": {"total": None}}, None, None),
        ({"faithfulness": {"pooled": None}, "claims": {"total": 3}}, None, None),
        ({"faithfulness": {"pooled": {"value": None}}, "claims": {"total": 3}}, None, None),
    ],
)
def test_summary_faithfulness_every_branch_whole(report, audit, expected):
    assert dashboard_summary(report=report, audit=audit)["faithfulness"] == expected


@pytest.mark.parametrize(
    ("audit", "expected"),
    [
        (None, None),
        ({}, None),
        (
            {"name": "lex", "n_audited": 0, "agreement": 0.9},
            {
                "trustworthy": None,
                "agreement": None,
                "needs": 80,
                "text": "The lex judge cannot be checked yet: none of its verdicts has a gold "
                "verdict to compare with.",
            },
        ),
        (
            {"name": "lex", "n_audited": 4, "agreement": None},
            {
                "trustworthy": None,
                "agreement": None,
                "needs": 80,
                "text": "The lex judge cannot be checked yet: none of its verdicts has a gold "
                "verdict to compare with.",
            },
        ),
        (
            {"name": "lex", "n_audited": 4, "agreement": 0.8},
            {
                "trustworthy": True,
                "agreement": 80,
                "needs": 80,
                "text": "The lex judge is trustworthy here: it agrees with analysts on 80% of "
                "claims (needs ≥ 80%).",
            },
        ),
        (
            {"name": "lex", "n_audited": 4, "agreement": 0.795},
            {
                "trustworthy": False,
                "agreement": 80,  # 79.5 shown as 80 (halves up), still below the bar
                "needs": 80,
                "text": "The lex judge is not trustworthy here: it agrees with analysts on 80% "
                "of claims (needs ≥ 80%).",
            },
        ),
        (
            {"name": "", "n_audited": 4, "agreement": 1.0},
            {
                "trustworthy": True,
                "agreement": 100,
                "needs": 80,
                "text": "The the judge judge is trustworthy here: it agrees with analysts on 100% "
                "of claims (needs ≥ 80%).",
            },
        ),
    ],
)
def test_summary_judge_every_branch_whole(audit, expected):
    assert dashboard_summary(report=_report(), audit=audit)["judge"] == expected


@pytest.mark.parametrize(
    ("active", "expected"),
    [
        (None, None),
        ({"forecast": None}, None),
        ({"forecast": {"uniform": {"labels_more": 3}}}, None),  # no target
        ({"forecast": {"uniform": {"target_half_width": 0.05}}}, None),  # no count, not reached
        (
            {"forecast": {"uniform": {"target_half_width": 0.05, "labels_more": 1}}},
            {"labels_more": 1, "target": 5, "text": "Label about 1 more claim to reach ±5 points."},
        ),
        (
            {"forecast": {"uniform": {"target_half_width": 0.1, "labels_more": 0}}},
            {
                "labels_more": 0,
                "target": 10,
                "text": "Label about 0 more claims to reach ±10 points.",
            },
        ),
        (
            {"reached": True, "forecast": {"uniform": {"target_half_width": 0.049}}},
            {
                "labels_more": 0,
                "target": 5,
                "text": "The audit has reached ±5 points: more labels would narrow the interval "
                "further, but it is not needed.",
            },
        ),
        # the design's own forecast first, uniform's where the design has none
        (
            {
                "design": "active",
                "forecast": {
                    "active": {"target_half_width": 0.1, "labels_more": 7},
                    "uniform": {"target_half_width": 0.2, "labels_more": 99},
                },
            },
            {
                "labels_more": 7,
                "target": 10,
                "text": "Label about 7 more claims to reach ±10 points.",
            },
        ),
        (
            {
                "design": "active",
                "forecast": {
                    "active": {},
                    "uniform": {"target_half_width": 0.2, "labels_more": 99},
                },
            },
            {
                "labels_more": 99,
                "target": 20,
                "text": "Label about 99 more claims to reach ±20 points.",
            },
        ),
        (
            {
                "design": "stratified",
                "forecast": {"uniform": {"target_half_width": 0.03, "labels_more": 2}},
            },
            {
                "labels_more": 2,
                "target": 3,
                "text": "Label about 2 more claims to reach ±3 points.",
            },
        ),
        ({"design": "active", "forecast": {"active": None, "uniform": None}}, None),
    ],
)
def test_summary_next_step_every_branch_whole(active, expected):
    report = _report() if active is None else _report(active_audit=active)
    assert dashboard_summary(report=report, audit=None)["next"] == expected


def test_summary_whole_dict_with_everything():
    audit = {
        "name": "lex",
        "n_audited": 24,
        "agreement": 0.625,
        "headline_estimate": "ppi_faithfulness",
        "ppi_faithfulness": {"value": 0.6478, "ci": [0.4443, 0.8514]},
    }
    report = _report(
        active_audit={"forecast": {"uniform": {"target_half_width": 0.1, "labels_more": 40}}}
    )
    assert dashboard_summary(report=report, audit=audit) == {
        "faithfulness": {
            "value": 65,
            "low": 44,
            "high": 85,
            "n": 24,
            "source": "audited",
            "text": "About 65% of claims are supported (95% interval 44–85%, from 24 audited "
            "claims).",
        },
        "judge": {
            "trustworthy": False,
            "agreement": 63,
            "needs": 80,
            "text": "The lex judge is not trustworthy here: it agrees with analysts on 63% of "
            "claims (needs ≥ 80%).",
        },
        "next": {
            "labels_more": 40,
            "target": 10,
            "text": "Label about 40 more claims to reach ±10 points.",
        },
    }


def _picture_context(headline):
    estimates = [
        {"key": "gold_only", "label": "Gold only", "estimate": {"value": 0.64, "ci": [0.45, 0.80]}},
        {
            "key": "ppi",
            "label": "PPI++ (judge + gold)",
            "estimate": {"value": 0.61, "ci": [0.5, 0.7]},
        },
        {"key": "rogan_gladen", "label": "Rogan–Gladen", "estimate": {"value": None}},
    ]
    return {"audit": {"headline_estimate": headline}, "estimates": estimates}


@pytest.mark.parametrize("headline", ["rogan_gladen", None])
def test_the_picture_marks_no_headline_when_the_headline_estimate_is_not_drawn(headline):
    """The headline estimate not computed (Rogan–Gladen without a value) or not named: no row
    is marked or drawn green as the headline, and the first row is not taken for it."""
    from metrics.views.dashboard import _estimates_picture

    picture = _estimates_picture(_picture_context(headline))
    assert [row["label"] for row in picture["rows"]] == ["Gold only", "PPI++ (judge + gold)"]
    assert not any(row["headline"] for row in picture["rows"])
    assert picture["headline"] is False
    assert "#1f7a3a" not in picture["svg"]  # the headline's green
    assert picture["svg"].count('fill="#1f5f99"') == 2


def test_the_picture_draws_the_headline_first_and_green():
    from metrics.views.dashboard import _estimates_picture

    picture = _estimates_picture(_picture_context("ppi"))
    assert [row["headline"] for row in picture["rows"]] == [True, False]
    assert picture["rows"][0]["label"] == "PPI++ (judge + gold)"
    assert picture["svg"].count('fill="#1f7a3a"') == 1
    assert picture["svg"].index("#1f7a3a") < picture["svg"].index("#1f5f99")
