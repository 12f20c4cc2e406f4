"""Importing answers with their pile, claims, labels, gold and judge verdicts from a file.

The file streams through `interchange.importers.AnswerReader` record by record; valid answers are
written in batches of `BATCH_ANSWERS` by `annotate.bulk_insert.RowsInserter` (PostgreSQL's COPY,
with the ids that later rows point to reserved from the sequences first; bulk_create on SQLite),
all inside one transaction. Any problem anywhere in the file (up to `MAX_ISSUES` are collected)
rolls the whole import back: a failed file leaves nothing behind. Memory holds one batch plus
the set of answer ids seen (to catch duplicates within the file), never the whole file.
"""

from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from types import SimpleNamespace as _Row

from django.db import transaction
from django.db.models import F, Max
from django.utils import timezone

from annotate.bulk_insert import RowsInserter
from annotate.models import (
    Answer,
    Claim,
    EvidenceSpan,
    Gold,
    ImportedAnnotator,
    Label,
    LabelHistory,
    Membership,
    Passage,
    Project,
    Role,
    System,
    Verdict,
)
from annotate.queue_order import claim_queue_fields
from annotate.services.labels import (
    HISTORY_STATE_COLUMNS,
    LABEL_STATE_COLUMNS,
    LabelError,
    label_evidence_check,
    label_spans_check,
)
from interchange.importers import AnswerIn, AnswerReader, binary_source
from interchange.importers.issues import ImportFailed, ImportIssue, IssueLog, TooManyIssues
from interchange.importers.systems import SystemIn
from interchange.sql import project_import_lock, statistics_refresh
from judges.models import Backend, Judge, JudgeRun, JudgeVerdict, JudgeVerdictChoice

BATCH_ANSWERS = 1000
IMPORTED_PROMPT_VERSION = "imported"
# From this many answers on, an import refreshes the planner statistics of what it wrote.
STATISTICS_MIN_ANSWERS = 2_500

# The columns each batch writes, in the order `_Writer._write` builds its row tuples; the
# others get their model defaults.
ANSWER_COLUMNS = (
    "project_id",
    "external_id",
    "position",
    "question",
    "text",
    "risk_category",
    "answerable",
    "abstention",
    "reference",
    "metadata",
    "system_id",
    "question_id",
)
PASSAGE_COLUMNS = ("answer_id", "rank", "source_id", "title", "text")
CLAIM_COLUMNS = (
    "project_id",
    "answer_id",
    "text",
    "position",
    "origin",
    "tags",
    "stratum",
    "span_start",
    "span_end",
    "queue_key",
    "labels_required",
)
# A label is a mapped member's (annotator_id) or an imported annotator's: one of the two.
LABEL_COLUMNS = (
    "claim_id",
    "annotator_id",
    "imported_annotator_id",
    *LABEL_STATE_COLUMNS,
    "changed_after_reveal",
)
# A label's history row: its id and action, then the label's own columns.
LABEL_HISTORY_COLUMNS = (
    "label_id_at_time",
    "action",
    "claim_id",
    "annotator_id",
    "imported_annotator_id",
    *HISTORY_STATE_COLUMNS,
    "changed_after_reveal",
)
EVIDENCE_SPAN_COLUMNS = ("label_id", "number", "passage_id", "start", "end", "quote")
GOLD_COLUMNS = (
    "claim_id",
    "verdict",
    "source",
    "reason",
    "decided_by_id",
    "imported_decided_by_id",
)
JUDGE_VERDICT_COLUMNS = ("run_id", "claim_id", "verdict", "confidence", "raw_response")

__all__ = [
    "BATCH_ANSWERS",
    "AnnotatorMapError",
    "ImportFailed",
    "ImportResult",
    "annotator_map_check",
    "annotator_map_parse",
    "answers_import",
]


class AnnotatorMapError(ImportFailed):
    """A mapping of annotator names to members that cannot be applied; the message says why
    (an ImportFailed, so a job records it as the import's problem)."""

    def __init__(self, message: str):
        super().__init__([ImportIssue("the annotator mapping", "", message)])
        self.message = message

    def __str__(self) -> str:
        return self.message


def annotator_map_parse(text: str) -> dict[str, str]:
    """The import form's mapping, one `name = username` per line (blank lines ignored)."""
    mapping: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        name, equals, username = (part.strip() for part in line.partition("="))
        if not equals or not name or not username:
            raise AnnotatorMapError(
                f"Line {number} of the mapping: write it as name = username, got {line.strip()!r}."
            )
        if name in mapping:
            raise AnnotatorMapError(f"Line {number} of the mapping: {name!r} is mapped twice.")
        mapping[name] = username
    return mapping


def annotator_map_check(*, project: Project, annotator_map: dict[str, str], user=None) -> dict:
    """name → user id of the member each name is mapped to; AnnotatorMapError unless every
    username is a member of `project` (of any role) and `user`, when given, is its owner.

    The message for a username that is no member is the same whether or not such an account
    exists, so the form cannot be used to find out which usernames there are.
    """
    if not annotator_map:
        return {}
    if user is not None:
        role = (
            Membership.objects.filter(project=project, user=user)
            .values_list("role", flat=True)
            .first()
        )
        if role != Role.OWNER:
            raise AnnotatorMapError(
                "Only an owner of this project can map annotator names to members; "
                "leave the mapping empty to import the names as imported annotators."
            )
    members = dict(
        Membership.objects.filter(
            project=project, user__username__in=set(annotator_map.values())
        ).values_list("user__username", "user_id")
    )
    for name, username in annotator_map.items():
        if username not in members:
            raise AnnotatorMapError(
                f"{name!r} → {username!r}: {username!r} is not a member of this project. "
                "Add them on the project's settings page first, or leave the name unmapped "
                f"(its labels are then kept as “{name} (imported)”). Nothing was imported."
            )
    return {name: members[username] for name, username in annotator_map.items()}


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
    """Collects valid answers into batches and writes each batch while the file is clean."""

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
        self.system = system  # the import's --system: for answers that name none
        self.system_ids: dict[tuple[str, str], int] = {}
        self.system_seen: dict[tuple[str, str], tuple[dict, str]] = {}  # metadata, where
        self.idempotent = idempotent
        self.progress = progress
        self.user = user
        self.issues = issues
        self.result = result
        self.source = source
        self.batch: list[AnswerIn] = []
        self.seen: dict[str, str] = {}  # answer id -> where it first appeared
        top = project.answers.aggregate(top=Max("position"))["top"]
        self.next_position = 0 if top is None else top + 1
        self.checked = 0
        self.mapped = mapped  # name -> member's user id
        self.imported_ids: dict[str, int] = {}  # name -> ImportedAnnotator id
        self.names_seen: set[str] = set()
        self.judges: dict[str, Judge | None] = {}  # name -> existing imported judge, or None
        self.runs: dict[tuple, JudgeRun] = {}
        self.run_counts: dict[int, Counter] = {}
        self.rows = RowsInserter()

    # -- validation that needs the database --------------------------------------------------

    def add(self, answer: AnswerIn) -> None:
        if answer.system is None and self.system is not None:
            answer.system = self.system
            if answer.id_is_question:
                answer.question_id = answer.external_id
                answer.external_id = f"{self._system_label(self.system)}:{answer.external_id}"
        if answer.system is not None:
            self._system_note(answer)
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

    def _check(self, batch: list[AnswerIn]) -> list[AnswerIn]:
        """The batch's answers to write: an id already in the project is an issue, or, when
        `idempotent`, skipped if the stored answer and pile are the same (counted as existing)
        and an issue naming the first field that differs otherwise."""
        ids = [answer.external_id for answer in batch]
        if self.idempotent:
            stored = _stored_answers(project=self.project, external_ids=ids)
        else:
            stored = dict.fromkeys(
                Answer.objects.filter(project=self.project, external_id__in=ids).values_list(
                    "external_id", flat=True
                )
            )
        new = []
        for answer in batch:
            if answer.external_id in stored:
                if self.idempotent:
                    changed = _answer_difference(answer, stored[answer.external_id])
                    if changed is None:
                        self.result.existing += 1
                        continue
                    self.issues.add(
                        answer.location,
                        changed,
                        f"answer id {answer.external_id!r} already exists in this project "
                        f"with a different {changed}: an answer cannot be changed by sending "
                        "it again (send it under a new id)",
                    )
                    continue
                self.issues.add(
                    answer.location,
                    "id",
                    f"duplicate id: answer id {answer.external_id!r} already exists in this project",
                )
            for claim in answer.claims:
                for verdict in claim.judges:
                    self._judge_check(answer, verdict.name, verdict.field)
            new.append(answer)
        return new

    @staticmethod
    def _system_label(system: SystemIn) -> str:
        return f"{system.name}@{system.version}" if system.version else system.name

    def _system_note(self, answer: AnswerIn) -> None:
        """One system, one metadata: a second record (or the project) describing the same
        name and version otherwise is an error naming both."""
        system = answer.system
        seen = self.system_seen.get(system.key)
        if seen is None:
            self.system_seen[system.key] = (system.metadata, answer.location)
            return
        metadata, where = seen
        if system.metadata and metadata and system.metadata != metadata:
            self.issues.add(
                answer.location,
                "system",
                f"system {self._system_label(system)!r} is described with other metadata "
                f"at {where}; give one system's metadata once (or the same everywhere)",
            )
        elif system.metadata and not metadata:
            self.system_seen[system.key] = (system.metadata, answer.location)

    def _systems_resolve(self, batch: list[AnswerIn]) -> None:
        """The System row of every (name, version) in the batch: the project's, else a new one."""
        for answer in batch:
            system = answer.system
            if system is None or system.key in self.system_ids:
                continue
            metadata, _where = self.system_seen[system.key]
            row = System.objects.filter(
                project=self.project, name=system.name, version=system.version
            ).first()
            if row is None:
                row = System.objects.create(
                    project=self.project,
                    name=system.name,
                    version=system.version,
                    metadata=metadata,
                )
            elif metadata and row.metadata and row.metadata != metadata:
                self.issues.add(
                    answer.location,
                    "system",
                    f"system {self._system_label(system)!r} exists in this project with "
                    f"other metadata ({row.metadata}); use another version or the same metadata",
                )
                continue
            elif metadata and not row.metadata:
                row.metadata = metadata
                row.save(update_fields=["metadata"])
            self.system_ids[system.key] = row.pk

    def _judge_check(self, answer: AnswerIn, name: str, field: str) -> None:
        if name in self.judges:
            return
        judge = Judge.objects.filter(project=self.project, name=name).first()
        if judge is not None and judge.backend != Backend.IMPORTED:
            self.issues.add(
                answer.location,
                f"{field}.name" if field.startswith("claims") else field,
                f"judge {name!r} exists in this project with the {judge.backend} backend; "
                "imported verdicts need a judge name of their own",
            )
            return
        self.judges[name] = judge

    # -- writing ------------------------------------------------------------------------------

    def flush(self) -> None:
        batch, self.batch = self.batch, []
        if not batch:
            return
        checked = len(batch)
        batch = self._check(batch)
        if not self.issues and batch:
            self._systems_resolve(batch)
        if not self.issues and batch:
            self._write(batch)
        self.checked += checked
        if self.progress is not None:
            self.progress(self.checked)

    def _annotators(self, names: set[str]) -> None:
        """Give every name not mapped to a member its imported annotator in the project
        (the existing one, else a new one). Never looks at accounts."""
        self.names_seen |= names
        missing = names - self.mapped.keys() - self.imported_ids.keys()
        if not missing:
            return
        found = dict(
            ImportedAnnotator.objects.filter(project=self.project, name__in=missing).values_list(
                "name", "id"
            )
        )
        created = ImportedAnnotator.objects.bulk_create(
            [
                ImportedAnnotator(project=self.project, name=name)
                for name in sorted(missing - found.keys())
            ]
        )
        if any(row.pk is None for row in created):  # backends without RETURNING
            found = dict(
                ImportedAnnotator.objects.filter(
                    project=self.project, name__in=missing
                ).values_list("name", "id")
            )
        else:
            found.update({row.name: row.pk for row in created})
        self.imported_ids.update(found)

    def _who(self, name: str) -> tuple[int | None, int | None]:
        """(user id, imported annotator id) a name's label or gold is attributed to."""
        if name in self.mapped:
            return self.mapped[name], None
        return None, self.imported_ids[name]

    def _run(self, name: str, version: str, kind: str, run: str, model: str) -> JudgeRun:
        key = (name, version, kind, run)
        if key not in self.runs:
            judge = self.judges.get(name)
            if judge is None:
                judge = Judge.objects.create(
                    project=self.project, name=name, backend=Backend.IMPORTED, model=model
                )
                self.judges[name] = judge
            now = timezone.now()
            self.runs[key] = JudgeRun.objects.create(
                judge=judge,
                project=self.project,
                kind=kind,
                scope=JudgeRun.Scope.ALL,
                status=JudgeRun.Status.DONE,
                backend=Backend.IMPORTED,
                model=model or judge.model,
                prompt_version=version,
                parameters={"imported_from": self.source, "run": run}
                if run
                else {"imported_from": self.source},
                created_by=self.user if getattr(self.user, "pk", None) else None,
                started_at=now,
                finished_at=now,
            )
            self.run_counts[self.runs[key].pk] = Counter()
        return self.runs[key]

    def _write(self, batch: list[AnswerIn]) -> None:
        """Write one batch, table by table; each step below works on the whole batch.

        Split by step (per batch), not per row: the row loops stay inline in each step, so
        the import's hot path makes no extra function call per answer, claim or label."""
        answer_ids = self._answers_write(batch)
        piles = self._passages_write(batch, answer_ids)
        claim_ids = self._claims_write(batch, answer_ids)
        self._annotators(
            {label.annotator for a in batch for c in a.claims for label in c.labels}
            | {c.gold.decided_by for a in batch for c in a.claims if c.gold and c.gold.decided_by}
        )
        citations, labels = self._citations_and_labels(batch, answer_ids, piles, claim_ids)
        golds, verdicts = self._gold_and_verdicts(batch, claim_ids)
        if self.issues:
            return
        self._dependents_write(citations, labels, golds, verdicts)
        result = self.result
        result.answers += len(batch)
        result.passages += sum(len(pile) for pile in piles)
        result.claims += len(claim_ids)
        result.labels += len(labels)
        result.gold += len(golds)
        result.judge_verdicts += len(verdicts)

    def _answers_write(self, batch: list[AnswerIn]) -> list[int]:
        """Insert the batch's answers at the next positions; their ids in batch order."""
        project = self.project
        answer_ids = self.rows.insert(
            Answer,
            ANSWER_COLUMNS,
            [
                (
                    project.pk,
                    answer.external_id,
                    self.next_position + index,
                    answer.question,
                    answer.text,
                    answer.risk_category,
                    answer.answerable,
                    answer.abstention,
                    answer.reference,
                    answer.metadata,
                    self.system_ids[answer.system.key] if answer.system else None,
                    answer.question_id,
                )
                for index, answer in enumerate(batch)
            ],
            ids=True,
        )
        self.next_position += len(batch)
        return answer_ids

    def _passages_write(self, batch: list[AnswerIn], answer_ids: list[int]) -> list[list[int]]:
        """Insert every answer's pile; per answer, its passage ids in rank order."""
        passage_ids = iter(
            self.rows.insert(
                Passage,
                PASSAGE_COLUMNS,
                [
                    (answer_id, rank, p.source_id, p.title, p.text)
                    for answer_id, answer in zip(answer_ids, batch, strict=True)
                    for rank, p in enumerate(answer.pile, 1)
                ],
                ids=True,
            )
        )
        return [[next(passage_ids) for _ in answer.pile] for answer in batch]

    def _claims_write(self, batch: list[AnswerIn], answer_ids: list[int]) -> list[int]:
        """Insert the batch's claims with their queue key and labels required; their ids."""
        project = self.project
        seed, per_claim, double = (
            project.queue_seed,
            project.analysts_per_claim,
            project.double_labelled_share,
        )
        by_answer = project.queue_order == Project.QueueOrder.ANSWER
        claim_rows = []
        for answer_id, answer in zip(answer_ids, batch, strict=True):
            for claim in answer.claims:
                key, required = claim_queue_fields(
                    seed=seed,
                    answer_external_id=answer.external_id,
                    position=claim.position,
                    text=claim.text,
                    by_answer=by_answer,
                    analysts_per_claim=per_claim,
                    double_share=double,
                )
                claim_rows.append(
                    (
                        project.pk,
                        answer_id,
                        claim.text,
                        claim.position,
                        claim.origin,
                        claim.tags,
                        claim.stratum,
                        claim.span[0] if claim.span else None,
                        claim.span[1] if claim.span else None,
                        key,
                        required,
                    )
                )
        return self.rows.insert(Claim, CLAIM_COLUMNS, claim_rows, ids=True)

    def _citations_and_labels(
        self,
        batch: list[AnswerIn],
        answer_ids: list[int],
        piles: list[list[int]],
        claim_ids: list[int],
    ) -> tuple[list[tuple], list[tuple]]:
        """The batch's citation and label rows; a label that fails its evidence check or
        doubles a member's label on a claim becomes an issue instead."""
        citations, labels = [], []
        next_claim_id = iter(claim_ids)
        for answer_id, pile, answer in zip(answer_ids, piles, batch, strict=True):
            for claim in answer.claims:
                claim_id = next(next_claim_id)
                citations += [(claim_id, pile[i]) for i in claim.citations]
                mapped_here: dict[int, str] = {}  # member's user id -> the name mapped to them
                for label in claim.labels:
                    user_id, imported_id = self._who(label.annotator)
                    if user_id is not None:
                        if user_id in mapped_here:
                            self.issues.add(
                                answer.location,
                                f"{label.field}.annotator",
                                f"{label.annotator!r} is mapped to the member that "
                                f"{mapped_here[user_id]!r} is mapped to, who already labelled "
                                "this claim (one label per analyst and claim)",
                            )
                            continue
                        mapped_here[user_id] = label.annotator
                    quote = label.quote
                    spans = [
                        {
                            "passage": _Row(
                                answer_id=answer_id,
                                text=answer.pile[span.passage_index].text,
                                pk=span.passage_index,
                                rank=span.passage_index + 1,
                            ),
                            "start": span.start,
                            "end": span.end,
                            "quote": span.text,
                        }
                        for span in ([quote, *label.more_quotes] if quote else ())
                    ]
                    first = spans[0] if spans else {
                        "passage": None, "start": None, "end": None, "quote": ""
                    }  # fmt: skip
                    try:
                        if label.more_quotes and label.verdict == Verdict.NOT_IN_PILE:
                            raise LabelError("a NOT_IN_PILE label takes no quote")
                        if spans[1:]:
                            label_spans_check(
                                claim=_Row(answer_id=answer_id), first=first, more=spans[1:]
                            )
                        else:
                            label_evidence_check(claim=_Row(answer_id=answer_id), **first)
                    except LabelError as error:
                        where = "more_quotes" if label.more_quotes else "quote"
                        self.issues.add(answer.location, f"{label.field}.{where}", str(error))
                        continue
                    labels.append(
                        (
                            claim_id,
                            user_id,
                            imported_id,
                            label.verdict,
                            pile[quote.passage_index] if quote else None,
                            quote.start if quote else None,
                            quote.end if quote else None,
                            quote.text if quote else "",
                            label.note,
                            label.correct,
                            label.changed_after_reveal,
                            # its spans after the first (for `_dependents_write`, not a column)
                            [
                                (pile[span.passage_index], span.start, span.end, span.text)
                                for span in label.more_quotes
                            ],
                        )
                    )
        return citations, labels

    def _gold_and_verdicts(
        self, batch: list[AnswerIn], claim_ids: list[int]
    ) -> tuple[list[tuple], list[tuple]]:
        """The batch's gold and judge verdict rows (making the imported judge runs they
        belong to, and counting each run's verdicts)."""
        golds, verdicts = [], []
        next_claim_id = iter(claim_ids)
        for answer in batch:
            for claim in answer.claims:
                claim_id = next(next_claim_id)
                if claim.gold:
                    decided = claim.gold.decided_by
                    golds.append(
                        (
                            claim_id,
                            claim.gold.verdict,
                            claim.gold.source,
                            claim.gold.reason,
                            *(self._who(decided) if decided else (None, None)),
                        )
                    )
                for verdict in claim.judges:
                    run = self._run(
                        verdict.name,
                        verdict.prompt_version,
                        verdict.kind,
                        verdict.run,
                        verdict.model,
                    )
                    self.run_counts[run.pk][verdict.verdict] += 1
                    verdicts.append(
                        (
                            run.pk,
                            claim_id,
                            verdict.verdict,
                            verdict.confidence,
                            verdict.raw_response,
                        )
                    )
        return golds, verdicts

    def _dependents_write(
        self, citations: list[tuple], labels: list[tuple], golds: list[tuple], verdicts: list
    ) -> None:
        """Insert what hangs off the claims: citations, labels with their created history
        rows, gold and judge verdicts."""
        rows = self.rows
        rows.insert(Claim.cited_passages.through, ("claim_id", "passage_id"), citations)
        more = [label[-1] for label in labels]
        labels = [label[:-1] for label in labels]
        label_ids = rows.insert(Label, LABEL_COLUMNS, labels, ids=True)
        rows.insert(
            LabelHistory,
            (*LABEL_HISTORY_COLUMNS, "more_spans"),
            [
                (
                    label_id,
                    LabelHistory.Action.CREATED.value,
                    *label,
                    [
                        {"passage_id": passage, "start": start, "end": end, "quote": text}
                        for passage, start, end, text in spans
                    ]
                    or None,
                )
                for label_id, label, spans in zip(label_ids, labels, more, strict=True)
            ],
        )
        rows.insert(
            EvidenceSpan,
            EVIDENCE_SPAN_COLUMNS,
            [
                (label_id, number, *span)
                for label_id, spans in zip(label_ids, more, strict=True)
                for number, span in enumerate(spans, start=2)
            ],
        )
        rows.insert(Gold, GOLD_COLUMNS, golds)
        rows.insert(JudgeVerdict, JUDGE_VERDICT_COLUMNS, verdicts)

    def finish(self) -> None:
        for run in self.runs.values():
            counts = self.run_counts[run.pk]
            run.total = sum(counts.values())
            run.unparseable = counts[JudgeVerdictChoice.UNPARSEABLE]
            run.done = run.total - run.unparseable
            run.save(update_fields=["total", "unparseable", "done"])
        self.result.judge_runs = len(self.runs)
        self.result.annotator_names = len(self.names_seen)
        self.result.annotator_names_mapped = len(self.names_seen & self.mapped.keys())


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
        try:
            for answer in reader:
                writer.add(answer)
            writer.flush()
        except TooManyIssues:
            pass
        result.format = reader.format
        result.warnings = [str(warning) for warning in reader.warnings]
        result.warnings_total = reader.warnings_total
    if issues:
        raise ImportFailed(issues.issues, truncated=issues.truncated)
    if result.answers == 0 and result.existing == 0:
        raise ImportFailed([ImportIssue("the file", "", "holds no answers")])
    writer.finish()
    # The project page paginates by this stored total instead of counting answers.
    Project.objects.filter(pk=project.pk).update(answers_count=F("answers_count") + result.answers)
    if result.labels:
        statistics_refresh(Answer, Passage, Claim, Label, Gold)
        _labels_imported(project=project, result=result)
    elif result.answers >= STATISTICS_MIN_ANSWERS:
        statistics_refresh(Answer, Passage, Claim)
    return result


# What `idempotent` compares of an answer already stored: its columns, then its pile.
_COMPARED = ("question", "text", "reference", "risk_category", "answerable", "abstention")


def _stored_answers(*, project: Project, external_ids: list[str]) -> dict[str, dict]:
    rows = {
        row["external_id"]: {**row, "pile": []}
        for row in Answer.objects.filter(project=project, external_id__in=external_ids).values(
            "id", "external_id", "metadata", *_COMPARED
        )
    }
    if rows:
        by_id = {row["id"]: row for row in rows.values()}
        for answer_id, source_id, title, text in (
            Passage.objects.filter(answer_id__in=by_id)
            .order_by("answer_id", "rank")
            .values_list("answer_id", "source_id", "title", "text")
        ):
            by_id[answer_id]["pile"].append((source_id, title, text))
    return rows


def _answer_difference(answer: AnswerIn, stored: dict) -> str | None:
    """The first field in which `answer` differs from the stored one, or None."""
    names = {"text": "answer"}
    for column in _COMPARED:
        if getattr(answer, column) != stored[column]:
            return names.get(column, column)
    if answer.metadata != (stored["metadata"] or {}):
        return "metadata"
    if len(answer.pile) != len(stored["pile"]):
        return "pile"
    for rank, (passage, (source_id, title, text)) in enumerate(
        zip(answer.pile, stored["pile"], strict=True)
    ):
        if (passage.source_id, passage.title, passage.text) != (source_id, title, text):
            return f"pile[{rank}]"
    return None


def _labels_imported(*, project: Project, result: ImportResult) -> None:
    """Labels came in by bulk insert: bring the labelling counters and unanimous gold up to
    date, as `label_save` does one label at a time."""
    from annotate.services.queue import labelling_counters_refresh
    from annotate.services.review import gold_unanimous_bulk

    labelling_counters_refresh(project=project)
    result.gold += gold_unanimous_bulk(project=project)
