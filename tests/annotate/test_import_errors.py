"""Bad input: every problem names its line (or record) and field, and nothing is imported."""

import json

import pytest
from django.contrib.auth import get_user_model

from annotate.models import (
    Answer,
    Claim,
    Gold,
    Label,
    LabelHistory,
    Membership,
    Passage,
    Project,
)
from interchange.services import imports
from interchange.services.imports import ImportFailed, answers_import
from judges.models import Judge, JudgeRun, JudgeVerdict
from tests.factories import AnswerFactory, JudgeFactory, ProjectFactory

pytestmark = pytest.mark.django_db

TABLES = [
    Answer,
    Passage,
    Claim,
    Claim.cited_passages.through,
    Label,
    LabelHistory,
    Gold,
    Judge,
    JudgeRun,
    JudgeVerdict,
    Membership,
    get_user_model(),
    Project,
]

PILE = [{"id": "doc-1", "title": "Policy", "text": "Refunds 💳 take 14 days."}]


def good(answer_id="a1", **extra):
    return {"id": answer_id, "question": "How long?", "answer": "14 days.", "pile": PILE, **extra}


def counts():
    return {model.__name__: model.objects.count() for model in TABLES}


def jsonl(tmp_path, *records, name="in.jsonl"):
    path = tmp_path / name
    lines = [r if isinstance(r, str) else json.dumps(r, ensure_ascii=False) for r in records]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def failed_import(project, path, **kwargs) -> list[str]:
    """Import that must fail and write nothing; the problems as the user reads them."""
    before = counts()
    with pytest.raises(ImportFailed) as failed:
        answers_import(project=project, path_or_file=path, **kwargs)
    assert counts() == before, "a failed file must leave nothing behind"
    return [str(issue) for issue in failed.value.issues]


@pytest.fixture
def project():
    return ProjectFactory()


def test_bad_json_names_the_line(project, tmp_path):
    path = jsonl(tmp_path, good("a1"), '{"id": "a2", "question": "q",', good("a3"))
    assert failed_import(project, path) == [
        "line 2: bad JSON: Expecting property name enclosed in double quotes (column 30)"
    ]


def test_bad_json_in_a_json_list_names_the_record_and_line(project, tmp_path):
    path = tmp_path / "in.json"
    path.write_text('[\n  {"id": "a1", "question": "q", "answer": "a", "pile": []},\n  {"id": }\n]')
    (problem,) = failed_import(project, path)
    assert problem.startswith("record 2 (line 3): bad JSON: Expecting value")


def test_missing_field_names_line_and_field(project, tmp_path):
    record = good("a2")
    del record["question"]
    path = jsonl(tmp_path, good("a1"), record)
    assert failed_import(project, path) == [
        "line 2, field question: missing (this field is required)"
    ]


def test_missing_nested_field_names_its_path(project, tmp_path):
    path = jsonl(tmp_path, good("a1", pile=[PILE[0], {"id": "doc-2", "title": "t"}]))
    assert failed_import(project, path) == [
        "line 1, field pile[1].text: missing (this field is required)"
    ]


def test_wrong_type_names_field_and_value(project, tmp_path):
    pile = [*PILE, {"id": "d2", "text": "x"}, {"id": "d3", "text": 12}]
    path = jsonl(
        tmp_path,
        good("a1"),
        good("a2"),
        good("a3"),
        good("a4"),
        good("a5"),
        good("a6"),
        good("a7", pile=pile),
    )
    assert failed_import(project, path) == ["line 7, field pile[2].text: expected a string, got 12"]


def test_wrong_type_in_a_json_record_names_the_record(project, tmp_path):
    path = tmp_path / "in.json"
    text = json.dumps([good("a1"), good("a2"), good("a3", answerable="yes")], indent=2)
    path.write_text(text)
    third = [number for number, line in enumerate(text.splitlines(), 1) if line == "  {"][2]
    assert failed_import(project, path) == [
        f'record 3 (line {third}), field answerable: expected true or false, got "yes"'
    ]


def test_quote_outside_its_passage(project, tmp_path):
    claims = [
        {
            "text": "Refunds take 14 days.",
            "labels": [
                {
                    "annotator": "ana",
                    "verdict": "SUPPORTED",
                    "quote": {"passage": "doc-1", "start": 10, "end": 99},
                }
            ],
        }
    ]
    path = jsonl(tmp_path, good("a1", claims=claims))
    assert failed_import(project, path) == [
        "line 1, field claims[0].labels[0].quote: The quote's span 10–99 runs past the end "
        "of the passage (23 characters)."
    ]


def test_quote_not_matching_the_passage(project, tmp_path):
    # "take 14 days" starts at code point 10 (after the emoji); UTF-16 would say 11.
    claims = [
        {
            "text": "Refunds take 14 days.",
            "labels": [
                {
                    "annotator": "ana",
                    "verdict": "SUPPORTED",
                    "quote": {"passage": 1, "start": 11, "end": 23, "text": "take 14 days"},
                }
            ],
        }
    ]
    path = jsonl(tmp_path, good("a1", claims=claims))
    (problem,) = failed_import(project, path)
    assert problem.startswith(
        "line 1, field claims[0].labels[0].quote: The quote is not in the pile"
    )
    claims[0]["labels"][0]["quote"]["start"] = 10
    claims[0]["labels"][0]["quote"]["end"] = 22
    assert (
        answers_import(
            project=project, path_or_file=jsonl(tmp_path, good("a1", claims=claims))
        ).labels
        == 1
    )


def test_quote_naming_a_passage_not_in_the_pile(project, tmp_path):
    claims = [
        {
            "text": "c",
            "labels": [
                {
                    "annotator": "ana",
                    "verdict": "CONTRADICTED",
                    "quote": {"passage": "doc-9", "start": 0, "end": 3},
                }
            ],
        }
    ]
    path = jsonl(tmp_path, good("a1", claims=claims))
    assert failed_import(project, path) == [
        'line 1, field claims[0].labels[0].quote.passage: no passage with id "doc-9" in this '
        "answer's pile"
    ]


def test_supported_label_without_quote_is_refused_when_the_project_requires_quotes(
    project, tmp_path
):
    claims = [{"text": "c", "labels": [{"annotator": "ana", "verdict": "SUPPORTED"}]}]
    path = jsonl(tmp_path, good("a1", claims=claims))
    assert failed_import(project, path) == [
        "line 1, field claims[0].labels[0].quote: a SUPPORTED label needs a quote "
        "(this project requires evidence quotes)"
    ]
    project.quote_required = False
    project.save()
    assert answers_import(project=project, path_or_file=path).labels == 1


def test_unknown_verdict(project, tmp_path):
    claims = [{"text": "c", "labels": [{"annotator": "ana", "verdict": "MAYBE"}]}]
    path = jsonl(tmp_path, good("a1"), good("a2", claims=claims))
    assert failed_import(project, path) == [
        'line 2, field claims[0].labels[0].verdict: unknown verdict "MAYBE": use SUPPORTED, '
        "CONTRADICTED, NOT_IN_PILE"
    ]


def test_unknown_judge_verdict(project, tmp_path):
    claims = [{"text": "c", "judge": {"name": "j", "verdict": "PROBABLY"}}]
    (problem,) = failed_import(project, jsonl(tmp_path, good("a1", claims=claims)))
    assert problem.startswith('line 1, field claims[0].judge.verdict: unknown verdict "PROBABLY"')


def test_unknown_risk_category(project, tmp_path):
    path = jsonl(tmp_path, good("a1", risk_category="astrology"))
    assert failed_import(project, path) == [
        'line 1, field risk_category: unknown risk category "astrology": use legal, financial, '
        "safety, health, security, eligibility, discrimination, none"
    ]


def test_confidence_outside_zero_one(project, tmp_path):
    claims = [{"text": "c", "judge": {"name": "j", "verdict": "SUPPORTED", "confidence": 1.3}}]
    path = jsonl(tmp_path, good("a1", claims=claims))
    assert failed_import(project, path) == [
        "line 1, field claims[0].judge.confidence: confidence 1.3 is outside [0, 1] "
        "(it is P(SUPPORTED))"
    ]


def test_duplicate_id_within_the_file(project, tmp_path):
    path = jsonl(tmp_path, good("a1"), good("a2"), good("a1"))
    assert failed_import(project, path) == [
        "line 3, field id: duplicate id: answer id 'a1' already appears at line 1"
    ]


def test_duplicate_id_already_in_the_project(project, tmp_path):
    AnswerFactory(project=project, external_id="a2")
    path = jsonl(tmp_path, good("a1"), good("a2"))
    assert failed_import(project, path) == [
        "line 2, field id: duplicate id: answer id 'a2' already exists in this project"
    ]


def test_same_answer_id_in_another_project_is_fine(project, tmp_path):
    AnswerFactory(external_id="a1")  # another project
    assert answers_import(project=project, path_or_file=jsonl(tmp_path, good("a1"))).answers == 1


def test_two_labels_by_one_analyst_on_one_claim(project, tmp_path):
    label = {"annotator": "ana", "verdict": "NOT_IN_PILE"}
    path = jsonl(tmp_path, good("a1", claims=[{"text": "c", "labels": [label, label]}]))
    assert failed_import(project, path) == [
        "line 1, field claims[0].labels[1].annotator: duplicate id: 'ana' already labelled this "
        "claim in claims[0].labels[0] (one label per analyst and claim)"
    ]


def test_imported_verdicts_cannot_join_a_real_judge(project, tmp_path):
    JudgeFactory(project=project, name="baseline")
    claims = [{"text": "c", "judge": {"name": "baseline", "verdict": "SUPPORTED"}}]
    path = jsonl(tmp_path, good("a1", claims=claims))
    assert failed_import(project, path) == [
        "line 1, field claims[0].judge.name: judge 'baseline' exists in this project with the "
        "baseline backend; imported verdicts need a judge name of their own"
    ]


def test_a_problem_in_a_later_batch_rolls_back_earlier_batches(project, tmp_path, monkeypatch):
    monkeypatch.setattr(imports, "BATCH_ANSWERS", 2)
    records = [good(f"a{i}") for i in range(5)]
    records[4]["pile"] = "not a list"
    path = jsonl(tmp_path, *records)
    assert failed_import(project, path) == ['line 5, field pile: expected a list, got "not a list"']


def test_problems_are_collected_across_lines_up_to_the_limit(project, tmp_path):
    records = [good(f"a{i}", answer=i) for i in range(80)]
    with pytest.raises(ImportFailed) as failed:
        answers_import(project=project, path_or_file=jsonl(tmp_path, *records))
    issues = failed.value.issues
    assert len(issues) == 50
    assert failed.value.truncated
    assert str(issues[0]) == "line 1, field answer: expected a string, got 0"
    assert str(issues[49]) == "line 50, field answer: expected a string, got 49"
    assert Answer.objects.count() == 0


def test_csv_list_cell_that_is_not_a_list(project, tmp_path):
    path = tmp_path / "in.csv"
    path.write_text(
        'user_input,response,retrieved_contexts\nq1,a1,"[""ctx""]"\nq2,a2,[not a list\n',
        encoding="utf-8",
    )
    assert failed_import(project, path) == [
        'line 3, field retrieved_contexts: expected a JSON-encoded list or object, got "[not a list"'
    ]


def test_csv_line_numbers_count_quoted_newlines(project, tmp_path):
    path = tmp_path / "in.csv"
    path.write_text(
        'user_input,response,retrieved_contexts\nq1,"line one\nline two","[""ctx""]"\nq2,a2,\n',
        encoding="utf-8",
    )
    assert failed_import(project, path) == [
        "line 4, field retrieved_contexts: missing (this field is required)"
    ]


def test_ragchecker_labels_must_match_claims_and_passages(project, tmp_path):
    result = {
        "query_id": "q0",
        "query": "q",
        "gt_answer": "g",
        "response": "r",
        "retrieved_context": [{"doc_id": "d0", "text": "t0"}, {"doc_id": "d1", "text": "t1"}],
        "response_claims": [["a", "b", "c"], "second claim"],
        "retrieved2response": [["Entailment", "Neutral"], ["Neutral"]],
    }
    path = tmp_path / "rc.json"
    path.write_text(json.dumps({"results": [result]}, indent=2))
    assert failed_import(project, path) == [
        "record 1 (line 3), field retrieved2response[1]: has 1 labels but the pile has 2 "
        "passages (one label per retrieved passage)"
    ]
    result["retrieved2response"][1] = ["Neutral", "Maybe"]
    path.write_text(json.dumps({"results": [result]}, indent=2))
    assert failed_import(project, path) == [
        'record 1 (line 3), field retrieved2response[1][1]: unknown checker label "Maybe": use '
        "Entailment, Neutral, Contradiction"
    ]


def test_unrecognisable_format_says_what_it_expected(project, tmp_path):
    (problem,) = failed_import(project, jsonl(tmp_path, {"prompt": "p", "completion": "c"}))
    assert problem.startswith("line 1: cannot tell the format from the fields (completion, prompt)")


def test_empty_file(project, tmp_path):
    path = tmp_path / "empty.jsonl"
    path.write_text("\n\n")
    assert failed_import(project, path) == ["the file: holds no answers"]


def test_not_utf8(project, tmp_path):
    path = tmp_path / "latin1.csv"
    path.write_bytes("user_input,response,retrieved_contexts\nq,café,[]\n".encode("latin-1"))
    (problem,) = failed_import(project, path)
    assert "is not UTF-8 text" in problem


def test_csv_row_with_more_cells_than_the_header(project, tmp_path):
    path = tmp_path / "in.csv"
    path.write_text("user_input,response,retrieved_contexts\nq,a,[],extra\n", encoding="utf-8")
    assert failed_import(project, path) == ["line 2: has 4 cells but the header names 3 columns"]


def test_csv_header_naming_a_column_twice(project, tmp_path):
    path = tmp_path / "in.csv"
    path.write_text("user_input,response,response\nq,a,b\n", encoding="utf-8")
    assert failed_import(project, path) == ["line 1: the header names a column twice: response"]


def test_explicit_format_that_does_not_fit_the_file(project, tmp_path):
    problems = failed_import(project, jsonl(tmp_path, good("a1")), format="ragchecker")
    assert problems == [
        "line 1, field query_id: missing (this field is required)",
        "line 1, field query: missing (this field is required)",
        "line 1, field response: missing (this field is required)",
        "line 1, field retrieved_context: missing (this field is required)",
    ]


def test_text_the_database_cannot_store(project, tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_text(
        '{"id": "a1", "question": "q\\u0000", "answer": "a", "pile": []}\n'
        '{"id": "a2", "question": "q", "answer": "\\ud800", "pile": []}\n'
        '{"id": "a3", "question": "q", "answer": "a", "pile": [], "metadata": {"k": "\\u0000"}}\n',
        encoding="utf-8",
    )
    assert failed_import(project, path) == [
        "line 1, field question: contains a NUL character (\\u0000), which cannot be stored",
        "line 2, field answer: contains an unpaired surrogate (a broken \\uD800–\\uDFFF escape)",
        "line 3, field metadata: contains a NUL character (\\u0000), which cannot be stored",
    ]


def test_nul_in_a_ragas_context_is_refused(project, tmp_path):
    path = jsonl(
        tmp_path, {"user_input": "q", "response": "a", "retrieved_contexts": ["ok", "\x00"]}
    )
    assert failed_import(project, path) == [
        "line 1, field retrieved_contexts[1]: contains a NUL character (\\u0000), which cannot be stored"
    ]
