"""The claims export names each claim's system and question key, and keeps them through a
round trip (export JSON Lines, import into a fresh project, export again)."""

import csv
import io

import pytest

from interchange.services.exports import claims_export
from interchange.services.imports import answers_import
from tests.compare.builders import answer_record, import_records
from tests.factories import ProjectFactory

pytestmark = pytest.mark.django_db
S = "SUPPORTED"


def _export(project, format):
    out = io.StringIO()
    claims_export(project=project, format=format, out=out)
    return out.getvalue()


def _import_text(project, text):
    return answers_import(project=project, path_or_file=io.BytesIO(text.encode()), format="native")


def _rows(project):
    return list(csv.DictReader(io.StringIO(_export(project, "csv"), newline="")))


def test_each_row_names_its_system_and_question_and_a_round_trip_keeps_them():
    project = ProjectFactory()
    import_records(
        project,
        [
            answer_record("q1", "rag@1", [(S, None), (S, None)]),
            answer_record("q1", "rag@2", [(S, None)]),
            answer_record("q2", "plain", [(None, None)]),  # a system with no version
        ],
    )
    cells = [(row["answer_id"], row["system"], row["question_id"]) for row in _rows(project)]
    assert cells == [
        ("rag@1:q1", "rag@1", "q1"),
        ("rag@1:q1", "rag@1", "q1"),
        ("rag@2:q1", "rag@2", "q1"),
        ("plain:q2", "plain", "q2"),
    ]
    again = ProjectFactory()
    result = _import_text(again, _export(project, "jsonl"))
    assert result.answers == 3
    assert [(row["answer_id"], row["system"], row["question_id"]) for row in _rows(again)] == cells


def test_a_project_of_one_system_has_the_column_with_that_system():
    project = ProjectFactory()
    import_records(project, [answer_record(f"q{i}", "bot@7", [(S, None)]) for i in range(3)])
    assert {row["system"] for row in _rows(project)} == {"bot@7"}
