"""A CI gate that refuses nonsense (issue 34, item 2): `min=NaN` used to pass every figure
(NaN compares false with everything) and the body carried a bare `NaN`, which is not JSON.

Thresholds are finite numbers from 0 to 1 (every gate metric is a rate); anything else is a
422 problem naming the parameter. A figure that could not be computed fails the gate, saying
why. Every body is read with a strict parser (no NaN, no Infinity)."""

import json
import math
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from annotate.models import Verdict
from metrics.services.gate import gate_check
from tests.api.conftest import api_world  # noqa: F401 - the API's project, people and tokens
from tests.factories import AnswerFactory, ClaimFactory, GoldFactory

GATE = "/api/v1/projects/shop/gate"

# Each spelled as a CI script might: not numbers, not finite, or outside a rate's 0 to 1.
NONSENSE = ["NaN", "nan", "-nan", "inf", "Infinity", "-Infinity", "1e400", "-1e999", "1.5", "-0.1"]
NONSENSE += ["2", "90", "1e3", "high", "0.5.1"]


def strict_json(content: bytes):
    """The body as a strict JSON parser reads it: NaN or Infinity is an error."""

    def refuse(token):
        raise ValueError(f"{token} is not JSON")

    return json.loads(content, parse_constant=refuse)


def _gold(project, supported: int, other: int) -> None:
    for n in range(supported + other):
        claim = ClaimFactory(answer=AnswerFactory(project=project, external_id=f"g{n}"))
        GoldFactory(
            claim=claim, verdict=Verdict.SUPPORTED if n < supported else Verdict.CONTRADICTED
        )


@pytest.mark.parametrize("bound", ["min", "max"])
def test_gate_refuses_a_threshold_that_is_not_a_finite_rate(api_world, bound, figures):  # noqa: F811
    """2 of 3 claims supported: faithfulness 0.67, Wilson lower end 0.21. On main `min=NaN`
    and `max=NaN` answered 200 `"pass": true`; now every nonsense value is a 422 naming it."""
    _gold(api_world.project, 2, 1)
    client = api_world.client("lead")
    for value in NONSENSE:
        response = client.get(GATE, {"metric": "faithfulness", bound: value})
        assert response.status_code == 422, (bound, value, response.content)
        assert response["Content-Type"] == "application/problem+json"
        problem = strict_json(response.content)
        assert problem["errors"][0]["field"] == bound, (value, problem)
        assert "pass" not in problem
    figures.add("bad input", **{"gate thresholds refused": len(NONSENSE)})


@pytest.mark.parametrize(
    ("query", "passes"),
    [
        ({"min": "0"}, True),  # lower end 0.21 ≥ 0
        ({"min": "1"}, False),  # 0.21 < 1
        ({"max": "1", "on": "upper"}, True),  # upper end 0.94 ≤ 1
        ({"min": "0.2", "on": "lower"}, True),  # 0.2077 ≥ 0.2
        ({"min": "0.21", "on": "lower"}, False),  # 0.2077 < 0.21
    ],
)
def test_gate_at_the_ends_of_the_range_still_answers(api_world, query, passes):  # noqa: F811
    _gold(api_world.project, 2, 1)
    response = api_world.client("lead").get(GATE, query)
    assert response.status_code == 200
    gate = strict_json(response.content)
    assert gate["pass"] is passes
    assert gate["figure"] == pytest.approx(2 / 3)


def test_the_command_refuses_a_nan_threshold_before_computing(api_world):  # noqa: F811
    _gold(api_world.project, 2, 1)
    with pytest.raises(CommandError, match="min: nan is not a finite number"):
        call_command(
            "report",
            "--project",
            "shop",
            "--fail-under",
            "nan",
            stdout=StringIO(),
            stderr=StringIO(),
        )


@pytest.mark.parametrize(
    ("block", "on"),
    [
        ({"value": math.nan, "ci": [math.nan, math.nan]}, "lower"),
        ({"value": math.nan, "ci": [0.2, 0.9]}, "value"),
        ({"value": 0.7, "ci": [0.2, math.inf]}, "upper"),
    ],
)
def test_a_figure_that_could_not_be_computed_fails_closed(block, on):
    """On main a NaN figure passed (`nan < 0.5` is false) and was echoed as NaN."""
    report = {"project": {"slug": "p"}, "faithfulness": {"pooled": block}}
    gate = gate_check(report, metric="faithfulness", minimum=0.5, maximum=0.95, on=on)
    assert gate["pass"] is False
    assert "could not be computed" in gate["reason"]
    assert gate["judged_value"] is None
    strict_json(json.dumps(gate))  # every value of it is JSON


def test_a_gate_with_no_figure_fails_and_says_so(api_world):  # noqa: F811
    response = api_world.client("lead").get(GATE, {"min": "0.5"})
    gate = strict_json(response.content)
    assert (response.status_code, gate["pass"], gate["figure"]) == (200, False, None)
    assert "no faithfulness figure" in gate["reason"]
