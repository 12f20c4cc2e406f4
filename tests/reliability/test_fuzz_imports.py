"""Property-based fuzzing of every import format (hypothesis): 1,000 generated files per format
for `make reliability` (tests/RELIABILITY.md), 250 in `make test`, new ones on every run
(no example database, no fixed seed), so CI keeps widening what has been tried
(RELIABILITY_FUZZ_EXAMPLES sets the number).

For every file: no exception but ImportFailed escapes the import service; a rejected file names
the line (or record) and field of each problem and leaves every table as it was (the valid
record before the bad one is not half-imported); the mutations that must be refused are.
A sample also goes through the upload view (never a server error) and through PostgreSQL.
"""

import os
import re

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import transaction
from django.test import Client
from django.urls import reverse
from hypothesis import HealthCheck, given, settings

from annotate.models import Answer, Claim, Gold, Label, LabelHistory, Membership, Passage
from interchange.services.imports import ImportFailed, answers_import
from judges.models import Judge, JudgeRun, JudgeVerdict
from tests.factories import MembershipFactory, ProjectFactory
from tests.reliability.fuzzing import FORMATS, MUST_REJECT, file_strategy

TABLES = [
    Answer,
    Passage,
    Claim,
    Label,
    LabelHistory,
    Gold,
    Judge,
    JudgeRun,
    JudgeVerdict,
    Membership,
    get_user_model(),
]
LOCATION = re.compile(r"^(line \d+|record \d+( \(line \d+\))?)")
FUZZ_EXAMPLES = int(os.environ.get("RELIABILITY_FUZZ_EXAMPLES", "250"))


def counts() -> dict:
    return {model.__name__: model.objects.count() for model in TABLES}


def _clear(project) -> None:
    """Remove an accepted file's answers (labels first: their evidence protects passages)."""
    Label.objects.filter(claim__project=project).delete()
    Answer.objects.filter(project=project).delete()


class _Rollback(Exception):
    pass


def check_file(project, content, name, mutation, path) -> str:
    """Import one generated file; assert the properties; return "accepted" or "rejected"."""
    before = counts()
    issues, after_rejection = None, None
    try:
        with transaction.atomic():
            try:
                answers_import(project=project, path_or_file=SimpleUploadedFile(name, content))
            except ImportFailed as failed:
                issues, after_rejection = failed.issues, counts()
            raise _Rollback  # keep the database as it was for the next example
    except _Rollback:
        pass
    assert counts() == before
    outcome = "accepted" if issues is None else "rejected"
    if mutation in MUST_REJECT:
        assert outcome == "rejected", f"{mutation} {path} was accepted"
    if mutation == "none":
        assert outcome == "accepted", "an unmutated file was refused"
    if issues is None:
        return outcome
    shown = "\n".join(str(issue) for issue in issues)
    assert after_rejection == before, f"{mutation} {path}: half-imported"
    assert issues
    for issue in issues:
        assert LOCATION.match(issue.location), f"no line/record: {issue}"
    if mutation in ("drop", "wrong_type", "verdict", "quote_outside"):
        assert any(issue.field for issue in issues), f"{mutation} {path}: no field named: {shown}"
        assert any(
            issue.location.startswith(("line 2", "line 3", "record 2")) for issue in issues
        ), f"{mutation} {path}: the bad record's line is not named: {shown}"
    return outcome


@pytest.mark.django_db
@pytest.mark.parametrize("fmt", FORMATS)
def test_fuzz_import_service(fmt, figures):
    project = ProjectFactory(slug=f"fuzz-{fmt}")
    seen = {"accepted": 0, "rejected": 0}

    @settings(
        max_examples=FUZZ_EXAMPLES,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(file_strategy(fmt))
    def run(generated):
        seen[check_file(project, *generated)] += 1

    run()
    assert seen["rejected"] > FUZZ_EXAMPLES / 4
    assert seen["accepted"] > 0  # the controls
    figures.add(
        "fuzzing",
        **{f"{fmt} files": sum(seen.values()), f"{fmt} rejected": seen["rejected"]},
    )


@pytest.mark.django_db
@pytest.mark.parametrize("fmt", FORMATS)
def test_fuzz_through_the_upload_view(fmt, figures):
    """A smaller sample through the HTTP upload: 200 or 400 with the error list, never 500."""
    project = ProjectFactory(slug=f"fuzzview-{fmt}")
    lead = MembershipFactory(project=project, role="lead").user
    client = Client(raise_request_exception=False)
    client.force_login(lead)
    url = reverse("annotate:import", args=[project.slug])
    n = {"files": 0}

    @settings(max_examples=40, deadline=None, database=None)
    @given(file_strategy(fmt))
    def run(generated):
        content, name, mutation, path = generated
        before = counts()
        response = client.post(url, {"file": SimpleUploadedFile(name, content), "format": "auto"})
        n["files"] += 1
        assert response.status_code in (200, 400), (mutation, path, response.status_code)
        if response.status_code == 400:
            assert counts() == before
            assert re.search(r"(line|record) \d+", response.content.decode()), (mutation, path)
        else:
            _clear(project)

    run()
    figures.add("fuzzing", **{f"{fmt} via upload view": n["files"]})


@pytest.mark.postgres
@pytest.mark.parametrize("fmt", ["native-jsonl", "ragchecker-json"])
def test_fuzz_sample_on_postgresql(fmt, transactional_db, figures):
    """Real transactions (no wrapping test transaction): a rejected file commits nothing."""
    project = ProjectFactory(slug=f"fuzzpg-{fmt}")
    n = {"files": 0}

    @settings(max_examples=60, deadline=None, database=None)
    @given(file_strategy(fmt))
    def run(generated):
        content, name, mutation, path = generated
        before = counts()
        try:
            answers_import(project=project, path_or_file=SimpleUploadedFile(name, content))
        except ImportFailed:
            assert counts() == before, (mutation, path)
        else:
            assert mutation not in MUST_REJECT
            _clear(project)
        n["files"] += 1

    run()
    figures.add("fuzzing", **{f"{fmt} on PostgreSQL": n["files"]})


@pytest.mark.django_db
@pytest.mark.parametrize("fmt", ["ragas-jsonl", "native-json"])
def test_a_nul_character_is_a_field_error_not_a_database_error(fmt):
    """Found by the fuzzing above on PostgreSQL, which cannot store U+0000 in text."""
    from tests.reliability.fuzzing import RECORD, serialise

    project = ProjectFactory(slug=f"nul-{fmt}")
    bad = RECORD[fmt](2)
    key = "response" if fmt.startswith("ragas") else "question"
    bad[key] = "fine\x00 not fine"
    content, name = serialise(fmt, [RECORD[fmt](1), bad])
    before = counts()
    with pytest.raises(ImportFailed) as failed:
        answers_import(project=project, path_or_file=SimpleUploadedFile(name, content))
    assert counts() == before
    (issue,) = failed.value.issues
    assert issue.field == key
    assert issue.location.startswith(("line 2", "record 2"))
    assert "NUL" in issue.message


# -- hostile JSON: what a parser chokes on, anywhere in the record --------------------------


def _hostile_tokens():
    from hypothesis import strategies as st

    depth = st.sampled_from([1_000, 5_000, 100_000])
    return st.one_of(
        depth.map(lambda n: ("nested", "[" * n + "]" * n)),
        depth.map(lambda n: ("nested", '{"a":' * n + "0" + "}" * n)),
        st.integers(min_value=4_301, max_value=20_000).map(lambda n: ("digits", "7" * n)),
        st.sampled_from(["NaN", "Infinity", "-Infinity", "1e400", "-2E+999"]).map(
            lambda token: ("number", token)
        ),
    )


@pytest.mark.django_db
@pytest.mark.parametrize("fmt", FORMATS)
def test_fuzz_hostile_json_is_refused_by_line_and_field(fmt, figures):
    """Deep nesting, 5,000-digit integers and non-finite numbers at any field of the second
    record: refused (a CSV text cell may hold them as text), never an exception, the field
    named, the first record not half-imported."""
    import copy

    from hypothesis import strategies as st

    from tests.reliability.fuzzing import PATHS, RECORD, schema_of, serialise

    project = ProjectFactory(slug=f"hostile-{fmt}")
    seen = {"files": 0, "rejected": 0}

    @settings(max_examples=max(30, FUZZ_EXAMPLES // 10), deadline=None, database=None)
    @given(st.sampled_from(PATHS[schema_of(fmt)]), _hostile_tokens())
    def run(path, hostile):
        kind, token = hostile
        bad = copy.deepcopy(RECORD[fmt](2))
        node = bad
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = "__HOSTILE__"
        content, name = serialise(fmt, [RECORD[fmt](1), bad])
        # In CSV a top-level text field is a cell of its own (text), not JSON.
        csv_text_cell = fmt.endswith("csv") and b'""__HOSTILE__""' not in content
        if fmt.endswith("csv"):
            cell = token.replace('"', '""').encode()
            content = content.replace(b'""__HOSTILE__""', cell)
            content = content.replace(b"__HOSTILE__", b'"' + cell + b'"')
        else:
            content = content.replace(b'"__HOSTILE__"', token.encode())
        before = counts()
        seen["files"] += 1
        try:
            with transaction.atomic():
                try:
                    answers_import(project=project, path_or_file=SimpleUploadedFile(name, content))
                except ImportFailed as failed:
                    issues = failed.issues
                    assert counts() == before, (fmt, path, kind)
                else:
                    issues = None
                raise _Rollback
        except _Rollback:
            pass
        if issues is None:
            assert csv_text_cell, f"{fmt} {path} {kind}: accepted"
            return
        seen["rejected"] += 1
        for issue in issues:
            assert LOCATION.match(issue.location), str(issue)
        if csv_text_cell:
            return  # the cell was text: over a length limit, say, not hostile JSON
        where = "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in path).lstrip(".")
        assert any(
            issue.field and (where.startswith(issue.field) or issue.field.startswith(where))
            for issue in issues
        ), f"{fmt} {path} {kind}: field not named: {[str(i) for i in issues]}"

    run()
    assert seen["rejected"] > 0
    figures.add("fuzzing", **{f"{fmt} hostile JSON files": seen["files"]})
