"""The systems an import's answers come from: the import's own `--system` for answers that name
none, one metadata per (name, version) across the file and the project, and the System row of
each (the project's, else a new one)."""

from annotate.models import Project, System
from interchange.importers import AnswerIn
from interchange.importers.issues import IssueLog
from interchange.importers.systems import SystemIn


def system_label(system: SystemIn) -> str:
    return f"{system.name}@{system.version}" if system.version else system.name


class Systems:
    def __init__(self, *, project: Project, issues: IssueLog, default: SystemIn | None):
        self.project = project
        self.issues = issues
        self.default = default  # the import's --system: for answers that name none
        self.ids: dict[tuple[str, str], int] = {}
        self.seen: dict[tuple[str, str], tuple[dict, str]] = {}  # metadata, where

    def assign(self, answer: AnswerIn) -> None:
        """Give an answer that names no system the import's; note the answer's system."""
        if answer.system is None and self.default is not None:
            answer.system = self.default
            if answer.id_is_question:
                answer.question_id = answer.external_id
                answer.external_id = f"{system_label(self.default)}:{answer.external_id}"
        if answer.system is not None:
            self._note(answer)

    def _note(self, answer: AnswerIn) -> None:
        """One system, one metadata: a second record (or the project) describing the same
        name and version otherwise is an error naming both."""
        system = answer.system
        seen = self.seen.get(system.key)
        if seen is None:
            self.seen[system.key] = (system.metadata, answer.location)
            return
        metadata, where = seen
        if system.metadata and metadata and system.metadata != metadata:
            self.issues.add(
                answer.location,
                "system",
                f"system {system_label(system)!r} is described with other metadata "
                f"at {where}; give one system's metadata once (or the same everywhere)",
            )
        elif system.metadata and not metadata:
            self.seen[system.key] = (system.metadata, answer.location)

    def resolve(self, batch: list[AnswerIn]) -> None:
        """The System row of every (name, version) in the batch: the project's, else a new one."""
        for answer in batch:
            system = answer.system
            if system is None or system.key in self.ids:
                continue
            metadata, _where = self.seen[system.key]
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
                    f"system {system_label(system)!r} exists in this project with "
                    f"other metadata ({row.metadata}); use another version or the same metadata",
                )
                continue
            elif metadata and not row.metadata:
                row.metadata = metadata
                row.save(update_fields=["metadata"])
            self.ids[system.key] = row.pk

    def id_of(self, answer: AnswerIn) -> int | None:
        return self.ids[answer.system.key] if answer.system else None
