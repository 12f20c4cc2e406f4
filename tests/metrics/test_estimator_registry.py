"""The estimator registry: an estimator added in one place reaches the report, the method
section, the design section, the dashboard and the audit card; the headline rule admits it
only when its interval is valid and narrower.

The example is test-only (the recipe in ARCHITECTURE.md "Add an estimator" is the same code
as a new module in metrics/services/estimators/): a Jeffreys interval on the audit sample,
Beta(x + ½, n − x + ½) quantiles, whose expected figures come from scipy here.
"""

import dataclasses
import math

import pytest
from django.urls import reverse
from scipy.stats import beta

from metrics.services import audit_card, estimators, snapshot_compute, snapshot_create
from metrics.services.audit_card_text import audit_card_markdown, audit_card_readable
from tests.factories import PASSWORD
from tests.metrics.factories_report import GOLD, build_planted_project

pytestmark = pytest.mark.django_db

KEY = "jeffreys_faithfulness"


def _jeffreys(inputs: estimators.EstimatorInputs) -> dict:
    n = int(inputs.gold01.size)
    x = float(inputs.gold01.sum())
    if not n:
        return {"value": math.nan, "ci": (math.nan, math.nan), "method": "Jeffreys"}
    low, high = beta.ppf([0.025, 0.975], x + 0.5, n - x + 0.5)
    return {"value": x / n, "ci": (float(low), float(high)), "n": n, "method": "Jeffreys (95%)"}


JEFFREYS = estimators.Estimator(
    key=KEY,
    choice="jeffreys",
    label="Jeffreys (audit sample)",
    card_label="Faithfulness, Jeffreys interval (audit sample)",
    design_label="Jeffreys faithfulness",
    short="Jeffreys",
    rank=3,
    compute=_jeffreys,
    detail=lambda block: f"n = {block['n']}",
    may_headline=False,
)


@pytest.fixture
def jeffreys():
    entry = estimators.register(JEFFREYS)
    yield entry
    estimators.unregister(KEY)


def test_an_estimator_registered_once_is_computed_and_shown_everywhere(client, jeffreys):
    planted = build_planted_project()
    snapshot = snapshot_create(project=planted.project, judge=planted.judge)
    snapshot_compute(snapshot_id=snapshot.pk)
    snapshot.refresh_from_db()
    report = snapshot.data
    x, n = GOLD.count("SUPPORTED"), len(GOLD)
    block = report["judge"][KEY]
    assert block["value"] == pytest.approx(x / n)
    assert block["ci"] == pytest.approx(list(beta.ppf([0.025, 0.975], x + 0.5, n - x + 0.5)))
    # In the instruments' JSON (PostgreSQL's jsonb keeps no key order: membership only), in the
    # method section, and among the design section's design effects.
    assert KEY in report["judge"]
    assert report["method"][f"judge_{KEY}"] == "Jeffreys (95%)"
    figures = [row["figure"] for row in report["design"]["design_effects"]]
    assert "Jeffreys faithfulness" in figures
    # Not allowed to be the headline: the built-in rule's choice stands.
    assert report["judge"]["headline_estimate"] in {
        "gold_only_faithfulness",
        "debiased_faithfulness",
        "ppi_faithfulness",
    }

    client.login(username="lead", password=PASSWORD)
    html = client.get(
        reverse("metrics:dashboard", args=[planted.project.slug]), {"judge": planted.judge.pk}
    ).content.decode()
    assert "Jeffreys (audit sample)" in html
    assert f"n = {n}" in html

    card = audit_card(report=report)
    assert card[KEY]["value"] == pytest.approx(x / n)
    readable = audit_card_readable(card=card, design=report.get("design"))
    assert "Faithfulness, Jeffreys interval (audit sample)" in audit_card_markdown(readable)


def _block(value, low, high):
    return {"value": value, "ci": (low, high)}


BUILT_IN = {
    "gold_only_faithfulness": _block(0.70, 0.60, 0.80),
    "debiased_faithfulness": _block(0.72, 0.55, 0.89),
    "ppi_faithfulness": _block(0.71, 0.64, 0.78),
}


def test_headline_keeps_the_built_in_rule_without_an_added_estimator():
    key, reason = estimators.headline_choose(BUILT_IN, youden_j=0.7)
    assert key == "ppi_faithfulness"  # ±0.07 against ±0.10 and ±0.17
    assert reason.startswith("PPI++ is the narrowest valid interval (±0.07")


@pytest.mark.parametrize(
    ("extra", "may_headline", "expected"),
    [
        (_block(0.70, 0.66, 0.74), True, KEY),  # ±0.04 beats PPI++'s ±0.07
        (_block(0.70, 0.66, 0.74), False, "ppi_faithfulness"),  # may not headline
        (_block(0.70, 0.71, 0.74), True, "ppi_faithfulness"),  # its interval misses its value
        (_block(0.70, 0.62, 0.78), True, "ppi_faithfulness"),  # ±0.08: wider
        (_block(math.nan, 0.66, 0.74), True, "ppi_faithfulness"),  # not computable
    ],
)
def test_an_added_estimator_takes_the_headline_only_when_valid_and_narrower(
    extra, may_headline, expected
):
    estimators.register(dataclasses.replace(JEFFREYS, may_headline=may_headline))
    try:
        key, reason = estimators.headline_choose({**BUILT_IN, KEY: extra}, youden_j=0.7)
    finally:
        estimators.unregister(KEY)
    assert key == expected
    if expected == KEY:
        assert reason == (
            "Jeffreys (audit sample) is the narrowest valid interval (±0.040), narrower than "
            "the built-in choice (±0.070)."
        )


def test_a_second_estimator_with_a_taken_key_is_refused(jeffreys):
    with pytest.raises(ValueError, match="already registered"):
        estimators.register(dataclasses.replace(JEFFREYS, choice="other"))


def test_the_built_in_estimators_are_registered_in_the_report_order():
    keys = [e.key for e in estimators.registered()][:3]
    assert keys == ["debiased_faithfulness", "ppi_faithfulness", "gold_only_faithfulness"]
    assert [e.key for e in estimators.shown()][:3] == [
        "gold_only_faithfulness",
        "debiased_faithfulness",
        "ppi_faithfulness",
    ]
