"""Reading pairwise preferences from a file: which of two systems' answers to a question a
person preferred, as JSON Lines, JSON or CSV, in the native or the RAGChecker schema.

Native (one object per line, or a CSV with these columns):

    {"question_id": "41", "system_a": "rag@1", "system_b": "rag@2", "annotator": "alice",
     "preference": "B", "strength": 2, "note": "B cites the policy"}

`system_a` / `system_b`: a system as `NAME`, `NAME@VERSION` or {"name", "version"}. The
preference is `A`, `B` or `tie` (any case; `equal` and `same` read as a tie) and `strength`,
optional, grades it from −2 (A clearly better) through 0 (a tie) to 2 (B clearly better), the
scale of RAGChecker's human study. Either may be left out when the other is given; when both
are given they must agree in direction.

RAGChecker (`data/meta_evaluation/human_labeled_data.json`): each record holds `query_id`,
`model1.model_name`, `model2.model_name` and the −2..2 grades `correctness_label`,
`completeness_label` and `overall_label` (model2 against model1: positive means model2 better).
model1 is read as A and model2 as B; the grade read is `overall_label` unless another is
chosen. Its records name no annotator: an `annotator` field is used when present, else the
n-th record on one question and pair of systems is "annotator n" (the file lists each
instance's two annotators in turn, the order its `meta_eval.py` reads them in).

Nothing here touches the database: `interchange.services.preference_imports` resolves the
systems and answers and writes.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO

from interchange.importers.fields import FieldReader, csv_row_decode, join, shown
from interchange.importers.issues import IssueLog
from interchange.importers.native import annotator_read
from interchange.importers.sources import container_detect, head_read, raw_records
from interchange.importers.systems import SystemIn, system_from_option, system_parse

FORMATS = ("auto", "native", "ragchecker")
RAGCHECKER_ASPECTS = ("overall_label", "correctness_label", "completeness_label")
NOTE_CHARS = 5000
#: A preferences file is one study: a few thousand marks. Far more is a wrong file.
MOST_RECORDS = 200_000

NATIVE_FIELDS = frozenset(
    {"question_id", "system_a", "system_b", "annotator", "preference", "strength", "note"}
)
_PREFERENCES = {"a": "A", "b": "B", "tie": "tie", "equal": "tie", "same": "tie"}


@dataclass(frozen=True)
class PreferenceIn:
    """One mark as the file gave it: `preferred` "A", "B" or "tie"; `strength` the grade's
    size (0 a tie, 1 slightly, 2 clearly better) or None when the file gave no grade."""

    location: str
    question_key: str
    system_a: SystemIn
    system_b: SystemIn
    annotator: str
    preferred: str
    strength: int | None
    note: str


def preferences_format_detect(record: dict) -> str | None:
    keys = set(record)
    if {"model1", "model2"} <= keys:
        return "ragchecker"
    if {"system_a", "system_b"} <= keys:
        return "native"
    return None


def _system(reader: FieldReader, raw: Any, path: str) -> SystemIn | None:
    """A system as NAME@VERSION (the command line's and CSV's spelling), else as the answer
    files give one (`system_parse`: a name or {"name", "version"})."""
    if isinstance(raw, str) and "@" in raw:
        try:
            return system_from_option(raw)
        except ValueError as error:
            reader.fail(path, str(error))
            return None
    return system_parse(reader, raw, path)


def _strength(reader: FieldReader, raw: Any, path: str) -> int | None:
    """A −2..2 grade as an integer, or None (with the problem noted)."""
    if isinstance(raw, str):
        text = raw.strip()
        try:
            number = float(text) if len(text) <= 20 else None
        except ValueError:
            number = None
        if number is None:
            reader.fail(path, f"expected a whole number from -2 to 2, got {shown(raw)}")
            return None
        raw = number
    if isinstance(raw, bool) or not isinstance(raw, int | float):
        reader.fail(path, f"expected a whole number from -2 to 2, got {shown(raw)}")
        return None
    if not (-2 <= raw <= 2) or raw != int(raw):
        reader.fail(path, f"expected a whole number from -2 to 2, got {shown(raw)}")
        return None
    return int(raw)


def _direction(grade: int) -> str:
    return "B" if grade > 0 else "A" if grade < 0 else "tie"


def _native(reader: FieldReader, record: dict) -> dict | None:
    reader.unknown(record, NATIVE_FIELDS, "")
    question = reader.get(record, "question_id", "", "id", max_length=500)
    annotator = annotator_read(reader, record, "")
    systems = [
        _system(reader, record[key], key) if key in record else None
        for key in ("system_a", "system_b")
    ]
    for key in ("system_a", "system_b"):
        if key not in record:
            reader.fail(key, "missing (this field is required)")
    preferred = None
    raw = record.get("preference")
    if raw is not None:
        if isinstance(raw, str) and raw.strip().lower() in _PREFERENCES:
            preferred = _PREFERENCES[raw.strip().lower()]
        else:
            reader.fail("preference", f"expected A, B or tie, got {shown(raw)}")
            return None
    grade = None
    if record.get("strength") not in (None, ""):
        grade = _strength(reader, record["strength"], "strength")
        if grade is None:
            return None
    if preferred is None and grade is None and "preference" not in record:
        reader.fail("preference", "missing: give the preference (A, B or tie) or a strength")
        return None
    if preferred is not None and grade is not None and _direction(grade) != preferred:
        reader.fail(
            "strength",
            f"{grade} grades {_direction(grade)} but the preference is {preferred}: "
            "a positive strength means B is better, a negative one A, 0 a tie",
        )
        return None
    note = reader.get(record, "note", "", "string", required=False, default="")
    if note is not None and len(note) > NOTE_CHARS:
        reader.fail("note", f"is {len(note):,} characters long; at most {NOTE_CHARS} fit")
        return None
    if question is None or annotator is None or None in systems or note is None:
        return None
    return {
        "question": question,
        "systems": systems,
        "annotator": annotator,
        "preferred": preferred if preferred is not None else _direction(grade),
        "grade": grade,
        "note": note,
    }


def _ragchecker(reader: FieldReader, record: dict, aspect: str) -> dict | None:
    question = reader.get(record, "query_id", "", "id", max_length=500)
    systems = []
    for key in ("model1", "model2"):
        model = reader.get(record, key, "", "object")
        name = None
        if model is not None:
            name = reader.get(model, "model_name", key, "string", max_length=100)
        if name is not None and not name.strip():
            reader.fail(join(key, "model_name"), "must not be empty")
            name = None
        systems.append(SystemIn(name=name.strip()) if name is not None else None)
    grade = None
    if aspect not in record:
        reader.fail(aspect, "missing (this field is required)")
    else:
        grade = _strength(reader, record[aspect], aspect)
    annotator = None
    if record.get("annotator") is not None:
        annotator = annotator_read(reader, record, "")
        if annotator is None:
            return None
    if question is None or None in systems or grade is None:
        return None
    return {
        "question": question,
        "systems": systems,
        "annotator": annotator,
        "preferred": _direction(grade),
        "grade": grade,
        "note": "",
    }


class PreferenceReader:
    """The marks of one file, in order: iterate for `PreferenceIn`s; every problem goes to
    `issues` with its line and field."""

    def __init__(
        self,
        handle: BinaryIO,
        name: str,
        *,
        issues: IssueLog,
        format: str = "auto",
        aspect: str = "overall_label",
    ):
        if format not in FORMATS:
            raise ValueError(f"Unknown format {format!r}: use one of {', '.join(FORMATS)}.")
        if aspect not in RAGCHECKER_ASPECTS:
            raise ValueError(
                f"Unknown aspect {aspect!r}: use one of {', '.join(RAGCHECKER_ASPECTS)}."
            )
        self.handle, self.name, self.issues = handle, name, issues
        self.format, self.aspect = format, aspect
        self.container = container_detect(head_read(handle), name)
        # (question, system A, system B) → how many anonymous RAGChecker marks it had so far.
        self._seen: dict[tuple, int] = {}

    def __iter__(self) -> Iterator[PreferenceIn]:
        for number, raw in enumerate(raw_records(self.handle, self.container, self.issues), 1):
            if number > MOST_RECORDS:
                self.issues.add(
                    raw.location, "", f"more than {MOST_RECORDS:,} preferences: split the file"
                )
                return
            if not isinstance(raw.value, dict):
                self.issues.add(raw.location, "", "expected a JSON object (one preference)")
                continue
            if self.format == "auto":
                detected = preferences_format_detect(raw.value)
                if detected is None:
                    fields = ", ".join(sorted(map(str, raw.value))[:12]) or "none"
                    self.issues.add(
                        raw.location,
                        "",
                        f"cannot tell the format from the fields ({fields}): expected native "
                        "(question_id, system_a, system_b, annotator, preference, strength) "
                        "or ragchecker (query_id, model1, model2, overall_label)",
                    )
                    return
                self.format = detected
            found = self._record(raw)
            if found is not None:
                yield found

    def _record(self, raw) -> PreferenceIn | None:
        reader = FieldReader(raw.location)
        record = raw.value
        if raw.from_csv:
            record = csv_row_decode(record, structured=set(), reader=reader)
        if self.format == "native":
            parsed = _native(reader, record)
        else:
            parsed = _ragchecker(reader, record, self.aspect)
        self.issues.extend(reader.issues)
        if parsed is None or reader.issues:
            return None
        a, b = parsed["systems"]
        if a.key == b.key:
            self.issues.add(
                raw.location, "system_b", f"names the same system as system_a ({a.name})"
            )
            return None
        annotator = parsed["annotator"]
        if annotator is None:  # RAGChecker's anonymous annotators, numbered per pair
            key = (parsed["question"], a.key, b.key)
            self._seen[key] = self._seen.get(key, 0) + 1
            annotator = f"annotator-{self._seen[key]}"
        grade = parsed["grade"]
        return PreferenceIn(
            location=raw.location,
            question_key=parsed["question"],
            system_a=a,
            system_b=b,
            annotator=annotator,
            preferred=parsed["preferred"],
            strength=None if grade is None else abs(grade),
            note=parsed["note"],
        )
