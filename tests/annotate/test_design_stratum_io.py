"""A claim's audit design stratum (DESIGN.md "Sampling") comes in through the native format and
goes out the same way, so an export re-imported keeps the design."""

import json

import pytest

from annotate.models import Claim
from interchange.services.exports import claims_export
from interchange.services.imports import answers_import
from tests.factories import ProjectFactory

pytestmark = pytest.mark.django_db


def _record(external_id, strata):
    return {
        "id": external_id,
        "question": "How long do refunds take?",
        "answer": "Refunds take 14 days. They go to the card.",
        "pile": [{"id": "p1", "title": "Refunds", "text": "Refunds take 14 days."}],
        "claims": [
            {"text": f"claim {i}", **({"stratum": s} if s is not None else {})}
            for i, s in enumerate(strata)
        ],
    }


def _strata(project):
    return list(
        Claim.objects.filter(project=project)
        .order_by("answer__external_id", "position")
        .values_list("stratum", flat=True)
    )


def test_native_import_reads_a_claims_stratum_and_the_export_round_trips_it(tmp_path):
    path = tmp_path / "in.jsonl"
    records = [_record("a1", ["judge rejected", None]), _record("a2", ["judge accepted", ""])]
    path.write_text("\n".join(json.dumps(r) for r in records), encoding="utf-8")
    project = ProjectFactory()
    answers_import(project=project, path_or_file=path)
    assert _strata(project) == ["judge rejected", "", "judge accepted", ""]

    out = tmp_path / "out.jsonl"
    with out.open("w", encoding="utf-8") as handle:
        claims_export(project=project, format="jsonl", out=handle)
    exported = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    by_claim = [claim.get("stratum") for record in exported for claim in record["claims"]]
    # Written only where set: a claim without a stratum exports as before.
    assert by_claim == ["judge rejected", None, "judge accepted", None]

    fresh = ProjectFactory()
    answers_import(project=fresh, path_or_file=out)
    assert _strata(fresh) == _strata(project)


def test_native_import_names_a_stratum_that_is_not_a_string(tmp_path):
    path = tmp_path / "bad.jsonl"
    bad = _record("a1", [None])
    bad["claims"][0]["stratum"] = 3
    path.write_text(json.dumps(bad), encoding="utf-8")
    project = ProjectFactory()
    with pytest.raises(Exception, match=r"stratum"):
        answers_import(project=project, path_or_file=path)
    assert not Claim.objects.filter(project=project).exists()
