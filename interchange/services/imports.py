"""Importing answers with their pile, claims, labels, gold and judge verdicts from a file.

The file streams through `interchange.importers.AnswerReader` record by record; valid answers are
written in batches of `BATCH_ANSWERS` by `annotate.bulk_insert.RowsInserter` (PostgreSQL's COPY,
with the ids that later rows point to reserved from the sequences first; bulk_create on SQLite),
all inside one transaction. Any problem anywhere in the file (up to `MAX_ISSUES` are collected)
rolls the whole import back: a failed file leaves nothing behind. Memory holds one batch plus
the set of answer ids seen (to catch duplicates within the file), never the whole file.

The steps: `import_systems` (the answers' systems), `import_existing` (ids already in the
project), `import_annotators` (who a label is attributed to), `import_judges` (the imported
runs), `import_rows` (the batch written table by table); this module drives them.
"""

from collections.abc import Callable
from dataclasses import asdict, dataclass, field

from django.db import transaction
from django.db.models import F

from annotate.bulk_insert import RowsInserter
from annotate.models import Answer, Claim, Gold, Label, Passage, Project
from annotate.services.answers import answer_next_position, answers_with_piles_insert
from annotate.services.queue import labelling_counters_refresh
from annotate.services.review import gold_unanimous_bulk
from interchange.importers import AnswerIn, AnswerReader, binary_source
from interchange.importers.issues import ImportFailed, ImportIssue, IssueLog, TooManyIssues
from interchange.importers.systems import SystemIn
from interchange.services import import_rows
from interchange.services.import_annotators import (
    AnnotatorMapError,
    Annotators,
    annotator_map_check,
    annotator_map_parse,
)
from interchange.services.import_existing import answers_not_stored
from interchange.services.import_judges import ImportedJudges
from interchange.services.import_systems import Systems
from interchange.sql import project_import_lock, statistics_refresh
from monitor.services import answers_arrived

BATCH_ANSWERS = 1000
# From this many answers on, an import refreshes the planner statistics of what it wrote.
STATISTICS_MIN_ANSWERS = 2_500

__all__ = [
    "BATCH_ANSWERS",
    "AnnotatorMapError",
    "ImportFailed",
    "ImportResult",
    "annotator_map_check",
    "annotator_map_parse",
    "answers_import",
]


@dataclass
class ImportResult:
    format: str = ""
    container: str = ""
    answers: int = 0
    passages: int = 0
    claims: int = 0
    labels: int = 0
    gold: int = 0
    judge_verdicts: int = 0
    judge_runs: int = 0
    # Distinct annotator names in the file's labels and gold, and how many of them the owner
    # mapped to members; the others are the project's imported annotators. Nothing here
    # depends on which accounts exist.
    annotator_names: int = 0
    annotator_names_mapped: int = 0
    # Fields the format does not know, ignored: "line 3, field claims[0].confidence: unknown
    # field, ignored" (the first MAX_ISSUES), and how many there were in all.
    warnings: list[str] = field(default_factory=list)
    warnings_total: int = 0
    # With `idempotent`: answers already in the project, identical, so left as they are.
    existing: int = 0

    def as_dict(self) -> dict:
        return asdict(self)

    def __str__(self) -> str:
        def count(n: int, noun: str) -> str:
            return f"{n} {noun}" if n == 1 else f"{n} {noun}s"

        return (
            f"{count(self.answers, 'answer')} ({self.format}, {self.container}): "
            f"{count(self.passages, 'passage')}, {count(self.claims, 'claim')}, "
            f"{count(self.labels, 'label')}, {self.gold} gold, "
            f"{count(self.judge_verdicts, 'judge verdict')} in "
            f"{count(self.judge_runs, 'judge run')}; "
            f"{count(self.annotator_names, 'annotator name')}"
            f" ({self.annotator_names_mapped} mapped to members)."
        )


class _Writer:
    """Collects valid answers into batches and writes each batch while the file is clean:
    the answers' systems (`Systems`), annotators (`Annotators`) and imported judges
    (`ImportedJudges`) resolved as they come, the rows by `import_rows`."""

    def __init__(
        self,
        *,
        project: Project,
        user,
        issues: IssueLog,
        result: ImportResult,
        source: str,
        progress: Callable[[int], None] | None,
        mapped: dict[str, int],
        system: SystemIn | None = None,
        idempotent: bool = False,
    ):
        self.project = project
        self.systems = Systems(project=project, issues=issues, default=system)
        self.idempotent = idempotent
        self.progress = progress
        self.issues = issues
        self.result = result
        self.batch: list[AnswerIn] = []
        self.seen: dict[str, str] = {}  # answer id -> where it first appeared
        self.next_position = answer_next_position(project_id=project.pk)
        self.checked = 0
        self.annotators = Annotators(project=project, mapped=mapped)
        self.judges = ImportedJudges(project=project, user=user, source=source, issues=issues)
        self.rows = RowsInserter()

    def add(self, answer: AnswerIn) -> None:
        self.systems.assign(answer)
        first = self.seen.get(answer.external_id)
        if first is not None:
            self.issues.add(
                answer.location,
                "id",
                f"duplicate id: answer id {answer.external_id!r} already appears at {first}",
            )
            return
        self.seen[answer.external_id] = answer.location
        self.batch.append(answer)
        if len(self.batch) >= BATCH_ANSWERS:
            self.flush()

    def flush(self) -> None:
        batch, self.batch = self.batch, []
        if not batch:
            return
        checked = len(batch)
        batch, existing = answers_not_stored(
            batch,
            project=self.project,
            idempotent=self.idempotent,
            issues=self.issues,
            judges=self.judges,
        )
        self.result.existing += existing
        if not self.issues and batch:
            self.systems.resolve(batch)
        if not self.issues and batch:
            self._write(batch)
        self.checked += checked
        if self.progress is not None:
            self.progress(self.checked)

    def _write(self, batch: list[AnswerIn]) -> None:
        """Write one batch, table by table; each step works on the whole batch."""
        rows, who = self.rows, self.annotators.who
        systems = self.systems.ids
        answer_ids, piles = answers_with_piles_insert(
            rows,
            project_id=self.project.pk,
            answers=batch,
            first_position=self.next_position,
            system_ids=[systems[a.system.key] if a.system else None for a in batch],
        )
        self.next_position += len(batch)
        claim_ids = import_rows.claims_write(rows, self.project, batch, answer_ids)
        self.annotators.add(
            {label.annotator for a in batch for c in a.claims for label in c.labels}
            | {c.gold.decided_by for a in batch for c in a.claims if c.gold and c.gold.decided_by}
        )
        citations, labels = import_rows.citations_and_labels(
            batch, answer_ids, piles, claim_ids, who=who, issues=self.issues
        )
        golds, verdicts = import_rows.gold_and_verdicts(
            batch, claim_ids, who=who, judges=self.judges
        )
        if self.issues:
            return
        import_rows.dependents_write(rows, citations, labels, golds, verdicts)
        result = self.result
        result.answers += len(batch)
        result.passages += sum(len(pile) for pile in piles)
        result.claims += len(claim_ids)
        result.labels += len(labels)
        result.gold += len(golds)
        result.judge_verdicts += len(verdicts)

    def finish(self) -> None:
        self.result.judge_runs = self.judges.finish()
        self.result.annotator_names = len(self.annotators.names_seen)
        self.result.annotator_names_mapped = self.annotators.names_mapped


@transaction.atomic
def answers_import(
    *,
    project: Project,
    path_or_file,
    format: str = "auto",
    user=None,
    progress: Callable[[int], None] | None = None,
    annotator_map: dict[str, str] | None = None,
    system: SystemIn | None = None,
    idempotent: bool = False,
    most: tuple[int, str] | None = None,
) -> ImportResult:
    """Import every answer of a file into `project`, or nothing: raise ImportFailed with the
    problems (each naming its line or record and field) when anything in the file is wrong.

    Labels (and gold's `decided_by`) are attributed to the file's annotator names as the
    project's imported annotators ("alice (imported)"), never to an account, except the names
    `annotator_map` maps to a member's username (checked by `annotator_map_check`:
    AnnotatorMapError, nothing imported, for a username that is no member, or when `user` is
    given and is not an owner). An import never creates users nor adds members.

    `path_or_file` is a path or a binary file object (an UploadedFile); `format` is auto,
    native, ragas or ragchecker. `progress(n)` is called after each batch with the number of
    answers read and checked so far.

    `system` (the command's `--system`, the form's field) is the system of every answer that
    names none; a RAGAS or RAGChecker id then becomes the answer's question key and the answer
    is id'd "<system>:<id>" (see `AnswerIn.id_is_question`).

    `idempotent` (the API's answer upload): an answer whose id is already in the project is
    left alone and counted in `existing` if its text, question, fields, metadata and pile are
    those stored (its claims, labels and verdicts are not compared: they change as the audit
    goes on), and is an issue naming the field otherwise. Imports into one project then take
    turns (a PostgreSQL advisory lock held to the end of the transaction), so the same batch
    sent by several clients at once is written once. `most` = (n, "per request") caps the
    number of answers below the operator's per-file limit.
    """
    mapped = annotator_map_check(project=project, annotator_map=annotator_map or {}, user=user)
    if idempotent:
        project_import_lock(project_id=project.pk)
    issues = IssueLog()
    result = ImportResult()
    with binary_source(path_or_file) as (handle, name):
        reader = AnswerReader(
            handle,
            name,
            format=format,
            issues=issues,
            quote_required=project.quote_required,
            most=most,
        )
        result.container = reader.container
        writer = _Writer(
            project=project,
            user=user,
            issues=issues,
            result=result,
            source=name,
            progress=progress,
            mapped=mapped,
            system=system,
            idempotent=idempotent,
        )
        _answers_read(reader, writer)
        result.format = reader.format
        result.warnings = [str(warning) for warning in reader.warnings]
        result.warnings_total = reader.warnings_total
    if issues:
        raise ImportFailed(issues.issues, truncated=issues.truncated)
    if result.answers == 0 and result.existing == 0:
        raise ImportFailed([ImportIssue("the file", "", "holds no answers")])
    writer.finish()
    _import_finish(project=project, result=result)
    return result


def _answers_read(reader: AnswerReader, writer: _Writer) -> None:
    """Every answer of the file through the writer, until the end or too many issues."""
    try:
        for answer in reader:
            writer.add(answer)
        writer.flush()
    except TooManyIssues:
        pass


def _import_finish(*, project: Project, result: ImportResult) -> None:
    """What a written import brings up to date: the project's answer count, the planner
    statistics, the labelling counters and unanimous gold."""
    # The project page paginates by this stored total instead of counting answers.
    Project.objects.filter(pk=project.pk).update(answers_count=F("answers_count") + result.answers)
    answers_arrived(project_id=project.pk)  # monitored streams (issue 29) take the new claims
    if result.labels:
        statistics_refresh(Answer, Passage, Claim, Label, Gold)
        _labels_imported(project=project, result=result)
    elif result.answers >= STATISTICS_MIN_ANSWERS:
        statistics_refresh(Answer, Passage, Claim)


def _labels_imported(*, project: Project, result: ImportResult) -> None:
    """Labels came in by bulk insert: bring the labelling counters and unanimous gold up to
    date, as `label_save` does one label at a time."""
    labelling_counters_refresh(project=project)
    result.gold += gold_unanimous_bulk(project=project)
