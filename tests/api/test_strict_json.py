"""No API response carries NaN or Infinity, which no JSON parser reads (issue 34): figures that
could not be computed are null where they are computed, and the renderer refuses the rest."""

import json
import math

import pytest

from tests.factories import AnswerFactory, ClaimFactory, GoldFactory


def strict_json(content: bytes):
    """The body as a strict JSON parser reads it: NaN or Infinity is an error."""

    def refuse(token):
        raise ValueError(f"{token} is not JSON")

    return json.loads(content, parse_constant=refuse)


def test_the_api_never_writes_nan():
    """A NaN that reaches a response is refused by the renderer (a logged 500 problem, JSON)
    rather than written as `NaN`."""
    from api.strict_json import StrictRenderer  # main had none: ninja's renderer wrote NaN

    renderer = StrictRenderer()
    assert strict_json(renderer.render(None, {"figure": None}, response_status=200).encode())
    for bad in (math.nan, math.inf, -math.inf):
        with pytest.raises(ValueError, match="JSON compliant"):
            renderer.render(None, {"figure": bad}, response_status=200)


def test_every_json_body_of_a_fresh_project_is_strict_json(api_world):
    """Figures not computable yet (no gold, no judge) are null, never NaN."""
    GoldFactory(claim=ClaimFactory(answer=AnswerFactory(project=api_world.project)))
    client = api_world.client("lead")
    for path in ("report", "gate?min=0.5", "gate?max=0.1&metric=contradiction_rate&on=upper"):
        response = client.get(f"/api/v1/projects/shop/{path}")
        assert response.status_code == 200
        strict_json(response.content)
