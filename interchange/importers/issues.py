"""What is wrong with an import file, said so a person can find it: the line (or record) and field."""

from dataclasses import dataclass, field

# Enough to fix a file in one pass without flooding the page; the rest are usually the same mistake.
MAX_ISSUES = 50


@dataclass(frozen=True)
class ImportIssue:
    location: str  # "line 7" (JSON Lines, CSV) or "record 3 (line 40)" (JSON)
    field: str  # "pile[2].text", "" when the whole line is at fault
    message: str

    def __str__(self) -> str:
        if self.field:
            return f"{self.location}, field {self.field}: {self.message}"
        return f"{self.location}: {self.message}"


class TooManyIssues(Exception):
    """Raised by IssueLog once MAX_ISSUES are collected: reading further would only add noise."""


@dataclass
class IssueLog:
    limit: int = MAX_ISSUES
    issues: list[ImportIssue] = field(default_factory=list)
    truncated: bool = False

    def add(self, location: str, field_path: str, message: str) -> None:
        self.issues.append(ImportIssue(location, field_path, message))
        if len(self.issues) >= self.limit:
            self.truncated = True
            raise TooManyIssues

    def extend(self, issues: list[ImportIssue]) -> None:
        for issue in issues:
            self.add(issue.location, issue.field, issue.message)

    def __bool__(self) -> bool:
        return bool(self.issues)

    def __len__(self) -> int:
        return len(self.issues)


class ImportFailed(Exception):
    """The file was not imported (nothing of it was written); `issues` say why, line by line."""

    def __init__(self, issues: list[ImportIssue], *, truncated: bool = False):
        self.issues = list(issues)
        self.truncated = truncated
        more = f" (stopped after the first {len(self.issues)})" if truncated else ""
        super().__init__(
            f"Nothing was imported: {len(self.issues)} problem(s) in the file{more}.\n"
            + "\n".join(str(issue) for issue in self.issues)
        )
