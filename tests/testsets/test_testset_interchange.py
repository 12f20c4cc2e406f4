"""Test sets in and out of files: the JSONL round trip, the RAGAS and DeepEval golden
exports, import errors named by line and field (nothing written), the export command."""

import io
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.urls import reverse

from tests.testsets.review_world import AGES, DOSE, REFUNDS, review_world_build
from testsets.models import ItemQuote, TestItem, TestSet
from testsets.services.interchange import SetImportError, set_export, set_import
from testsets.services.review import item_accept, item_reject, set_publish

pytestmark = pytest.mark.django_db


def _lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _export(client, world, fmt, test_set=None):
    test_set = test_set or world.test_set
    url = reverse("testsets:export", args=[world.project.slug, test_set.pk])
    response = client.get(f"{url}?format={fmt}")
    assert response.status_code == 200, response.content[:300]
    return response


def test_jsonl_carries_each_item_with_its_quotes_document_and_passage():
    world = review_world_build()
    response = _export(world.client("lead"), world, "jsonl")
    assert 'filename="critical-v1-jsonl.jsonl"' in response["Content-Disposition"]
    lines = _lines(response.content.decode())
    assert lines[0] == {
        "id": "q0",
        "question": "How long do refunds take?",
        "answer": "Within 14 days.",
        "risk_category": "financial",
        "language": "en",
        "document": "policy",
        # "Refunds are paid within 14 days." is the passage's first 32 code points
        "quotes": [{"document": "policy", "passage": 0, "start": 0, "end": 32,
                    "text": "Refunds are paid within 14 days."}],
    }  # fmt: skip
    assert [line["id"] for line in lines] == ["q0", "q1", "q2"]
    assert lines[1]["quotes"][0]["passage"] == 1


def test_jsonl_round_trip_into_a_new_draft_is_equal():
    world = review_world_build()
    client = world.client("lead")
    exported = _export(client, world, "jsonl").content
    upload = SimpleUploadedFile("critical.jsonl", exported, content_type="application/x-ndjson")
    response = client.post(
        reverse("testsets:import", args=["kb"]), {"name": "copy", "file": upload}
    )
    copy = TestSet.objects.get(project=world.project, name="copy")
    assert response["Location"] == reverse("testsets:detail", args=["kb", copy.pk])
    assert (copy.version, copy.status, copy.generator["kind"]) == (1, "draft", "import")
    assert set(copy.items.values_list("status", flat=True)) == {"pending"}  # reviewed again
    again = _export(client, world, "jsonl", copy).content
    assert _lines(again.decode()) == _lines(exported.decode())
    # Importing under the same name makes the next version.
    set_import(project=world.project, name="copy", data=exported, file_name="x.jsonl")
    assert TestSet.objects.filter(project=world.project, name="copy").count() == 2


def test_a_published_set_exports_only_its_accepted_items():
    world = review_world_build()
    item_accept(item=world.items[1], user=world.lead)
    item_reject(item=world.items[2], user=world.lead, reason="no")
    out = io.StringIO()
    assert set_export(test_set=world.test_set, format="jsonl", out=out) == 2  # a draft: q0, q1
    set_publish(test_set=world.test_set, user=world.lead)
    lines = _lines(_export(world.client("lead"), world, "jsonl").content.decode())
    assert [line["id"] for line in lines] == ["q1"]


def test_ragas_export_is_golden_samples_with_user_input_reference_and_contexts():
    world = review_world_build()
    lines = _lines(_export(world.client("lead"), world, "ragas").content.decode())
    assert lines == [
        {"user_input": "How long do refunds take?", "reference": "Within 14 days.",
         "reference_contexts": [REFUNDS]},
        {"user_input": "How old must an applicant be?", "reference": "At least 18.",
         "reference_contexts": [AGES]},
        {"user_input": "How many tablets a day at most?", "reference": "4 in 24 hours.",
         "reference_contexts": [DOSE]},
    ]  # fmt: skip


def test_deepeval_export_is_a_list_of_goldens_with_input_expected_output_and_context():
    world = review_world_build()
    response = _export(world.client("lead"), world, "deepeval")
    assert response["Content-Type"] == "application/json"
    goldens = json.loads(response.content)
    assert [sorted(g) for g in goldens] == [
        ["additional_metadata", "context", "expected_output", "input"]
    ] * 3
    first = goldens[0]
    assert (first["input"], first["expected_output"], first["context"]) == (
        "How long do refunds take?", "Within 14 days.", [REFUNDS],
    )  # fmt: skip
    assert first["additional_metadata"]["id"] == "q0"
    assert first["additional_metadata"]["risk_category"] == "financial"
    assert first["additional_metadata"]["quotes"][0]["text"] == "Refunds are paid within 14 days."


def _line(**fields):
    record = {
        "id": "x1",
        "question": "How long do refunds take?",
        "answer": "Within 14 days.",
        "risk_category": "financial",
        "language": "en",
        "document": "policy",
        "quotes": [{"document": "policy", "passage": 0, "start": 0, "end": 32,
                    "text": "Refunds are paid within 14 days."}],
    }  # fmt: skip
    record.update(fields)
    return json.dumps({k: v for k, v in record.items() if v is not None})


def test_import_errors_name_the_line_and_the_field_and_nothing_is_written():
    world = review_world_build()
    altered = [{"document": "policy", "passage": 0, "start": 0, "end": 32,
                "text": "Refunds are paid within 15 days."}]  # fmt: skip
    lines = [
        _line(),
        _line(id="x2", quotes=altered),
        _line(id="x3", question=""),
        "{not json",
        _line(id="x5", risk_category="tax"),
        _line(
            id="x6",
            quotes=[{"document": "policy", "passage": 7, "start": 0, "end": 1, "text": "R"}],
        ),  # fmt: skip
        _line(id="x7", document="nowhere"),
        _line(),  # x1 again
        _line(id="x9", quotes=[]),
    ]
    data = ("\n".join(lines) + "\n").encode()
    sets, items, quotes = (
        TestSet.objects.count(),
        TestItem.objects.count(),
        ItemQuote.objects.count(),
    )
    with pytest.raises(SetImportError) as caught:
        set_import(project=world.project, name="bad", data=data, file_name="bad.jsonl")
    errors = caught.value.errors
    assert errors[0].startswith("line 2, field quotes[0].text: The quote is not in the pile")
    assert errors[1] == "line 3, field question: must be a non-empty string"
    assert errors[2].startswith("line 4, field (line): is not JSON")
    assert errors[3].startswith("line 5, field risk_category: unknown 'tax'")
    assert errors[4] == "line 6, field quotes[0].passage: document 'policy' has no passage 7"
    assert (
        errors[5]
        == "line 7, field document: no document 'nowhere' in this project's knowledge base"
    )
    assert errors[6] == "line 8, field id: 'x1' is already on line 1"
    assert errors[7].startswith("line 9, field quotes: must be a non-empty list")
    assert len(errors) == 8
    assert (TestSet.objects.count(), TestItem.objects.count(), ItemQuote.objects.count()) == (
        sets, items, quotes,
    )  # fmt: skip
    # The page shows them and imports nothing.
    upload = SimpleUploadedFile("bad.jsonl", data)
    response = world.client("lead").post(
        reverse("testsets:import", args=["kb"]), {"name": "bad", "file": upload}
    )
    assert response.status_code == 422
    page = response.content.decode()
    assert "Nothing was imported" in page
    assert "line 3, field question: must be a non-empty string" in page
    assert not TestSet.objects.filter(name="bad").exists()


def test_an_analyst_cannot_export_items_or_import():
    world = review_world_build()
    analyst = world.client("analyst")
    url = reverse("testsets:export", args=["kb", world.test_set.pk])
    assert analyst.get(f"{url}?format=jsonl").status_code == 404
    assert analyst.get(reverse("testsets:import", args=["kb"])).status_code == 404
    assert world.client("lead").get(f"{url}?format=csv").status_code == 400


def test_export_testset_command_writes_the_same_file_as_the_page(tmp_path):
    world = review_world_build()
    page = _export(world.client("lead"), world, "ragas").content.decode()
    target = tmp_path / "out.jsonl"
    call_command("export_testset", project="kb", test_set="critical", format="ragas",
                 output=str(target))  # fmt: skip
    assert target.read_text(encoding="utf-8") == page
    card = tmp_path / "card.json"
    call_command("export_testset", project="kb", test_set="critical", format="card",
                 output=str(card))  # fmt: skip
    assert json.loads(card.read_text())["counts"]["generated"] == 7  # 3 items + 4 drops
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="has no test set 'critical' version 9"):
        call_command("export_testset", project="kb", test_set="critical", set_version=9)
