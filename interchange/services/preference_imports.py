"""Importing pairwise preferences (`interchange.importers.preferences`) into a project: the
writer of `annotate.PairwisePreference` for marks that come in a file.

All or nothing. Every mark must name two of the project's systems and a question both
answered (the pair is their first answers to it, the pairwise queue's rule, so a file's marks,
the screen's and the pairwise judge's verdicts are about the same two answers); a mark names
its annotator, kept as the project's `ImportedAnnotator` (never an account). One mark per
annotator and pair: the same annotator on the same pair twice in one file is refused, naming
both lines; a mark already imported is replaced by the file's (so importing a file again
changes nothing, and a corrected file corrects).
"""

from __future__ import annotations

import contextlib
from dataclasses import asdict, dataclass

from django.db import transaction
from django.utils import timezone

from annotate.models import ImportedAnnotator, PairwisePreference, Project, System
from annotate.selectors import first_answers
from interchange.importers.fields import shown
from interchange.importers.issues import ImportFailed, ImportIssue, IssueLog, TooManyIssues
from interchange.importers.preferences import PreferenceIn, PreferenceReader
from interchange.importers.sources import binary_source
from interchange.importers.systems import SystemIn
from metrics.services.compare import system_label


@dataclass
class PreferencesImportResult:
    format: str = ""
    container: str = ""
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    pairs: int = 0
    annotators: int = 0
    system_pairs: list[str] | None = None

    def as_dict(self) -> dict:
        return asdict(self)

    def __str__(self) -> str:
        marks = self.created + self.updated + self.unchanged
        return (
            f"{marks} preference{'s' if marks != 1 else ''} ({self.format}, {self.container}) "
            f"on {self.pairs} pair{'s' if self.pairs != 1 else ''} by {self.annotators} "
            f"annotator{'s' if self.annotators != 1 else ''}: {self.created} new, "
            f"{self.updated} changed, {self.unchanged} unchanged"
            + (f"; {', '.join(self.system_pairs)}" if self.system_pairs else "")
            + "."
        )


class _Systems:
    """The project's systems by name and version, resolving a file's `SystemIn`."""

    def __init__(self, project: Project):
        self.all = list(System.objects.filter(project=project).order_by("id"))

    def known(self) -> str:
        return ", ".join(system_label(s) for s in self.all) or "none"

    def resolve(self, ref: SystemIn) -> tuple[System | None, str]:
        found = [
            s
            for s in self.all
            if s.name == ref.name and (not ref.version or s.version == ref.version)
        ]
        if len(found) == 1:
            return found[0], ""
        if found:
            return None, (
                f"{shown(ref.name)} names several versions: write NAME@VERSION "
                f"(systems of this project: {self.known()})"
            )
        shown_ref = f"{ref.name}@{ref.version}" if ref.version else ref.name
        return None, f"no system {shown(shown_ref)} in this project (systems: {self.known()})"


def preferences_import(
    *, project: Project, path_or_file, format: str = "auto", aspect: str = "overall_label"
) -> PreferencesImportResult:
    """Read the file and write its marks, or raise `ImportFailed` (nothing written) naming
    every problem's line and field."""
    issues = IssueLog()
    marks: list[PreferenceIn] = []
    with binary_source(path_or_file) as (handle, name):
        reader = PreferenceReader(handle, name, issues=issues, format=format, aspect=aspect)
        with contextlib.suppress(TooManyIssues):  # the issues so far say enough
            marks = list(reader)
    result = PreferencesImportResult(format=reader.format, container=reader.container)
    if not marks and not issues:
        raise ImportFailed([ImportIssue("the file", "", "holds no preferences")])
    rows: list[dict] = []
    with contextlib.suppress(TooManyIssues):
        rows = _resolve(project=project, marks=marks, issues=issues)
    if issues:
        raise ImportFailed(issues.issues, truncated=issues.truncated)
    _write(project=project, rows=rows, result=result)
    return result


def _resolve(*, project: Project, marks: list[PreferenceIn], issues: IssueLog) -> list[dict]:
    """Each mark's systems, answers and preferred system, checked; problems go to `issues`."""
    systems = _Systems(project)
    first = first_answers(project=project, system_ids=[s.pk for s in systems.all])
    seen: dict[tuple[str, int, int], str] = {}
    rows = []
    for mark in marks:
        resolved = []
        for field, ref in (("system_a", mark.system_a), ("system_b", mark.system_b)):
            system, problem = systems.resolve(ref)
            if system is None:
                issues.add(mark.location, field, problem)
            resolved.append(system)
        a, b = resolved
        if a is None or b is None:
            continue
        if a.pk == b.pk:
            issues.add(
                mark.location, "system_b", f"names the same system as system_a ({system_label(a)})"
            )
            continue
        answers = {}
        for field, system in (("system_a", a), ("system_b", b)):
            answer = first[system.pk].get(mark.question_key)
            if answer is None:
                issues.add(
                    mark.location,
                    "question_id",
                    f"{system_label(system)} ({field}) has no answer to question "
                    f"{shown(mark.question_key)} in this project: import its answers first",
                )
            answers[system.pk] = answer
        if None in answers.values():
            continue
        low, high = (a, b) if a.pk < b.pk else (b, a)
        key = (mark.annotator, answers[low.pk], answers[high.pk])
        if key in seen:
            issues.add(
                mark.location,
                "annotator",
                f"{shown(mark.annotator)} already marked this pair in {seen[key]} "
                "(one preference per annotator and pair)",
            )
            continue
        seen[key] = mark.location
        preferred = {"A": a, "B": b, "tie": None}[mark.preferred]
        rows.append(
            {
                "annotator": mark.annotator,
                "question_key": mark.question_key,
                "system_1": low,
                "system_2": high,
                "answer_1": answers[low.pk],
                "answer_2": answers[high.pk],
                "preferred_system": preferred,
                "strength": mark.strength,
                "note": mark.note,
            }
        )
    return rows


_COMPARED = ("question_key", "preferred_system_id", "strength", "note")


@transaction.atomic
def _write(*, project: Project, rows: list[dict], result: PreferencesImportResult) -> None:
    names = sorted({row["annotator"] for row in rows})
    known = {a.name: a for a in ImportedAnnotator.objects.filter(project=project, name__in=names)}
    missing = [ImportedAnnotator(project=project, name=n) for n in names if n not in known]
    if missing:
        ImportedAnnotator.objects.bulk_create(missing, ignore_conflicts=True)
        known = {
            a.name: a for a in ImportedAnnotator.objects.filter(project=project, name__in=names)
        }
    stored = {
        (p.imported_annotator_id, p.answer_1_id, p.answer_2_id): p
        for p in PairwisePreference.objects.select_for_update().filter(
            project=project, imported_annotator__in=list(known.values())
        )
    }
    create, update = [], []
    for row in rows:
        annotator = known[row["annotator"]]
        values = {
            "project": project,
            "question_key": row["question_key"],
            "system_1": row["system_1"],
            "system_2": row["system_2"],
            "answer_1_id": row["answer_1"],
            "answer_2_id": row["answer_2"],
            "left_system": None,
            "imported_annotator": annotator,
            "choice": PairwisePreference.Choice.IMPORT,
            "preferred_system": row["preferred_system"],
            "strength": row["strength"],
            "note": row["note"],
        }
        old = stored.get((annotator.pk, row["answer_1"], row["answer_2"]))
        if old is None:
            create.append(PairwisePreference(**values))
            continue
        fresh = PairwisePreference(**values)
        if all(getattr(old, f) == getattr(fresh, f) for f in _COMPARED):
            result.unchanged += 1
            continue
        for f in ("preferred_system", "strength", "note", "question_key"):
            setattr(old, f, getattr(fresh, f))
        old.changed_at = timezone.now()  # bulk_update does not apply auto_now
        update.append(old)
    PairwisePreference.objects.bulk_create(create, batch_size=1000)
    if update:
        PairwisePreference.objects.bulk_update(
            update, ["preferred_system", "strength", "note", "question_key", "changed_at"]
        )
    result.created, result.updated = len(create), len(update)
    result.pairs = len({(r["answer_1"], r["answer_2"]) for r in rows})
    result.annotators = len(names)
    result.system_pairs = sorted(
        {f"{system_label(r['system_1'])} vs {system_label(r['system_2'])}" for r in rows}
    )
