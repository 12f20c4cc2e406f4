"""Hostile JSON in an import: nesting 100,000 deep, a 5,000-digit integer, NaN and Infinity.

Each is refused with the line (or record) and the field named, no traceback, nothing imported;
in JSON Lines, JSON and the JSON cells of CSV. Before, these escaped the importer as a
RecursionError or ValueError ("Exceeds the limit (4300 digits)") and the job page showed an
internal error, or (Infinity in metadata) reached the database.
"""

import copy

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from annotate.models import Answer, Claim, Label, Membership, Passage, Role
from interchange.services.imports import ImportFailed, answers_import
from judges.models import JudgeVerdict
from tests.factories import ProjectFactory
from tests.reliability.fuzzing import RECORD, serialise

pytestmark = pytest.mark.django_db

TABLES = [Answer, Passage, Claim, Label, JudgeVerdict, Membership, get_user_model()]
PLACEHOLDER = "__HOSTILE__"
DEPTH = 100_000
DEEP_LIST = "[" * DEPTH + "]" * DEPTH
DEEP_OBJECT = '{"a":' * DEPTH + "1" + "}" * DEPTH
HUGE = "9" * 5000
SECOND = {"jsonl": "line 2", "json": "record 2", "csv": "line 3"}


def counts():
    return {model.__name__: model.objects.count() for model in TABLES}


def hostile_file(fmt: str, place, token: str) -> tuple[bytes, str]:
    """A good record, then one whose value at `place` (a function of the record) is `token`
    written verbatim (what json.dumps would never write)."""
    good, bad = RECORD[fmt](1), copy.deepcopy(RECORD[fmt](2))
    place(bad)
    content, name = serialise(fmt, [good, bad])
    if fmt.endswith("csv"):
        # Inside a JSON cell the quotes are doubled; a whole cell is the token itself.
        in_cell = token.replace('"', '""').encode()
        content = content.replace(f'""{PLACEHOLDER}""'.encode(), in_cell)
        return content.replace(PLACEHOLDER.encode(), f'"{in_cell.decode()}"'.encode()), name
    return content.replace(f'"{PLACEHOLDER}"'.encode(), token.encode()), name


def _set(*path):
    def place(record):
        node = record
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = PLACEHOLDER

    return place


def refused(content: bytes, name: str):
    project = ProjectFactory()
    before = counts()
    with pytest.raises(ImportFailed) as failed:
        answers_import(project=project, path_or_file=SimpleUploadedFile(name, content))
    assert counts() == before, "nothing of the file is imported"
    return failed.value.issues


NATIVE = ["native-jsonl", "native-json", "native-csv"]
CASES = [
    # (what, where in the record, token, the field named, words in the message)
    ("nesting of lists", _set("question"), DEEP_LIST, "question", "nested"),
    ("nesting of objects", _set("metadata"), DEEP_OBJECT, "metadata", "nested"),
    ("nesting in the pile", _set("pile", 1, "text"), DEEP_LIST, "pile[1].text", "nested"),
    (
        "huge integer position",
        _set("claims", 0, "position"),
        HUGE,
        "claims[0].position",
        "5000 digits",
    ),
    (
        "huge integer passage rank",
        _set("claims", 0, "labels", 0, "quote", "passage"),
        HUGE,
        "claims[0].labels[0].quote.passage",
        "5000 digits",
    ),
    (
        "huge integer in metadata",
        _set("metadata"),
        '{"n": ' + HUGE + "}",
        "metadata.n",
        "5000 digits",
    ),
    (
        "NaN confidence",
        _set("claims", 0, "judge", "confidence"),
        "NaN",
        "claims[0].judge.confidence",
        "NaN",
    ),
    ("Infinity in metadata", _set("metadata"), '{"x": Infinity}', "metadata.x", "Infinity"),
    (
        "-Infinity as a rank",
        _set("claims", 0, "labels", 0, "quote", "passage"),
        "-Infinity",
        "claims[0].labels[0].quote.passage",
        "-Infinity",
    ),
    (
        "1e999 (infinite once read)",
        _set("claims", 0, "judge", "confidence"),
        "1e999",
        "claims[0].judge.confidence",
        "1e999",
    ),
]


# A CSV text cell is text, not JSON: brackets in a CSV question are its words, not nesting.
HOSTILE = [
    pytest.param(fmt, *case, id=f"{case[0]}-{fmt}")
    for fmt in NATIVE
    for case in CASES
    if not (fmt.endswith("csv") and case[3] == "question")
]


@pytest.mark.parametrize(("fmt", "what", "place", "token", "field", "words"), HOSTILE)
def test_hostile_value_names_line_and_field(fmt, what, place, token, field, words):
    content, name = hostile_file(fmt, place, token)
    issues = refused(content, name)
    assert len(issues) == 1, [str(i) for i in issues]
    (issue,) = issues
    assert issue.location.startswith(SECOND[fmt.split("-")[1]]), str(issue)
    assert issue.field == field, str(issue)
    assert words in issue.message, str(issue)
    assert "Traceback" not in issue.message
    assert "RecursionError" not in issue.message


@pytest.mark.parametrize("token", [DEEP_LIST, DEEP_OBJECT], ids=["lists", "objects"])
def test_a_whole_line_nested_100000_deep_names_the_line(token):
    good = serialise("native-jsonl", [RECORD["native-jsonl"](1)])[0]
    (issue,) = refused(good + token.encode() + b"\n", "deep.jsonl")
    assert issue.location == "line 2"
    assert issue.field == ""
    assert "nested" in issue.message


@pytest.mark.parametrize("token", [DEEP_LIST, DEEP_OBJECT], ids=["lists", "objects"])
def test_a_json_record_nested_100000_deep_names_the_record(token):
    good = serialise("native-json", [RECORD["native-json"](1)])[0]
    (issue,) = refused(good[:-1] + b",\n" + token.encode() + b"]", "deep.json")
    assert issue.location.startswith("record 2 (line 2)"), str(issue)
    assert "nested" in issue.message


def test_a_file_that_is_only_deep_nesting_is_refused_cleanly():
    (issue,) = refused(("[" + DEEP_LIST + "]").encode(), "deep.json")
    assert issue.location.startswith("record 1"), str(issue)
    assert "nested" in issue.message


@pytest.mark.parametrize(
    ("fmt", "place", "field"),
    [
        ("ragchecker-json", _set("query_id"), "query_id"),
        ("ragchecker-json", _set("retrieved_context", 0, "doc_id"), "retrieved_context[0].doc_id"),
        ("ragas-jsonl", _set("id"), "id"),
    ],
)
def test_a_huge_integer_id_in_other_schemas(fmt, place, field):
    (issue,) = refused(*hostile_file(fmt, place, HUGE))
    assert issue.field == field, str(issue)
    assert "5000 digits" in issue.message


@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity"])
def test_non_finite_numbers_in_ragas_metadata_are_refused(token):
    (issue,) = refused(*hostile_file("ragas-jsonl", _set("faithfulness"), token))
    assert issue.field == "faithfulness", str(issue)
    assert token in issue.message


@pytest.mark.parametrize("cell", ["nan", "inf", "-Infinity"])
def test_non_finite_numbers_in_a_ragas_csv_score_column_stay_out_of_metadata(cell):
    content = (
        "user_input,response,retrieved_contexts,faithfulness\n"
        f'q1,a1,"[""ctx""]",0.5\nq2,a2,"[""ctx""]",{cell}\n'
    ).encode()
    project = ProjectFactory()
    answers_import(project=project, path_or_file=SimpleUploadedFile("s.csv", content))
    # A CSV cell is text: "nan" stays the string it was, never a float NaN in JSON.
    for metadata in Answer.objects.filter(project=project).values_list("metadata", flat=True):
        assert metadata["faithfulness"] in ("0.5", cell)


def test_a_huge_number_in_a_csv_cell_is_refused_with_its_column():
    content = (
        "id,question,answer,pile,claims\n"
        f'a1,q,a,"[]","[{{""text"": ""x"", ""position"": {HUGE}}}]"\n'
    ).encode()
    (issue,) = refused(content, "n.csv")
    assert issue.location == "line 2"
    assert issue.field == "claims[0].position"
    assert "5000 digits" in issue.message


def test_a_position_too_large_for_the_database_is_a_field_error():
    content = serialise("native-jsonl", [RECORD["native-jsonl"](1)])[0].replace(
        b'"text": "Refunds take 14 days.",',
        b'"text": "Refunds take 14 days.", "position": 10000000000,',
    )
    (issue,) = refused(content, "p.jsonl")
    assert issue.field == "claims[0].position", str(issue)
    assert "too large" in issue.message


@pytest.mark.parametrize(
    ("fmt", "place", "token"),
    [
        ("native-jsonl", _set("metadata"), DEEP_OBJECT),
        ("native-json", _set("claims", 0, "position"), HUGE),
        ("native-csv", _set("claims", 0, "judge", "confidence"), "NaN"),
    ],
)
def test_hostile_files_through_the_upload_page_are_a_400_with_the_line(fmt, place, token):
    project = ProjectFactory(slug="hostile")
    user = get_user_model().objects.create(username="lea")
    Membership.objects.create(project=project, user=user, role=Role.LEAD)
    client = Client(raise_request_exception=False)
    client.force_login(user)
    content, name = hostile_file(fmt, place, token)
    before = counts()
    response = client.post(
        reverse("annotate:import", args=[project.slug]),
        {"file": SimpleUploadedFile(name, content), "format": "auto"},
    )
    page = response.content.decode()
    assert response.status_code == 400, page[-2000:]
    assert SECOND[fmt.split("-")[1]] in page
    assert "unexpected error" not in page
    assert counts() == before
