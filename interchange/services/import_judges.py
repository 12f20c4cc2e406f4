"""The imported judges an import's verdicts belong to: a judge name of the project's that is
no imported judge is refused; each (judge, prompt version, kind, run) gets one finished
imported run, its counts set when the import ends."""

from collections import Counter

from django.utils import timezone

from annotate.models import Project
from interchange.importers import AnswerIn
from interchange.importers.issues import IssueLog
from judges.models import Backend, Judge, JudgeRun, JudgeVerdictChoice


class ImportedJudges:
    def __init__(self, *, project: Project, user, source: str, issues: IssueLog):
        self.project = project
        self.user = user
        self.source = source
        self.issues = issues
        self.judges: dict[str, Judge | None] = {}  # name -> existing imported judge, or None
        self.runs: dict[tuple, JudgeRun] = {}
        self.run_counts: dict[int, Counter] = {}

    def check(self, answer: AnswerIn, name: str, field: str) -> None:
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

    def run(self, name: str, version: str, kind: str, run: str, model: str) -> JudgeRun:
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

    def finish(self) -> int:
        """Set each run's counts from its verdicts; the number of runs."""
        for run in self.runs.values():
            counts = self.run_counts[run.pk]
            run.total = sum(counts.values())
            run.unparseable = counts[JudgeVerdictChoice.UNPARSEABLE]
            run.done = run.total - run.unparseable
            run.save(update_fields=["total", "unparseable", "done"])
        return len(self.runs)
