"""Reading answer files: JSON Lines, JSON or CSV, in the native, RAGAS or RAGChecker schema.

`AnswerReader` streams a file record by record: it tells the container from the first bytes
(`sources`), the schema from the first record's fields (or takes the one given), and yields each
valid record as an `AnswerIn`; every problem goes to the `IssueLog` with its line and field.
Writing is `interchange.services.imports.answers_import`'s job.
"""

from collections.abc import Callable, Iterator
from typing import BinaryIO

from annotate.limits import SETTINGS, limits_current
from interchange.importers.fields import FieldReader
from interchange.importers.issues import (
    MAX_ISSUES,
    ImportFailed,
    ImportIssue,
    IssueLog,
    TooManyIssues,
)
from interchange.importers.native import native_parse
from interchange.importers.ragas import ragas_parse
from interchange.importers.ragchecker import ragchecker_parse
from interchange.importers.records import AnswerIn
from interchange.importers.sources import (
    RawRecord,
    binary_source,
    container_detect,
    head_read,
    raw_records,
)

FORMATS = ("auto", "native", "ragas", "ragchecker")
Parser = Callable[..., tuple[AnswerIn | None, FieldReader]]
PARSERS: dict[str, Parser] = {
    "native": native_parse,
    "ragas": ragas_parse,
    "ragchecker": ragchecker_parse,
}

__all__ = [
    "FORMATS",
    "AnswerIn",
    "AnswerReader",
    "ImportFailed",
    "ImportIssue",
    "IssueLog",
    "TooManyIssues",
    "binary_source",
    "format_detect",
]


def format_detect(record: dict) -> str | None:
    """The schema a record's field names belong to, or None."""
    keys = set(record)
    if "pile" in keys:
        return "native"
    if keys & {"query_id", "retrieved_context", "gt_answer", "retrieved2response"}:
        return "ragchecker"
    if keys & {"user_input", "retrieved_contexts"} or {"question", "contexts"} <= keys:
        return "ragas"
    return None


class AnswerReader:
    def __init__(
        self,
        handle: BinaryIO,
        name: str,
        *,
        format: str = "auto",
        issues: IssueLog,
        quote_required: bool = True,
        most: tuple[int, str] | None = None,
    ):
        if format not in FORMATS:
            raise ValueError(f"Unknown format {format!r}: use one of {', '.join(FORMATS)}.")
        self.handle = handle
        self.name = name
        self.format = format
        self.issues = issues
        self.quote_required = quote_required
        self.container = container_detect(head_read(handle), name)
        self.limits = limits_current()
        # Fields the format does not know (ignored), the first MAX_ISSUES named.
        self.warnings: list[ImportIssue] = []
        self.warnings_total = 0
        self.most = most  # (n, "per request"): a cap below the operator's per-file limit

    def _parser(self, raw: RawRecord) -> Parser | None:
        if self.format == "auto":
            detected = format_detect(raw.value)
            if detected is None:
                fields = ", ".join(sorted(map(str, raw.value))[:12]) or "none"
                self.issues.add(
                    raw.location,
                    "",
                    f"cannot tell the format from the fields ({fields}): expected native "
                    "(id, question, answer, pile), ragas (user_input, response, "
                    "retrieved_contexts) or ragchecker (query_id, query, response, "
                    "retrieved_context); choose the format explicitly",
                )
                return None
            self.format = detected
        return PARSERS[self.format]

    def __iter__(self) -> Iterator[AnswerIn]:
        parser: Parser | None = None
        most = self.limits.answers_per_file
        if self.most is not None and self.most[0] < most:
            most, per = self.most
        else:
            per = None
        for number, raw in enumerate(raw_records(self.handle, self.container, self.issues), 1):
            if per is not None and number > most:
                self.issues.add(raw.location, "", f"more than {most} answers: at most {most} {per}")
                return
            if number > most:
                self.issues.add(
                    raw.location,
                    "",
                    f"the file holds more than {most} answers; at most {most} answers are "
                    f"allowed per file (operator setting {SETTINGS['answers_per_file']}): "
                    "split it into several files",
                )
                return
            if parser is None:
                if not isinstance(raw.value, dict):
                    self.issues.add(raw.location, "", "expected a JSON object (one answer)")
                    continue
                parser = self._parser(raw)
                if parser is None:
                    return
            answer, reader = parser(raw, quote_required=self.quote_required, limits=self.limits)
            self.issues.extend(reader.issues)
            if reader.warnings:
                self.warnings_total += len(reader.warnings)
                self.warnings.extend(reader.warnings[: MAX_ISSUES - len(self.warnings)])
            if answer is not None:
                yield answer
