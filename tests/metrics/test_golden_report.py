"""Golden files: the demo project's report JSON and audit card (JSON and CSV), byte for byte.

They pin what `manage.py report` and `manage.py export_audit` print for the demo
(`manage.py demo_load`: two analysts' labels and the offline baseline judge), so a change in
how the report is assembled cannot silently move a figure, a key or a sentence.

Normalised before comparing, and only these, because they change from run to run on the same
data: the report's `computed_at` and the card's `date` (the clock), and `labels_at_compute`
(the newest label-history row id, which depends on what the database created before). A float
in the JSON may differ from the golden one in its last bits only (relative 1e-12: BLAS and
numpy sums round differently on different CPUs), and so may a float in the card's CSV, which
keeps full precision too; anything else is a difference.

To regenerate after an intended change of the report: `FA_UPDATE_GOLDEN=1 pytest <this file>`,
then review the diff of tests/metrics/golden/ like code.

The sentences' figures follow the pages' one rounding rule (metrics/format.py: whole percents,
halves up on the decimal a reader sees): the baseline judge agrees with gold on exactly 62.5% of
the demo's audited claims, so its warning reads "63%" (it read "62%" under Python's rounding,
ties to even, before the rule; nothing else in the golden files moved).
"""

import csv
import difflib
import io
import json
import math
import os
import re
from pathlib import Path

import pytest
from django.core.management import call_command

from judges.models import JudgeRun, JudgeVerdict

pytestmark = pytest.mark.django_db

GOLDEN = Path(__file__).parent / "golden"
CLOCK = "<computed_at>"
LABEL_ID = "<labels_at_compute>"


@pytest.fixture
def demo(django_capture_on_commit_callbacks):
    """The demo project with its baseline judge run done (the run starts on commit), on the
    judge's own threads: verdicts are written in the order the calls finish, which the report
    must not depend on (see the last test)."""
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        call_command("demo_load", stdout=io.StringIO())
    assert JudgeRun.objects.filter(project__slug="demo").count() == 1
    for callback in callbacks:
        callback()
    assert JudgeVerdict.objects.filter(run__project__slug="demo").exists()


def _command(*args: str) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def _normalise_json(text: str, clock_keys: tuple[str, ...]) -> str:
    """The command's own bytes, with only the run-dependent values replaced in place."""
    parsed = json.loads(text)
    for key in clock_keys:
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT[\d:.]+\+00:00", parsed[key]), parsed[key]
        text = text.replace(f'"{key}": "{parsed[key]}"', f'"{key}": "{CLOCK}"', 1)
    if "labels_at_compute" in parsed:
        assert isinstance(parsed["labels_at_compute"], int)
        text = text.replace(
            f'"labels_at_compute": {parsed["labels_at_compute"]}',
            f'"labels_at_compute": "{LABEL_ID}"',
            1,
        )
    return text


def _normalise_csv(text: str) -> str:
    lines = text.splitlines(keepends=True)
    dated = [i for i, line in enumerate(lines) if line.startswith("date,")]
    assert len(dated) == 1, "the card CSV has one date row"
    # The date row keeps the CSV's four columns (field, value, low, high).
    assert lines[dated[0]].rstrip("\r\n").count(",") == 3, lines[dated[0]]
    ending = "\r\n" if lines[dated[0]].endswith("\r\n") else "\n"
    lines[dated[0]] = f"date,{CLOCK},,{ending}"
    return "".join(lines)


def _close(a, b) -> bool:
    """Equal, but a float may differ in its last bits (rel. 1e-12): BLAS and numpy's SIMD sums
    round differently on different CPUs (one design effect read 0.8128518342546482 on the
    machine that wrote the golden files and ...481 on another). Every key, string, integer,
    null and the order of keys must still match exactly."""
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-15)
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_close(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def _csv_cells(text: str) -> list:
    """The CSV's cells, a cell that reads as a float as that float (the card's CSV keeps
    full precision, so its floats may differ in their last bits as the JSON's do)."""

    def cell(value: str):
        try:
            return float(value) if "." in value or "e" in value else value
        except ValueError:
            return value

    return [[cell(value) for value in row] for row in csv.reader(io.StringIO(text))]


def _same_but_last_bits(name: str, text: str, expected: str) -> bool:
    if name.endswith(".csv"):
        return _close(_csv_cells(text), _csv_cells(expected))
    if not name.endswith(".json"):
        return False
    return _close(json.loads(text), json.loads(expected))


def _assert_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("FA_UPDATE_GOLDEN") == "1":
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
    assert path.exists(), f"{path} is missing: regenerate with FA_UPDATE_GOLDEN=1"
    expected = path.read_bytes().decode("utf-8")
    if text != expected and not _same_but_last_bits(name, text, expected):
        diff = difflib.unified_diff(
            expected.splitlines(), text.splitlines(), "golden", "now", lineterm="", n=2
        )
        pytest.fail(f"{name} differs from the golden file:\n" + "\n".join(list(diff)[:80]))


def test_golden_demo_report_json(demo):
    text = _command("report", "--project", "demo", "--format", "json")
    _assert_golden("demo_report.json", _normalise_json(text, ("computed_at",)))


def test_golden_demo_report_with_judge_json(demo):
    text = _command("report", "--project", "demo", "--judge", "baseline", "--format", "json")
    report = json.loads(text)
    assert report["judge"]["n_judged"] > 0, "the baseline run judged the demo's claims"
    _assert_golden("demo_report_baseline.json", _normalise_json(text, ("computed_at",)))


def test_golden_demo_audit_card_json(demo):
    text = _command("export_audit", "--project", "demo", "--judge", "baseline", "--format", "json")
    _assert_golden("demo_audit_card.json", _normalise_json(text, ("date",)))


def test_golden_demo_audit_card_csv(demo):
    text = _command("export_audit", "--project", "demo", "--judge", "baseline", "--format", "csv")
    _assert_golden("demo_audit_card.csv", _normalise_csv(text))


def test_report_does_not_depend_on_the_order_verdicts_were_written(demo):
    """A judge run on several threads writes its verdicts in the order the calls finish. The
    same verdicts written in the reverse order must give the very same report: the fold and
    split assignment follows the claims, not the verdicts' row ids."""
    verdicts = list(JudgeVerdict.objects.filter(run__project__slug="demo").order_by("id"))
    JudgeVerdict.objects.filter(pk__in=[v.pk for v in verdicts]).delete()
    for verdict in verdicts:
        verdict.pk = None
    JudgeVerdict.objects.bulk_create(reversed(verdicts))
    reordered = JudgeVerdict.objects.filter(run__project__slug="demo").order_by("id")
    assert [v.claim_id for v in reordered] == [v.claim_id for v in reversed(verdicts)]
    text = _command("report", "--project", "demo", "--judge", "baseline", "--format", "json")
    _assert_golden("demo_report_baseline.json", _normalise_json(text, ("computed_at",)))


@pytest.mark.parametrize(
    ("now", "same"),
    [
        ('{"a": 0.8128518342546481, "b": [1, "x"]}', True),  # the last bits: the same
        ('{"a": 0.8128518342, "b": [1, "x"]}', False),  # a figure moved in digit 11
        ('{"a": 0.8128518342546482, "b": [2, "x"]}', False),  # an integer
        ('{"a": 0.8128518342546482, "b": [1, "y"]}', False),  # a sentence
        ('{"b": [1, "x"], "a": 0.8128518342546482}', False),  # the order of keys
        ('{"a": 0.8128518342546482, "b": [1, "x"], "c": null}', False),  # a key more
        ('{"a": 1, "b": [1, "x"]}', False),  # a float became an integer
    ],
)
@pytest.mark.django_db(False)
def test_only_a_floats_last_bits_may_differ(now, same):
    expected = '{"a": 0.8128518342546482, "b": [1, "x"]}'
    assert _same_but_last_bits("x.json", now, expected) is same
    assert _same_but_last_bits("x.csv", now, expected) is False


@pytest.mark.parametrize(
    ("now", "same"),
    [
        ("f,v,lo,hi\r\nd,0.8128518342546481,,\r\n", True),  # the last bits: the same
        ("f,v,lo,hi\r\nd,0.8128518342,,\r\n", False),  # a figure moved in digit 11
        ("f,v,lo,hi\r\nd,0.8128518342546482,\r\n", False),  # a column fewer
        ("f,v,lo,hi\r\ne,0.8128518342546482,,\r\n", False),  # a field's name
        ("f,v,lo,hi\r\nd,1,,\r\n", False),  # a float became an integer
    ],
)
@pytest.mark.django_db(False)
def test_only_a_floats_last_bits_may_differ_in_the_card_csv(now, same):
    expected = "f,v,lo,hi\r\nd,0.8128518342546482,,\r\n"
    assert _same_but_last_bits("x.csv", now, expected) is same
