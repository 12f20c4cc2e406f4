"""Tests written in the seventh session (2026-12-01) to kill the survivors of its mutation run
(tests/MUTATION.md). Each expected figure or sentence is derived by hand from the inputs given,
never by calling the product function under test for the expected side; each test names the
mutants it was written against."""

import pytest

from annotate.models import Gold
from metrics.services import report_compute
from metrics.services.audit_card_text import audit_card_markdown, audit_card_readable
from tests.factories import AnswerFactory, ClaimFactory, ProjectFactory
from tests.metrics.test_dashboard_summary import _card

S, C, N = "SUPPORTED", "CONTRADICTED", "NOT_IN_PILE"
DASH = "—"

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


# --- metrics.services.active_audit: an active design with gold drawn under another ----------


@pytest.mark.django_db
def test_active_design_whose_gold_was_all_drawn_uniformly_says_so_and_still_forecasts():
    """active_audit `_active_headline` `_84` (`method =` for `+=`: the "fewer than 2" sentence
    lost) and `_24` (a fill π of 2 for the claims without one when no label has a π: the
    forecast then refuses the π and the report fails).

    The project's queue is active, but its 3 gold claims were labelled before (no recorded π)
    and no claim has a π: nothing is drawn under the design, so the headline is not estimated
    and says the 3 gold claims are left out; the forecasts have no labels to go on."""
    project = ProjectFactory(queue_design="active")
    claims = [ClaimFactory(answer=AnswerFactory(project=project)) for _ in range(5)]
    for claim, verdict in zip(claims[:3], (S, S, C), strict=True):
        Gold.objects.create(claim=claim, verdict=verdict, source="unanimous")
    block = report_compute(project=project)["active_audit"]
    assert block["design"] == "active"
    assert block["labels_now"] == 0
    headline = block["headline"]
    assert headline["value"] is None  # nan in the report JSON is null
    assert headline["gold_left_out"] == 3
    assert headline["method"] == (
        "Fewer than 2 gold claims drawn under the active design: not estimated. 3 gold claims "
        "with no recorded inclusion probability (labelled under another design) left out of "
        "this estimate."
    )
    assert set(block["forecast"]) == {"uniform", "active"}
    assert block["forecast"]["active"]["labels_total"] is None


# --- metrics.stats.paired: two shared questions, the t quantile at 1 degree of freedom --------


def test_paired_gold_difference_of_two_questions_uses_t_with_one_degree_of_freedom():
    """paired `_finish` `_39` (t at max(df, 2) for max(df, 1): 4.30 for 12.71 when G = 2).

    50 units per system and question: A 25 and 25 supported, B 26 and 24. By hand: θ_A = θ_B =
    0.5, D = 0; z_Bq = (26 − 25)/100 = +0.01 and −0.01, z_Aq = 0; SE² = G/(G − 1)·Σ z² =
    2·0.0002, SE = 0.02; the interval 0 ± t_{0.975, 1}·0.02 (t from scipy), inside [−1, 1]."""
    import numpy as np
    from scipy.stats import t as student_t

    from metrics.stats.paired import paired_gold_difference

    values, system, question = [], [], []
    for s, q, k in ((0, "q1", 25), (0, "q2", 25), (1, "q1", 26), (1, "q2", 24)):
        values += [1.0] * k + [0.0] * (50 - k)
        system += [s] * 50
        question += [q] * 50
    est = paired_gold_difference(np.array(values), np.array(system), np.array(question))
    half = float(student_t.ppf(0.975, 1)) * 0.02  # 12.706 · 0.02 = 0.2541
    assert est.value == pytest.approx(0.0, abs=1e-15)
    assert est.std_error == pytest.approx(0.02, rel=1e-12)
    assert est.ci == (pytest.approx(-half, rel=1e-12), pytest.approx(half, rel=1e-12))
    assert est.n_questions == 2


# --- metrics.services.gate: a gold-only gate reports the report's own method sentence ---------


def test_gate_on_the_gold_figure_reports_the_reports_method_sentence():
    """gate `_figure` `_39` (`report.get("XXmethodXX")`: every gold-only gate said the default
    "gold claims, 95% Wilson interval" instead of the report's sentence, e.g. its clustering)."""
    from metrics.services.gate import gate_check

    report = {
        "faithfulness": {"pooled": {"value": 0.8, "ci": [0.7, 0.9]}},
        "method": {
            "faithfulness": "gold claims, clustered by answer, 95% Wilson interval at n_eff"
        },
    }
    result = gate_check(report, metric="faithfulness", minimum=0.75, on="lower")
    assert result["method"] == "gold claims, clustered by answer, 95% Wilson interval at n_eff"
    assert result["pass"] is False  # lower end 0.7 < 0.75
    no_method = gate_check({"faithfulness": report["faithfulness"]}, minimum=0.75, on="value")
    assert no_method["method"] == "gold claims, 95% Wilson interval"
    assert no_method["pass"] is True


# --- metrics.services.compare: the JSON names both systems --------------------------------------


@pytest.mark.django_db
def test_compare_names_both_systems_by_name_version_and_label():
    """compare `systems_compare` `_44` (the B system's "name" key renamed: the compare JSON of
    `manage.py compare --format json` and the API lose B's name)."""
    from metrics.services.compare import system_resolve, systems_compare
    from tests.compare.builders import answer_record, import_records

    project = ProjectFactory()
    import_records(
        project,
        [
            answer_record("q1", "rag@1", [(S, None)]),
            answer_record("q1", "rag@2", [(N, None)]),
            answer_record("q2", "rag@1", [(S, None)]),
            answer_record("q2", "rag@2", [(S, None)]),
        ],
    )
    a = system_resolve(project=project, ref="rag@1")
    b = system_resolve(project=project, ref="rag@2")
    result = systems_compare(project=project, a=a, b=b)
    assert {k: result["a"][k] for k in ("name", "version", "label")} == {
        "name": "rag",
        "version": "1",
        "label": "rag@1",
    }
    assert {k: result["b"][k] for k in ("name", "version", "label")} == {
        "name": "rag",
        "version": "2",
        "label": "rag@2",
    }
    assert set(result["a"]) == set(result["b"]) == {"name", "version", "label", "metadata"}
    # B 1 of 2 supported, A 2 of 2: B − A = −0.5 by hand
    assert result["rates"]["faithfulness"]["gold_only"]["value"] == pytest.approx(-0.5)
    # compare `systems_compare` `_115`, `_107`: the method sentence the page and the JSON carry
    # (main since adds the audit design's sentence after it, so the test reads up to there)
    assert result["method"].startswith(
        "Paired by question: only questions both systems answered count; every interval is "
        "clustered by question (a question's claims and answers, of both systems, are one "
        "cluster), 95%. Gold only: the claims (answers) with gold. PPI++: the judge's verdicts "
        "on every claim of both systems, rectified by its errors on the gold claims, power-tuned "
        "for the difference. Headline: the narrowest valid interval."
    )


@pytest.mark.django_db
def test_active_headline_with_a_gold_claim_drawn_under_another_design_keeps_its_method():
    """active_audit `_active_headline` `_84` (`method = _left_out_text(...)` for `+=` once 2 or
    more labels have a π: the estimate's own sentence lost, only the left-out one kept).

    Six one-claim answers, the queue active: four labelled under the design with π = 0.5 and
    gold S, S, C, S; a fifth with gold, labelled by the active queue but with no recorded π
    (left out); a sixth without gold. No judge: the Hájek mean of the four labels with equal
    weights, 3/4 by hand."""
    from annotate.models import Label
    from tests.factories import UserFactory

    project = ProjectFactory(queue_design="active")
    claims = [ClaimFactory(answer=AnswerFactory(project=project)) for _ in range(6)]
    analyst = UserFactory()
    for claim, verdict in zip(claims[:5], (S, S, C, S, C), strict=True):
        Gold.objects.create(claim=claim, verdict=verdict, source="unanimous")
    for claim, verdict in zip(claims[:4], (S, S, C, S), strict=True):
        Label.objects.create(
            claim=claim,
            annotator=analyst,
            verdict=verdict,
            design="active",
            inclusion_probability=0.5,
        )
    Label.objects.create(
        claim=claims[4], annotator=analyst, verdict=C, design="active", inclusion_probability=None
    )
    headline = report_compute(project=project)["active_audit"]["headline"]
    assert headline["value"] == pytest.approx(0.75, abs=1e-12)
    assert headline["gold_left_out"] == 1
    left_out = (
        " 1 gold claim with no recorded inclusion probability (labelled under another design) "
        "left out of this estimate."
    )
    assert headline["method"].endswith(left_out)
    estimate_sentence = headline["method"][: -len(left_out)]
    assert estimate_sentence.strip()  # the estimate's own sentence comes first
    assert "left out" not in estimate_sentence


# --- metrics.stats.conformal_splits: per-claim inputs given as columns ------------------------


def test_crc_splits_reads_column_vectors_as_one_value_per_claim():
    """conformal_splits `crc_splits` `_21` (`supported` not flattened: a column of 0/1, as a
    one-column table gives it, was used as a 2-D mask). Each input given as an (n, 1) column:
    the full-data cut and each split's held-out risk against the literal CRC definition
    (tests.metrics.independent)."""
    import numpy as np

    from metrics.stats.conformal_splits import crc_splits
    from tests.metrics import independent as ref

    rng = np.random.default_rng(11)
    k = rng.integers(1, 5, 30)
    answer = np.repeat(np.arange(30), k)
    supported = rng.random(answer.size) < 0.7
    conf = np.round(
        np.where(supported, rng.beta(5, 2, answer.size), rng.beta(2, 4, answer.size)), 2
    )
    out = crc_splits(
        conf[:, None],
        supported[:, None],
        answer[:, None],
        0.15,
        n_splits=5,
        seed=2,
        return_masks=True,
    )
    per = [(conf[answer == a], supported[answer == a]) for a in range(30)]
    assert out["lambda_hat_full"] == ref.crc_cut([c for c, _ in per], [s for _, s in per], 0.15)
    for split in range(5):
        cal = out["calibration"][split]
        lam = ref.crc_cut(
            [per[i][0] for i in np.flatnonzero(cal)], [per[i][1] for i in np.flatnonzero(cal)], 0.15
        )
        assert out["lambda_hat"][split] == lam
        test = [per[i] for i in np.flatnonzero(~cal)]
        assert out["realized"][split] == pytest.approx(
            np.mean([ref.crc_loss(c, s, lam) for c, s in test]), abs=1e-12
        )


# --- metrics.stats.conformal: a bad outcome is refused naming the argument ---------------------


@pytest.mark.parametrize("function", ["crc_threshold", "crc_evaluate", "frontier"])
def test_conformal_refuses_a_non_binary_outcome_naming_supported(function):
    """conformal `_Flat.__init__` `_56` (`as_binary(...)` without its name: the error said
    "values must hold only 0/1" and a caller could not tell which argument was wrong)."""
    from metrics.stats import conformal

    confidences, supported = [[0.9, 0.4], [0.7]], [[1, 2], [0]]
    call = {
        "crc_threshold": lambda: conformal.crc_threshold(confidences, supported, 0.1),
        "crc_evaluate": lambda: conformal.crc_evaluate(confidences, supported, 0.5),
        "frontier": lambda: conformal.frontier(confidences, supported),
    }[function]
    with pytest.raises(ValueError, match=r"^supported must hold only 0/1"):
        call()


# --- metrics.stats.calibration: Platt's line search gives up on a rounding plateau -------------


def test_platt_on_20000_separable_claims_fits_platts_two_targets():
    """calibration `_platt_fit` `_157` (`return` for `break` when the backtracking line search
    finds no decrease: None instead of the fit, and the calibrator fails). 20,000 claims whose
    confidence is exactly their 0/1 outcome (seed 0): near the optimum the objective's rounding
    stops the line search before Newton's decrement falls below the tolerance.

    With two distinct confidences the sigmoid meets Platt's regularised targets exactly (Platt
    1999, §2.2): σ(b) = 1/(N₋ + 2) at confidence 0 and σ(a + b) = (N₊ + 1)/(N₊ + 2) at 1, i.e.
    b = −log(N₋ + 1) and a + b = log(N₊ + 1)."""
    import numpy as np

    from metrics.stats.calibration import platt_calibrator

    c = np.random.default_rng(0).integers(0, 2, 20_000).astype(float)
    n1 = int(c.sum())
    n0 = c.size - n1
    calibrator = platt_calibrator(c, c)
    # stopped on the plateau, within 1e-4 of the optimum (here 1.6e-5 in b)
    assert calibrator.intercept == pytest.approx(-np.log(n0 + 1), abs=1e-4)
    assert calibrator.slope + calibrator.intercept == pytest.approx(np.log(n1 + 1), abs=1e-4)
    p0, p1 = calibrator(np.array([0.0, 1.0]))
    assert p0 == pytest.approx(1 / (n0 + 2), rel=1e-4)
    assert p1 == pytest.approx((n1 + 1) / (n1 + 2), rel=1e-8)


# --- metrics.services.compare: the pairwise block from stored verdicts, by hand ---------------


@pytest.mark.django_db
def test_compare_pairwise_block_from_both_orders_by_hand():
    """compare `_pairwise_block` `_51` (`setdefault(question)`: None, the block fails), `_77`
    (`incomplete_pairs` renamed) and `_164` (the method sentence changed); the whole block.

    Verdicts stored for six questions (position named, as the judge answers):
    q1 B-first "first", A-first "second": B's scores 1 and 1, p = 1, first-position share f = ½;
    q2 "first", "first": p = ½, f = 1; q3 "second", "first": p = 0, f = ½;
    q4 "tie", "second": p = (½ + 1)/2 = ¾, f = (½ + 0)/2 = ¼;
    q5 B-first only: incomplete; q6 B-first UNPARSEABLE, A-first "first": incomplete, 1 reply
    unparseable. Over the 4 complete pairs: P(B preferred) = mean p = 0.5625, the position bias
    mean f − ½ = 0.0625, each with the t interval of scipy over the pairs."""
    import numpy as np
    from scipy import stats as scipy_stats

    from judges.models import JudgeRun, PairwiseVerdict
    from metrics.services.compare import system_resolve, systems_compare
    from tests.compare.builders import answer_record, import_records
    from tests.factories import JudgeFactory, JudgeRunFactory

    project = ProjectFactory()
    import_records(
        project,
        [answer_record(f"q{i}", s, [(S, None)]) for i in range(1, 7) for s in ("rag@1", "rag@2")],
    )
    a = system_resolve(project=project, ref="rag@1")
    b = system_resolve(project=project, ref="rag@2")
    judge = JudgeFactory(project=project, name="pj")
    run = JudgeRunFactory(
        judge=judge,
        kind=JudgeRun.Kind.PAIRWISE,
        parameters={"system_a": a.pk, "system_b": b.pk},
    )
    stored = {
        "q1": ("first", "second"),
        "q2": ("first", "first"),
        "q3": ("second", "first"),
        "q4": ("tie", "second"),
        "q5": ("first", None),
        "q6": ("UNPARSEABLE", "first"),
    }
    for question, (b_first, a_first) in stored.items():
        for order, verdict in (("b_first", b_first), ("a_first", a_first)):
            if verdict is not None:
                PairwiseVerdict.objects.create(
                    run=run, judge=judge, question_id=question, system_a=a, system_b=b,
                    order=order, verdict=verdict,
                )  # fmt: skip
    pw = systems_compare(project=project, a=a, b=b)["pairwise"]

    def t_interval(x):
        x = np.asarray(x, float)
        half = scipy_stats.t.ppf(0.975, x.size - 1) * scipy_stats.sem(x)
        return x.mean() - half, x.mean() + half

    p = [1.0, 0.5, 0.0, 0.75]
    f_minus_half = [0.0, 0.5, 0.0, -0.25]
    assert (pw["judge"], pw["run_id"], pw["n_pairs"]) == ("pj", run.pk, 4)
    assert (pw["incomplete_pairs"], pw["unparseable"]) == (2, 1)
    assert pw["preference_b"]["value"] == pytest.approx(0.5625)
    assert list(pw["preference_b"]["ci"]) == pytest.approx(t_interval(p))
    assert pw["position_bias"]["value"] == pytest.approx(0.0625)
    assert list(pw["position_bias"]["ci"]) == pytest.approx(t_interval(f_minus_half))
    assert pw["first_position_share"]["value"] == pytest.approx(0.5625)
    lo_p, hi_p = t_interval(p)
    lo_f, hi_f = (c + 0.5 for c in t_interval(f_minus_half))
    assert pw["finding"] == (
        f"The judge pj prefers whichever answer comes first in 56% [{100 * lo_f:.0f}, "
        f"{100 * hi_f:.0f}] of pairs; averaged over both orders, rag@2 (B) is preferred to "
        f"rag@1 (A) in 56% [{100 * lo_p:.0f}, {100 * hi_p:.0f}] of 4 pairs (ties count half)."
    )
    assert pw["method"] == (
        "asked in both orders and averaged; position bias = share of first-position wins − 50%, "
        "over both orders of every pair; t intervals over pairs, 95%; 1 unparseable reply "
        "counted apart and a pair counts only when both its orders have a verdict; ties count "
        "half."
    )


# --- metrics.stats.prevalence: an interval with one infinite end has no width -----------------


def test_headline_estimate_gives_no_width_to_an_interval_with_an_infinite_end():
    """prevalence `headline_estimate` `_22` (`isfinite(lo) or isfinite(hi)`: a width of +inf
    for an interval (0.2, inf), where the function promises nan for a width it cannot give).
    By hand: gold-only (0.6, (0.5, 0.7)) is the only valid estimate, width 0.2; PPI++ with an
    infinite upper end is not computable; Rogan–Gladen without J is left out."""
    import math

    from metrics.stats.prevalence import headline_estimate

    out = headline_estimate((0.6, (0.5, 0.7)), (0.6, (0.4, 0.8)), (0.3, (0.2, math.inf)))
    assert out["choice"] == "gold_only"
    assert out["widths"]["gold_only"] == pytest.approx(0.2)
    assert out["widths"]["rogan_gladen"] == pytest.approx(0.4)
    assert math.isnan(out["widths"]["ppi"])
    out = headline_estimate((0.6, (0.5, 0.7)), None, (0.3, (-math.inf, 0.4)))
    assert math.isnan(out["widths"]["ppi"])
    assert math.isnan(out["widths"]["rogan_gladen"])  # not computed


# --- metrics.services.bits: the bits-vs-judge table, every cell by brute force ------------------


@pytest.mark.django_db
def test_bits_and_a_prompted_judge_every_disagreement_cell_counted_by_brute_force():
    """bits `with_judge_block` `_54` (`neither` counted as "bits say no, the judge says yes").
    The project of test_bits_audit.py with a prompted judge's verdicts drawn at random: for each
    gold verdict, the four cells (bits only, judge only, both, neither say SUPPORTED) counted
    claim by claim; they add up to the claims with that gold."""
    import numpy as np

    from metrics.services import report_compute
    from tests.factories import JudgeFactory, JudgeRunFactory, JudgeVerdictFactory
    from tests.metrics.factories_bits import build_bits_project

    built = build_bits_project(n_answers=10)
    other = JudgeFactory(project=built.project, name="prompted", backend="openai", model="m")
    run = JudgeRunFactory(judge=other, prompt_version="p1")
    rng = np.random.default_rng(5)
    judge_says = {}
    for claim in built.claims:
        verdict = "SUPPORTED" if rng.random() < 0.6 else "NOT_IN_PILE"
        JudgeVerdictFactory(run=run, claim=claim, verdict=verdict, confidence=None)
        judge_says[claim.pk] = verdict == "SUPPORTED"
    w = report_compute(project=built.project, judge=built.judge)["grounding_bits"]["with_judge"]
    for gold in ("SUPPORTED", "CONTRADICTED", "NOT_IN_PILE"):
        mine = [c for c in built.claims if c.gold.verdict == gold]
        cells = {
            "bits_only_supported": 0,
            "judge_only_supported": 0,
            "both_supported": 0,
            "neither": 0,
        }
        for c in mine:
            bits, judge = built.bits[c.pk] > 0, judge_says[c.pk]
            key = {
                (True, False): "bits_only_supported",
                (False, True): "judge_only_supported",
                (True, True): "both_supported",
                (False, False): "neither",
            }[(bits, judge)]
            cells[key] += 1
        assert w["disagreements"][gold] == {"claims": len(mine), **cells}, gold
    assert sum(w["disagreements"][g]["neither"] for g in w["disagreements"]) > 0  # reached


# --- metrics.stats.active: constant π, one claim per answer, with a judge: today's PPI++ -------


def test_active_ppi_mean_with_constant_pi_is_ppi_pp_with_a_normal_interval():
    """active `_uniform_today` `_107` (`df=inf` dropped: the estimate's degrees of freedom nan,
    where its method says "normal interval"). Constant π, every claim its own answer, a judge's
    prediction on all 60 claims, 40 labelled: the point and interval are ppi_py's PPI++ mean
    (tests.metrics.independent.ppi), the normal interval's df infinite."""
    import math

    import numpy as np

    from metrics import stats
    from tests.metrics import independent as ref

    rng = np.random.default_rng(3)
    y = (rng.random(60) < 0.7).astype(float)
    f = np.clip(np.where(y > 0, 0.8, 0.3) + rng.normal(0, 0.1, 60), 0, 1)
    labelled = np.r_[np.ones(40, bool), np.zeros(20, bool)]
    est = stats.active_ppi_mean(np.where(labelled, y, np.nan), labelled, f, np.full(60, 0.5))
    value, (lo, hi), _lam = ref.ppi(y[:40], f[:40], f[40:])
    assert est.value == pytest.approx(value, rel=1e-9)
    assert est.ci == (pytest.approx(lo, rel=1e-9), pytest.approx(hi, rel=1e-9))
    assert est.df == math.inf


# --- metrics.services.active_audit: the block's method keeps its headline with routed claims ----


@pytest.mark.django_db
def test_active_audit_method_with_routed_claims_is_the_headline_then_the_routing_sentence():
    """active_audit `_block_method` `_73` (`text =` for `+=`: with claims routed to the judge the
    block's method was the routing sentence alone, the headline's and the forecast's gone).
    The project of test_active_audit.py's routing test: uniform queue, 7 claims routed."""
    from annotate.models import Claim
    from tests.metrics.test_active_audit import build_confident_judge_project

    project, judge, rows = build_confident_judge_project()
    Claim.objects.filter(pk__in=[claim.pk for claim, *_ in rows[:7]]).update(routed_to_judge=True)
    project.selective_judging = True
    project.save()
    block = report_compute(project=project, judge=judge)["active_audit"]
    method = block["method"]
    assert method.startswith("Headline under uniform sampling: ")
    assert (
        " Forecast: labels needed for a 95% half-width of ±0.100 (default target, none set)"
        in method
    )
    assert method.endswith(" " + block["routing"]["text"])
    assert block["routing"]["routed_claims"] == 7


# --- metrics.services.judge_audit: failures worst first, the larger group first on a tie -------


@pytest.mark.django_db
def test_judge_failures_by_risk_category_worst_first_and_larger_first_on_a_tie():
    """judge_audit `_failures` `_33` (`+n` for `−n`: among categories with the same agreement the
    smaller came first). By hand: health 2 of 4 audited claims agree (0.5), legal 1 of 2 (0.5),
    financial 1 of 1 (1.0): health, legal, financial."""
    from judges.models import Judge
    from tests.compare.builders import answer_record, import_records

    project = ProjectFactory()
    import_records(
        project,
        [
            answer_record("q1", "rag", [(S, S), (N, N)], risk="health"),
            answer_record("q2", "rag", [(S, N), (C, S)], risk="health"),
            answer_record("q3", "rag", [(S, S), (S, N)], risk="legal"),
            answer_record("q4", "rag", [(S, S)], risk="financial"),
        ],
    )
    report = report_compute(project=project, judge=Judge.objects.get(name="j"))
    rows = report["judge"]["failures"]["by_risk_category"]
    assert [(r["group"], r["n"], r["agreement"]) for r in rows] == [
        ("health", 4, 0.5),
        ("legal", 2, 0.5),
        ("financial", 1, 1.0),
    ]


# --- metrics.stats.conformal: the held-out check with no answer or no cut keeps its keys -------


def test_crc_evaluate_without_answers_or_without_a_cut_has_every_key():
    """conformal `crc_evaluate` `_15` (the early return's "lambda" key renamed: with no held-out
    answer or a nan cut the result lacked the cut it was asked about). By hand: no answers, 0
    kept of 0; a nan cut on 2 answers (3 claims): the counts unknown (nan), the total 3."""
    import math

    from metrics.stats.conformal import crc_evaluate

    keys = {
        "lambda", "n_answers", "false_claim_rate", "claims_total", "claims_retained",
        "retained_share", "supported_retained", "faithfulness_retained", "answers_abstaining",
    }  # fmt: skip
    empty = crc_evaluate([], [], 0.5)
    assert set(empty) == keys
    assert (empty["lambda"], empty["n_answers"], empty["claims_total"]) == (0.5, 0, 0)
    assert (empty["claims_retained"], empty["answers_abstaining"]) == (0, 0)
    no_cut = crc_evaluate([[0.9, 0.2], [0.7]], [[1, 0], [1]], math.nan)
    assert set(no_cut) == keys
    assert math.isnan(no_cut["lambda"])
    assert math.isnan(no_cut["claims_retained"])
    assert (no_cut["n_answers"], no_cut["claims_total"]) == (2, 3)
    cut = crc_evaluate([[0.9, 0.2], [0.7]], [[1, 0], [1]], 0.5)  # keeps 0.9 and 0.7, both right
    assert set(cut) == keys
    assert (cut["lambda"], cut["claims_retained"], cut["false_claim_rate"]) == (0.5, 2, 0.0)


# --- metrics.stats.active: a bad prediction is refused naming it ---------------------------------


@pytest.mark.parametrize("design", ["uniform_ppi", "active"])
def test_labels_needed_refuses_a_prediction_outside_0_1_naming_it(design):
    """active `labels_needed` `_258` (the judge's prediction named "PREDICTION" in the error a
    caller reads)."""
    import numpy as np

    from metrics import stats

    y = np.array([1.0, 0.0] * 10)
    labelled = np.r_[np.ones(16, bool), np.zeros(4, bool)]  # enough labels to forecast from
    prediction = np.full(20, 0.6)
    prediction[3] = 1.5
    with pytest.raises(ValueError, match=r"^prediction must be 0/1 verdicts or probabilities"):
        stats.labels_needed(0.1, design, y, labelled, prediction=prediction)


# --- metrics.services.bits: the share of supported claims the bits score positive -------------


@pytest.mark.django_db
def test_bits_block_supported_positive_is_the_share_above_zero_with_its_wilson_interval():
    """bits `grounding_bits_block` `_100` (`pos > 1` for `pos > 0`: supported claims scoring
    between 0 and 1 bit counted as not positive). The bits project of test_bits_audit.py (40
    gold claims, 20 SUPPORTED, bits drawn around each verdict's mean): the share counted claim by
    claim, its Wilson interval from statsmodels."""
    from statsmodels.stats.proportion import proportion_confint

    from tests.metrics.factories_bits import build_bits_project

    built = build_bits_project(n_answers=10)
    block = report_compute(project=built.project, judge=built.judge)["grounding_bits"]
    pos = [built.bits[c.pk] for c in built.claims if c.gold.verdict == S]
    assert any(0 < b <= 1 for b in pos)  # the case the share must count
    k, n = sum(b > 0 for b in pos), len(pos)
    share = block["supported_positive"]
    assert (share["numerator"], share["denominator"]) == (k, n)
    assert share["value"] == pytest.approx(k / n)
    assert list(share["ci"]) == pytest.approx(proportion_confint(k, n, method="wilson"))


# --- metrics.services.trend: a system's gold-only interval is clustered by answer -------------


@pytest.mark.django_db
def test_trend_gold_only_interval_is_clustered_by_answer():
    """trend `systems_trend` `_80` (`design_proportion(…, None)`: the trend's gold-only interval
    treated an answer's claims as independent). Eight answers of three gold claims, alike within
    an answer: the interval is the hand CR1 clustered Wilson (tests.metrics.independent), wider
    than the independent-claims Wilson."""
    import numpy as np

    from metrics.services.trend import systems_trend
    from tests.compare.builders import answer_record, import_records
    from tests.metrics import independent as ref

    answers = [
        [S, S, S], [N, N, N], [S, S, N], [S, S, S], [N, N, S], [S, S, S], [S, N, N], [S, S, S],
    ]  # fmt: skip
    project = ProjectFactory()
    import_records(
        project,
        [answer_record(f"q{i}", "rag@1", [(v, None) for v in a]) for i, a in enumerate(answers)],
    )
    (row,) = systems_trend(project=project)
    y = np.array([v == S for a in answers for v in a], dtype=float)
    ids = np.repeat(np.arange(8), 3)
    lo, hi = ref.clustered_wilson(y, ids)
    assert row["gold_only"]["value"] == pytest.approx(16 / 24)
    assert row["gold_only"]["ci"] == [pytest.approx(lo, abs=1e-9), pytest.approx(hi, abs=1e-9)]
    w_lo, w_hi = ref.wilson(16, 24)
    assert hi - lo > w_hi - w_lo + 0.05  # clustering matters here


def test_dashboard_summary_faithfulness_carries_its_figures():
    """summary `_faithfulness` `_89` (the "value" key renamed: the dashboard's figure lost). By
    hand: 16/25 → 64, the interval 0.4496–0.8046 → 45–80, from 25 gold claims."""
    from metrics.services.summary import dashboard_summary
    from tests.metrics.test_dashboard_summary import _report

    faith = dashboard_summary(report=_report(), audit=None)["faithfulness"]
    assert {k: faith[k] for k in ("value", "low", "high", "n", "source")} == {
        "value": 64,
        "low": 45,
        "high": 80,
        "n": 25,
        "source": "gold",
    }


def test_active_ppi_mean_reports_kish_effective_size_of_its_weights():
    """active `active_ppi_mean` `_283` (`W·2` for `W²` in Kish's effective size). Four labels
    with π = 0.5, 0.5, 0.25, 0.25 (weights 2, 2, 4, 4): n_eff = (Σw)²/Σw² = 144/40 = 3.6."""
    import numpy as np

    from metrics import stats

    labelled = np.r_[np.ones(4, bool), np.zeros(4, bool)]
    y = np.array([1.0, 0.0, 1.0, 1.0] + [np.nan] * 4)
    est = stats.active_ppi_mean(y, labelled, None, np.array([0.5, 0.5, 0.25, 0.25] + [0.5] * 4))
    assert est.extra["kish_n"] == pytest.approx(3.6)


# --- metrics.stats.heterogeneity: a group without claims is skipped, not the end ---------------


def test_stratified_ppi_skips_an_empty_group_and_combines_the_rest():
    """heterogeneity `stratified_ppi` `_18` (`break` for `continue` at a group with no claims:
    every group after it was dropped). An empty group first, then one group: the combined
    figure is that group's PPI++ mean by ppi_py, weight 1."""
    import numpy as np

    from metrics.stats.heterogeneity import stratified_ppi
    from tests.metrics import independent as ref

    rng = np.random.default_rng(4)
    y = (rng.random(30) < 0.7).astype(float)
    fg = np.clip(np.where(y > 0, 0.8, 0.3) + rng.normal(0, 0.1, 30), 0, 1)
    fr = np.clip(rng.normal(0.65, 0.2, 50), 0, 1)
    out = stratified_ppi(
        {
            "empty": {
                "gold": np.empty(0),
                "judge_on_gold": np.empty(0),
                "judge_on_rest": np.empty(0),
            },
            "b": {"gold": y, "judge_on_gold": fg, "judge_on_rest": fr},
        }
    )
    value, _ci, _lam = ref.ppi(y, fg, fr)
    assert out["value"] == pytest.approx(value, rel=1e-9)
    assert set(out["per_group"]) == {"b"}
    assert out["per_group"]["b"]["weight"] == 1.0


# --- metrics.stats.calibration: a judge that always says 1.0 --------------------------------------


def test_platt_of_a_constant_confidence_of_one_is_the_mean_platt_target():
    """calibration `_platt_fit` `_97` (`w.sum() − σ` for `+ σ` in the Hessian: with every
    confidence exactly 1 its determinant is −σ² < 0, Newton stops at the start and the
    calibrated value is (N₊ + 1)/(N + 2)). With one confidence value the best sigmoid meets the
    mean of Platt's targets: 3 supported, 1 not: (3·4/5 + 1/3)/4 = 0.68333 by hand."""
    import numpy as np

    from metrics.stats.calibration import platt_calibrator

    calibrator = platt_calibrator(np.ones(4), np.array([1.0, 1.0, 1.0, 0.0]))
    # Newton stops within its tolerance (here 3e-8); the mutant stops at 4/6 = 0.667
    assert calibrator(np.array([1.0]))[0] == pytest.approx((3 * 4 / 5 + 1 / 3) / 4, rel=1e-6)


# --- the dashboard summary, the gate's judge, the eager snapshot, selective routing ------------


def test_dashboard_summary_gives_no_figure_from_zero_claims():
    """summary `_faithfulness` `_46` (`… is None and not n` for `or not n`: a figure "from 0
    gold claims" when a stored report has a pooled value but no claim count)."""
    from metrics.services.summary import dashboard_summary

    report = {"claims": {"total": 0}, "faithfulness": {"pooled": {"value": 0.5, "ci": [0.1, 0.9]}}}
    assert dashboard_summary(report=report, audit=None)["faithfulness"] is None
    audit = {"headline_estimate": "ppi", "ppi": {"value": 0.5, "ci": [0.1, 0.9]}}  # no n_audited
    assert dashboard_summary(report=report, audit=audit)["faithfulness"] is None


def test_gate_names_the_judge_and_the_project_it_read():
    """gate `gate_check` `_111` (`report.get("JUDGE")`: the gate's result lost the judge's
    name that CI logs print)."""
    from metrics.services.gate import gate_check

    report = {
        "project": {"slug": "demo"},
        "judge": {"name": "baseline"},
        "faithfulness": {"pooled": {"value": 0.8, "ci": [0.7, 0.9]}},
        "computed_at": "2026-12-01T15:00:00+00:00",
    }
    result = gate_check(report, minimum=0.6, on="lower")
    assert (result["project"], result["judge"], result["computed_at"]) == (
        "demo",
        "baseline",
        "2026-12-01T15:00:00+00:00",
    )
    assert result["pass"] is True


@pytest.mark.django_db
def test_snapshot_requested_without_a_broker_is_computed_in_process(
    django_capture_on_commit_callbacks,
):
    """snapshots `_enqueue` `_1` (`snapshot_compute(snapshot_id=None)` when tasks run eagerly:
    the requested snapshot never computed). Three claims, two with gold (S, N): once the
    transaction commits the snapshot is done and its report counts them (3 claims, 2 with gold,
    half of them supported)."""
    from metrics.models import ReportSnapshot
    from metrics.services import snapshot_request

    project = ProjectFactory()
    claims = [ClaimFactory(answer=AnswerFactory(project=project)) for _ in range(3)]
    Gold.objects.create(claim=claims[0], verdict=S, source="unanimous")
    Gold.objects.create(claim=claims[1], verdict=N, source="unanimous")
    with django_capture_on_commit_callbacks(execute=True):
        snapshot = snapshot_request(project=project)
    snapshot.refresh_from_db()
    assert snapshot.status == ReportSnapshot.Status.DONE
    claims_block = snapshot.data["claims"]
    assert (claims_block["in_project"], claims_block["total"], claims_block["without_gold"]) == (
        3,
        2,
        1,
    )
    assert snapshot.data["faithfulness"]["pooled"]["value"] == pytest.approx(0.5)


@pytest.mark.django_db
def test_selective_routing_routes_exactly_the_claims_at_or_above_the_threshold():
    """active_audit `selective_judged_columns` `_44` (its `claim_ids` key renamed: routing
    failed with KeyError; "no tests" in the run, only the routing views call it). The project of
    test_active_audit.py's routing tests: the claims routed are those whose verdict confidence
    (as the test wrote it) is at or above the returned threshold."""
    from annotate.models import Claim
    from metrics.services.active_audit import selective_routing_apply
    from tests.metrics.test_active_audit import build_confident_judge_project

    project, judge, rows = build_confident_judge_project()
    out = selective_routing_apply(project=project, judge=judge)
    expected = {claim.pk for claim, conf, _gold, _verdict in rows if conf >= out["threshold"]}
    routed = set(
        Claim.objects.filter(project=project, routed_to_judge=True).values_list("pk", flat=True)
    )
    assert routed == expected
    assert out["routed"] == len(expected) > 0
    project.refresh_from_db()
    assert project.selective_judging is True


# --- metrics.services.audit_design: the design's own method names the labels left out ---------


@pytest.mark.django_db
def test_design_method_says_the_labels_made_outside_the_queue_are_not_in_the_audit():
    """audit_design `design_method` `_68` (`outside_queue_sentence(None)`: the design section's
    method, `method.design` of the report, lost the sentence; the faithfulness method gets it
    separately, which is all the old test read). 10 queue labels, 3 made outside the queue."""
    from annotate.models import Label
    from tests.factories import UserFactory

    project = ProjectFactory()
    user = UserFactory()
    claims = []
    for _ in range(10):
        answer = AnswerFactory(project=project)
        claims += [ClaimFactory(answer=answer), ClaimFactory(answer=answer)]
    for i, claim in enumerate(claims[:13]):
        verdict = S if i < 10 else N
        Gold.objects.create(claim=claim, verdict=verdict, source="unanimous")
        stratum = {} if i < 10 else {"outside_queue": True}
        Label.objects.create(claim=claim, annotator=user, verdict=verdict, stratum=stratum)
    report = report_compute(project=project)
    sentence = "3 labels made outside the queue are not in the audit."
    assert report["design"]["method"].endswith(". " + sentence)
    assert report["method"]["design"] == report["design"]["method"]


# --- metrics.stats.design: the clustered Rogan–Gladen interval against a cluster bootstrap -----


def test_design_rogan_gladen_clustered_interval_agrees_with_a_cluster_bootstrap():
    """design `design_rogan_gladen` `_208` (the floor of the adjusted variance 1 + 1e-12 for
    1e-12: every clustered interval [0, 1]). The clustered audit of test_design.py (the judge a
    census): the interval's ends within 0.02 of the 2.5% and 97.5% quantiles of a 2,000-draw
    bootstrap of answers computed here (0.476, 0.655; the interval 0.472–0.646)."""
    import numpy as np

    from metrics import stats
    from tests.metrics.stats.test_design import _clustered_audit, _rg_from_counts

    gold, judge, ids = _clustered_audit()
    judge_all = np.r_[np.ones(470, int), np.zeros(530, int)]
    est = stats.design_rogan_gladen(
        judge_all, np.arange(1000), gold, judge, ids, judge_is_census=True
    )
    g = ids.max() + 1
    a_se, b_se = np.bincount(ids, gold * judge, g), np.bincount(ids, gold, g)
    a_sp, b_sp = np.bincount(ids, (1 - gold) * (1 - judge), g), np.bincount(ids, 1 - gold, g)
    draws = np.random.default_rng(7).integers(0, g, size=(2000, g))
    counts = np.stack([np.bincount(row, minlength=g) for row in draws])
    boot = _rg_from_counts(0.47, counts @ a_se, counts @ b_se, counts @ a_sp, counts @ b_sp)
    lo, hi = np.quantile(boot, [0.025, 0.975])
    assert est.ci[0] == pytest.approx(lo, abs=0.02)
    assert est.ci[1] == pytest.approx(hi, abs=0.02)


# --- metrics.services.compare: the judge audited per system counts only gold claims -----------


@pytest.mark.django_db
def test_compare_judge_by_system_audits_only_claims_with_gold():
    """compare `_judge_by_system` `_7` (`gold != "XXXX"`: claims the judge judged without gold
    entered the per-system audit). Each system: two gold claims the judge got right (S, N) and
    one judged claim without gold: 2 audited, sensitivity 1 of 1, specificity 1 of 1."""
    from judges.models import Judge
    from metrics.services.compare import system_resolve, systems_compare
    from tests.compare.builders import answer_record, import_records

    project = ProjectFactory()
    import_records(
        project,
        [answer_record("q1", s, [(S, S), (N, N), (None, S)]) for s in ("rag@1", "rag@2")],
    )
    a = system_resolve(project=project, ref="rag@1")
    b = system_resolve(project=project, ref="rag@2")
    result = systems_compare(project=project, a=a, b=b, judge=Judge.objects.get(name="j"))
    rows = result["judge_by_system"]["per_system"]
    assert [(r["system"], r["n_audited"]) for r in rows] == [("rag@1", 2), ("rag@2", 2)]
    for r in rows:
        assert (r["sensitivity"]["successes"], r["sensitivity"]["n"]) == (1, 1)
        assert (r["specificity"]["successes"], r["specificity"]["n"]) == (1, 1)


# --- metrics.services.active_audit: the active forecast draws with the claims' own π -----------


@pytest.mark.django_db
def test_active_forecast_uses_the_claims_current_pi_for_the_labels_to_come():
    """active_audit `_forecasts` `_54` (`design_pi=None`: the forecast of the labels still to
    draw used the labels' π, with their mean for claims without one, instead of the claims'
    current π). 40 one-claim answers, the queue active: 20 labelled with π 0.5 (gold 14 S, 6 N),
    10 unlabelled with π 0.1, 10 without π. The labels' π fill the last 10 with 0.5, the
    claims' π with their mean (20·0.5 + 10·0.1)/30. Expected: `stats.labels_needed` (pinned by
    hand in tests/metrics/stats/test_active.py) on those arrays, the wiring being the point."""
    import numpy as np

    from annotate.models import Label
    from metrics import stats
    from tests.factories import UserFactory

    project = ProjectFactory(queue_design="active")
    claims = [ClaimFactory(answer=AnswerFactory(project=project)) for _ in range(40)]
    user = UserFactory()
    verdicts = [S] * 14 + [N] * 6
    for claim, verdict in zip(claims[:20], verdicts, strict=True):
        Gold.objects.create(claim=claim, verdict=verdict, source="unanimous")
        Label.objects.create(
            claim=claim, annotator=user, verdict=verdict, design="active", inclusion_probability=0.5
        )
    for claim in claims[:20]:
        claim.inclusion_probability = 0.5
        claim.save(update_fields=["inclusion_probability"])
    for claim in claims[20:30]:
        claim.inclusion_probability = 0.1
        claim.save(update_fields=["inclusion_probability"])
    forecast = report_compute(project=project)["active_audit"]["forecast"]["active"]

    y = np.array([1.0] * 14 + [0.0] * 26)
    labelled = np.r_[np.ones(20, bool), np.zeros(20, bool)]
    pi = np.r_[np.full(20, 0.5), np.full(10, 0.1), np.full(10, 0.5)]
    design_pi = np.r_[np.full(20, 0.5), np.full(10, 0.1), np.full(10, (20 * 0.5 + 10 * 0.1) / 30)]
    expected = stats.labels_needed(
        0.10, "active", y, labelled, prediction=np.full(40, 0.5), pi=pi, design_pi=design_pi,
        cluster=np.arange(40),
    )  # fmt: skip
    without = stats.labels_needed(
        0.10, "active", y, labelled, prediction=np.full(40, 0.5), pi=pi, cluster=np.arange(40)
    )
    assert expected.labels_total != without.labels_total  # the case tells the two apart
    assert forecast["labels_total"] == expected.labels_total
