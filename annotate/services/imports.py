"""Importing answers with their pile, claims, labels, gold and judge verdicts from a file.

The file streams through `annotate.importers.AnswerReader` record by record; valid answers are
written in batches of `BATCH_ANSWERS` with bulk_create, all inside one transaction. Any problem
anywhere in the file (up to `MAX_ISSUES` are collected) rolls the whole import back: a failed file
leaves nothing behind. Memory holds one batch plus the set of answer ids seen (to catch
duplicates within the file), never the whole file.
"""

from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import F, Max
from django.utils import timezone

from annotate.importers import AnswerIn, AnswerReader, binary_source
from annotate.importers.issues import ImportFailed, ImportIssue, IssueLog, TooManyIssues
from annotate.models import (
    Answer,
    Claim,
    Gold,
    Label,
    LabelHistory,
    Membership,
    Passage,
    Project,
    Role,
)
from annotate.queue_order import claim_labels_required, claim_queue_key
from annotate.services.labels import LabelError, label_evidence_check
from judges.models import Backend, Judge, JudgeRun, JudgeVerdict, JudgeVerdictChoice

BATCH_ANSWERS = 1000
IMPORTED_PROMPT_VERSION = "imported"

__all__ = ["BATCH_ANSWERS", "ImportFailed", "ImportResult", "answers_import"]


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
    users_created: int = 0

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
            f"{count(self.users_created, 'analyst')} created."
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
    ):
        self.project = project
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
        self.user_ids: dict[str, int] = {}
        self.member_ids = set(
            Membership.objects.filter(project=project).values_list("user_id", flat=True)
        )
        self.judges: dict[str, Judge | None] = {}  # name -> existing imported judge, or None
        self.runs: dict[tuple, JudgeRun] = {}
        self.run_counts: dict[int, Counter] = {}

    # -- validation that needs the database --------------------------------------------------

    def add(self, answer: AnswerIn) -> None:
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

    def _check(self, batch: list[AnswerIn]) -> None:
        existing = set(
            Answer.objects.filter(
                project=self.project, external_id__in=[answer.external_id for answer in batch]
            ).values_list("external_id", flat=True)
        )
        for answer in batch:
            if answer.external_id in existing:
                self.issues.add(
                    answer.location,
                    "id",
                    f"duplicate id: answer id {answer.external_id!r} already exists in this project",
                )
            for claim in answer.claims:
                for verdict in claim.judges:
                    self._judge_check(answer, verdict.name, verdict.field)

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
        self._check(batch)
        if not self.issues:
            self._write(batch)
        self.checked += len(batch)
        if self.progress is not None:
            self.progress(self.checked)

    def _users(self, usernames: set[str], *, members: bool) -> None:
        missing = usernames - self.user_ids.keys()
        if missing:
            User = get_user_model()
            found = dict(User.objects.filter(username__in=missing).values_list("username", "id"))
            for name in sorted(missing - found.keys()):
                # Imported analysts cannot log in until an owner gives them a password.
                created = User(username=name)
                created.set_unusable_password()
                created.save()
                found[name] = created.pk
                self.result.users_created += 1
            self.user_ids.update(found)
        if members:
            new = {self.user_ids[name] for name in usernames} - self.member_ids
            Membership.objects.bulk_create(
                [Membership(project=self.project, user_id=uid, role=Role.ANALYST) for uid in new]
            )
            self.member_ids |= new

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
        project = self.project
        answers = []
        for answer in batch:
            answers.append(
                Answer(
                    project=project,
                    external_id=answer.external_id,
                    position=self.next_position,
                    question=answer.question,
                    text=answer.text,
                    risk_category=answer.risk_category,
                    answerable=answer.answerable,
                    abstention=answer.abstention,
                    reference=answer.reference,
                    metadata=answer.metadata,
                )
            )
            self.next_position += 1
        Answer.objects.bulk_create(answers)

        piles: list[list[Passage]] = []
        for row, answer in zip(answers, batch, strict=True):
            piles.append(
                [
                    Passage(
                        answer=row, rank=rank, source_id=p.source_id, title=p.title, text=p.text
                    )
                    for rank, p in enumerate(answer.pile, 1)
                ]
            )
        Passage.objects.bulk_create([passage for pile in piles for passage in pile])

        claims: list[Claim] = []
        for row, answer in zip(answers, batch, strict=True):
            for claim in answer.claims:
                key = claim_queue_key(
                    seed=project.queue_seed,
                    answer_external_id=answer.external_id,
                    position=claim.position,
                    text=claim.text,
                )
                claims.append(
                    Claim(
                        project=project,
                        answer=row,
                        text=claim.text,
                        position=claim.position,
                        origin=claim.origin,
                        tags=claim.tags,
                        span_start=claim.span[0] if claim.span else None,
                        span_end=claim.span[1] if claim.span else None,
                        queue_key=key,
                        labels_required=claim_labels_required(
                            analysts_per_claim=project.analysts_per_claim,
                            double_share=project.double_labelled_share,
                            queue_key=key,
                        ),
                    )
                )
        Claim.objects.bulk_create(claims)

        annotators = {label.annotator for a in batch for c in a.claims for label in c.labels}
        deciders = {
            c.gold.decided_by for a in batch for c in a.claims if c.gold and c.gold.decided_by
        }
        self._users(annotators, members=True)
        self._users(deciders - annotators, members=False)

        citations, labels, golds, verdicts = [], [], [], []
        claim_rows = iter(claims)
        for answer_index, answer in enumerate(batch):
            pile = piles[answer_index]
            for claim in answer.claims:
                row = next(claim_rows)
                citations += [
                    Claim.cited_passages.through(claim_id=row.pk, passage_id=pile[i].pk)
                    for i in claim.citations
                ]
                for label in claim.labels:
                    passage = pile[label.quote.passage_index] if label.quote else None
                    try:
                        label_evidence_check(
                            claim=row,
                            passage=passage,
                            start=label.quote.start if label.quote else None,
                            end=label.quote.end if label.quote else None,
                            quote=label.quote.text if label.quote else "",
                        )
                    except LabelError as error:
                        self.issues.add(answer.location, f"{label.field}.quote", str(error))
                        continue
                    labels.append(
                        Label(
                            claim=row,
                            annotator_id=self.user_ids[label.annotator],
                            verdict=label.verdict,
                            evidence_passage=passage,
                            evidence_start=label.quote.start if label.quote else None,
                            evidence_end=label.quote.end if label.quote else None,
                            evidence_quote=label.quote.text if label.quote else "",
                            note=label.note,
                            correct=label.correct,
                        )
                    )
                if claim.gold:
                    golds.append(
                        Gold(
                            claim=row,
                            verdict=claim.gold.verdict,
                            source=claim.gold.source,
                            reason=claim.gold.reason,
                            decided_by_id=self.user_ids.get(claim.gold.decided_by),
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
                        JudgeVerdict(
                            run=run,
                            claim=row,
                            verdict=verdict.verdict,
                            confidence=verdict.confidence,
                            raw_response=verdict.raw_response,
                        )
                    )
        if self.issues:
            return
        Claim.cited_passages.through.objects.bulk_create(citations)
        Label.objects.bulk_create(labels)
        LabelHistory.objects.bulk_create(
            [
                LabelHistory(
                    label_id_at_time=label.pk,
                    claim_id=label.claim_id,
                    annotator_id=label.annotator_id,
                    action=LabelHistory.Action.CREATED,
                    verdict=label.verdict,
                    evidence_passage_id_at_time=label.evidence_passage_id,
                    evidence_start=label.evidence_start,
                    evidence_end=label.evidence_end,
                    evidence_quote=label.evidence_quote,
                    note=label.note,
                    correct=label.correct,
                )
                for label in labels
            ]
        )
        Gold.objects.bulk_create(golds)
        JudgeVerdict.objects.bulk_create(verdicts)
        result = self.result
        result.answers += len(answers)
        result.passages += sum(len(pile) for pile in piles)
        result.claims += len(claims)
        result.labels += len(labels)
        result.gold += len(golds)
        result.judge_verdicts += len(verdicts)

    def finish(self) -> None:
        for run in self.runs.values():
            counts = self.run_counts[run.pk]
            run.total = sum(counts.values())
            run.unparseable = counts[JudgeVerdictChoice.UNPARSEABLE]
            run.done = run.total - run.unparseable
            run.save(update_fields=["total", "unparseable", "done"])
        self.result.judge_runs = len(self.runs)


@transaction.atomic
def answers_import(
    *,
    project: Project,
    path_or_file,
    format: str = "auto",
    user=None,
    progress: Callable[[int], None] | None = None,
) -> ImportResult:
    """Import every answer of a file into `project`, or nothing: raise ImportFailed with the
    problems (each naming its line or record and field) when anything in the file is wrong.

    `path_or_file` is a path or a binary file object (an UploadedFile); `format` is auto,
    native, ragas or ragchecker. `progress(n)` is called after each batch with the number of
    answers read and checked so far.
    """
    issues = IssueLog()
    result = ImportResult()
    with binary_source(path_or_file) as (handle, name):
        reader = AnswerReader(
            handle, name, format=format, issues=issues, quote_required=project.quote_required
        )
        result.container = reader.container
        writer = _Writer(
            project=project,
            user=user,
            issues=issues,
            result=result,
            source=name,
            progress=progress,
        )
        try:
            for answer in reader:
                writer.add(answer)
            writer.flush()
        except TooManyIssues:
            pass
        result.format = reader.format
    if issues:
        raise ImportFailed(issues.issues, truncated=issues.truncated)
    if result.answers == 0:
        raise ImportFailed([ImportIssue("the file", "", "holds no answers")])
    writer.finish()
    # The project page paginates by this stored total instead of counting answers.
    Project.objects.filter(pk=project.pk).update(answers_count=F("answers_count") + result.answers)
    if result.labels:
        _labels_imported(project=project, result=result)
    return result


def _labels_imported(*, project: Project, result: ImportResult) -> None:
    """Labels came in by bulk insert: bring the labelling counters and unanimous gold up to
    date, as `label_save` does one label at a time."""
    from annotate.services.queue import labelling_counters_refresh
    from annotate.services.review import gold_unanimous_bulk

    labelling_counters_refresh(project=project)
    result.gold += gold_unanimous_bulk(project=project)
