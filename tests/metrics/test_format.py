"""The one rounding rule of every page (metrics/format.py): halves up, on the decimal a reader
sees, whole percents by default. Hand-worked cases; the ties are the ones Python's own
rounding (ties to even, on the binary float) gets differently."""

import math

import numpy as np
import pytest
from django.template import Context, Template

from metrics import format as fmt


@pytest.mark.parametrize(
    ("share", "shown"),
    [
        (0.625, "63%"),  # 5 of 8: round(62.5) and f"{62.5:.0f}" give 62
        (0.125, "13%"),  # 1 of 8: Python gives 12
        (0.285, "29%"),  # the float is 0.28499999…; a reader sees 0.285
        (0.6249, "62%"),
        (0.0, "0%"),
        (1.0, "100%"),
        (-0.001, "0%"),  # never "-0%"
        (np.float64(0.625), "63%"),  # numpy scalars read like floats
    ],
)
def test_percent_rounds_halves_up_to_whole_percents(share, shown):
    assert fmt.percent(share) == shown


def test_percent_with_places_keeps_the_rule():
    assert fmt.percent(0.625, 1) == "62.5%"
    assert fmt.percent(0.0145, 1) == "1.5%"  # f"{1.45:.1f}" gives 1.4 (the float is below)
    assert fmt.percent(0.12345, 2) == "12.35%"
    assert fmt.percent(0.00125, 1) == "0.1%"


def test_whole_percent_is_the_figure_the_sentences_use():
    assert fmt.whole_percent(0.625) == 63
    assert fmt.whole_percent(0.005) == 1
    assert round(62.5) == 62  # the rule this replaces


@pytest.mark.parametrize("missing", [None, math.nan, math.inf, "n/a", True])
def test_a_missing_figure_reads_a_dash_or_what_the_page_asks(missing):
    assert fmt.percent(missing) == "—"
    assert fmt.percent(missing, missing="n/a") == "n/a"
    assert fmt.percent_interval([missing, 0.5]) == "—"


def test_interval_ends_are_rounded_on_their_own_by_the_same_rule():
    assert fmt.percent_interval([0.385, 0.8125]) == "39–81%"
    assert fmt.percent_interval((0.125, 0.625)) == "13–63%"
    assert fmt.percent_interval([0.5]) == "—"
    assert fmt.percent_interval(None) == "—"


def test_differences_are_signed_points_with_one_decimal_halves_up():
    assert fmt.points(0.0625) == "+6.3"  # f"{6.25:+.1f}" gives +6.2
    assert fmt.points(-0.0625) == "-6.3"
    assert fmt.points(0.0) == "+0.0"
    assert fmt.points(None) == "n/a"
    assert fmt.points_interval([0.023, 0.0985]) == "[+2.3, +9.9]"
    assert fmt.points_interval([None, 0.1]) == "n/a"


def test_half_widths_and_plain_numbers_halve_up_at_their_places():
    assert fmt.number(0.2045) == "0.205"  # f"{0.2045:.3f}" gives 0.204 (the float is below)
    assert fmt.number(0.4375, 2) == "0.44"
    assert fmt.number(-0.125, 2) == "-0.13"
    assert fmt.number(None) == "—"


def test_templates_read_the_same_figures_through_the_filters():
    template = Template(
        "{% load report_format compare_format %}"
        "{{ a|pct }} {{ ci|ci }} {{ a|rate_pct }} {{ d|points }} {{ dci|points_ci }} {{ h|num:3 }}"
    )
    context = Context({"a": 0.625, "ci": [0.385, 0.8125], "d": 0.0625, "dci": [0.0, 0.125]})
    context["h"] = 0.2045
    assert template.render(context) == "63% 39–81% 63% +6.3 [+0.0, +12.5] 0.205"


def test_each_half_width_says_which_estimator_it_belongs_to():
    template = Template("{% load report_format %}{{ a|estimator_name }} / {{ b|estimator_name }}")
    context = Context({"a": "gold_only_faithfulness", "b": "uniform_ppi"})
    assert template.render(context) == "gold only / PPI++"
