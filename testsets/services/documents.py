"""The knowledge base's import: files read into documents, each stored once and cut into
passages (testsets/chunking.py), all or nothing.

Formats, by the file's extension:
- `.txt`, `.md`: one document; its id is the file's name without the extension, its title the
  first Markdown heading (`# ...`) or else the file's name; the text as written (UTF-8).
- `.html`, `.htm`: one document; the text of the page (stdlib html.parser), `<script>`,
  `<style>`, `<template>` and `<head>` dropped, blocks (p, li, h1-h6, tr, div, br, ...) ending a
  paragraph; the title from `<title>`, else the first `<h1>`, else the file's name.
- `.jsonl`: one document per line, `{"id": ..., "title": ..., "text": ..., "language": ...}`
  (`title` and `language` optional; `id` a string or a whole number).

Line ends are made `\\n` and the text stripped; that text is what offsets count in. A document
whose id is already stored with the same text is left alone (re-importing is a no-op); the
same id with another text is an error naming the line and the field, unless `replace` is
asked for (refused for a document that test items already quote). A text stored under another
id is not stored again (counted as such). Every problem of every file is listed with its file,
line and field, and then nothing is written.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import PurePath

from django.db import transaction

from annotate.models import Project
from testsets.chunking import passage_spans
from testsets.language import language_detect
from testsets.limits import document_limits, setting_name
from testsets.models import Document, DocumentPassage, TestItem

FORMATS = {".txt": "text", ".md": "markdown", ".html": "html", ".htm": "html", ".jsonl": "jsonl"}
JSONL_FIELDS = ("id", "title", "text", "language")
MAX_ISSUES = 50
_LANGUAGE = re.compile(r"^[a-z]{2,3}(?:-[A-Za-z0-9]{2,8})?$")
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)


@dataclass(frozen=True)
class DocumentIssue:
    file: str
    line: int | None
    field: str
    message: str

    def __str__(self) -> str:
        where = self.file + (f", line {self.line}" if self.line else "")
        return f"{where}, field {self.field!r}: {self.message}"


class DocumentImportError(ValueError):
    """The import was refused; `issues` lists every problem found, and nothing was written."""

    def __init__(self, issues: list[DocumentIssue]):
        self.issues = issues
        super().__init__("; ".join(str(issue) for issue in issues))


@dataclass
class DocumentSource:
    file: str
    line: int | None
    external_id: str
    title: str
    text: str
    language: str = ""


@dataclass
class DocumentsImported:
    created: list[str] = field(default_factory=list)
    replaced: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    same_text: list[tuple[str, str]] = field(default_factory=list)  # (id, stored id)
    passages: int = 0


class _PageText(HTMLParser):
    SKIP = frozenset({"script", "style", "template", "head", "noscript", "svg"})
    BLOCK = frozenset(
        [
            "p",
            "div",
            "br",
            "li",
            "ul",
            "ol",
            "h1",
            "h2",
            "h3",
            "h4",
            "h5",
            "h6",
            "tr",
            "table",
            "section",
            "article",
            "header",
            "footer",
            "blockquote",
            "pre",
            "dd",
            "dt",
            "hr",
            "main",
            "aside",
            "nav",
            "figure",
            "figcaption",
        ]
    )

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skipping = 0
        self.title = ""
        self.h1 = ""
        self._in = ""

    def handle_starttag(self, tag, attrs):
        if tag in self.SKIP:
            self.skipping += 1
        if tag in ("title", "h1"):
            self._in = tag
        if tag in self.BLOCK:
            self.parts.append("\n\n")

    def handle_endtag(self, tag):
        if tag in self.SKIP and self.skipping:
            self.skipping -= 1
        if tag == self._in:
            self._in = ""
        if tag in self.BLOCK:
            self.parts.append("\n\n")

    def handle_data(self, data):
        if self._in == "title" and not self.title:
            self.title = " ".join(data.split())
        if self.skipping:
            return
        if self._in == "h1" and not self.h1:
            self.h1 = " ".join(data.split())
        self.parts.append(re.sub(r"\s+", " ", data))


def html_text(markup: str) -> tuple[str, str]:
    """(title, text) of an HTML page: its visible text, one paragraph per block."""
    page = _PageText()
    page.feed(markup)
    page.close()
    text = "".join(page.parts)
    text = "\n\n".join(
        " ".join(chunk.split()) for chunk in re.split(r"\n\s*\n", text) if chunk.strip()
    )
    return page.title or page.h1, text


def _clean(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n").strip()


def _decode(name: str, data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise DocumentImportError(
            [DocumentIssue(name, line, "file", "not UTF-8 text: save the file as UTF-8")]
        ) from None


def _jsonl_sources(name: str, text: str) -> tuple[list[DocumentSource], list[DocumentIssue]]:
    sources, issues = [], []
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as exc:
            issues.append(DocumentIssue(name, number, "line", f"not valid JSON ({exc.msg})"))
            continue
        if not isinstance(row, dict):
            issues.append(DocumentIssue(name, number, "line", "expected a JSON object"))
            continue
        source, problems = _jsonl_row(name, number, row)
        issues += problems
        if source:
            sources.append(source)
    return sources, issues


def _jsonl_row(name, number, row) -> tuple[DocumentSource | None, list[DocumentIssue]]:
    issues = []

    def problem(field_name: str, message: str) -> None:
        issues.append(DocumentIssue(name, number, field_name, message))

    for unknown in sorted(set(row) - set(JSONL_FIELDS)):
        problem(unknown, f"unknown field (known: {', '.join(JSONL_FIELDS)})")
    external_id = row.get("id")
    if isinstance(external_id, int) and not isinstance(external_id, bool):
        external_id = str(external_id)
    if not isinstance(external_id, str) or not external_id.strip():
        problem("id", "give the document's id, a non-empty string")
    elif len(external_id) > 200:
        problem("id", "is longer than 200 characters")
    text = row.get("text")
    if not isinstance(text, str) or not text.strip():
        problem("text", "give the document's text, a non-empty string")
    title = row.get("title", "")
    if title is None or not isinstance(title, str):
        problem("title", "give the title as a string (or leave the field out)")
    language = row.get("language") or ""
    if not isinstance(language, str) or (language and not _LANGUAGE.match(language)):
        problem("language", "give an ISO 639-1 code such as 'en' (or leave the field out)")
    if issues:
        return None, issues
    source = DocumentSource(name, number, external_id.strip(), title.strip(), _clean(text))
    source.language = language
    return source, []


def document_sources_read(name: str, data: bytes) -> list[DocumentSource]:
    """The documents in one uploaded file; DocumentImportError lists its problems."""
    suffix = PurePath(name).suffix.lower()
    if suffix not in FORMATS:
        known = ", ".join(sorted(FORMATS))
        raise DocumentImportError(
            [
                DocumentIssue(
                    name,
                    None,
                    "file",
                    f"unknown kind of file {suffix or '(none)'}: give one of {known}",
                )
            ]
        )
    limit = document_limits().file_bytes
    if len(data) > limit:
        raise DocumentImportError(
            [
                DocumentIssue(
                    name,
                    None,
                    "file",
                    f"is {len(data):,} bytes; at most {limit:,} are "
                    f"allowed (operator setting {setting_name('file_bytes')})",
                )
            ]
        )
    text = _decode(name, data)
    if FORMATS[suffix] == "jsonl":
        sources, issues = _jsonl_sources(name, text)
        if issues:
            raise DocumentImportError(issues)
        return sources
    stem = PurePath(name).stem
    if FORMATS[suffix] == "html":
        title, body = html_text(text)
    else:
        heading = _HEADING.search(text) if FORMATS[suffix] == "markdown" else None
        title, body = (heading.group(1) if heading else ""), _clean(text)
    if not body:
        raise DocumentImportError([DocumentIssue(name, None, "text", "the file has no text")])
    return [DocumentSource(name, None, stem[:200], (title or stem), body)]


def text_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _limit_issues(sources: list[DocumentSource]) -> list[DocumentIssue]:
    limits = document_limits()
    issues, seen = [], {}
    for source in sources:
        where = (source.file, source.line)
        if len(source.text) > limits.document_chars:
            issues.append(
                DocumentIssue(
                    *where,
                    "text",
                    (
                        f"is {len(source.text):,} characters long; at most {limits.document_chars:,} "
                        f"are allowed (operator setting {setting_name('document_chars')})"
                    ),
                )
            )
        if len(source.title) > limits.title_chars:
            issues.append(
                DocumentIssue(
                    *where,
                    "title",
                    (
                        f"is {len(source.title):,} characters long; at most {limits.title_chars:,} are "
                        f"allowed (operator setting {setting_name('title_chars')})"
                    ),
                )
            )
        if "\x00" in source.text:
            issues.append(DocumentIssue(*where, "text", "contains a NUL character"))
        first = seen.setdefault(source.external_id, source)
        if first is not source:
            line = f", line {first.line}" if first.line else ""
            issues.append(
                DocumentIssue(
                    *where,
                    "id",
                    (
                        f"the id {source.external_id!r} is given twice in this import "
                        f"(first in {first.file}{line})"
                    ),
                )
            )
    if len(sources) > limits.documents_per_import:
        issues.append(
            DocumentIssue(
                sources[-1].file,
                None,
                "file",
                (
                    f"the import has {len(sources):,} documents; at most "
                    f"{limits.documents_per_import:,} are allowed at once (operator setting "
                    f"{setting_name('documents_per_import')}): split it"
                ),
            )
        )
    return issues


def _stored_issues(project, sources, stored, replace) -> list[DocumentIssue]:
    issues = []
    quoted = set(
        TestItem.objects.filter(document__in=list(stored.values())).values_list(
            "document_id", flat=True
        )
    )
    for source in sources:
        document = stored.get(source.external_id)
        if document is None or document.sha256 == text_sha256(source.text):
            continue
        where = (source.file, source.line)
        if not replace:
            issues.append(
                DocumentIssue(
                    *where,
                    "text",
                    (
                        f"document {source.external_id!r} is already stored with a different text: "
                        "give it another id, or import with “replace” to replace its text"
                    ),
                )
            )
        elif document.pk in quoted:
            issues.append(
                DocumentIssue(
                    *where,
                    "text",
                    (
                        f"document {source.external_id!r} cannot be replaced: test items quote it "
                        "(delete those test sets first, or give the new text another id)"
                    ),
                )
            )
    return issues


def documents_import(
    *, project: Project, files: list[tuple[str, bytes]], replace: bool = False
) -> DocumentsImported:
    """Import `files` ((name, content) pairs) into the project's knowledge base, in one
    transaction; DocumentImportError (every problem, with file, line and field) writes
    nothing."""
    sources, issues = [], []
    for name, data in files:
        try:
            sources += document_sources_read(name, data)
        except DocumentImportError as exc:
            issues += exc.issues
    if not files:
        issues.append(DocumentIssue("(no file)", None, "file", "choose at least one file"))
    issues += _limit_issues(sources)
    if issues:
        raise DocumentImportError(issues[:MAX_ISSUES])
    with transaction.atomic():
        stored = {
            d.external_id: d
            for d in Document.objects.select_for_update().filter(
                project=project, external_id__in=[s.external_id for s in sources]
            )
        }
        issues = _stored_issues(project, sources, stored, replace)
        if issues:
            raise DocumentImportError(issues[:MAX_ISSUES])
        return _write(project, sources, stored)


def _write(project, sources, stored) -> DocumentsImported:
    result = DocumentsImported()
    max_chars = document_limits().passage_chars
    by_hash = dict(Document.objects.filter(project=project).values_list("sha256", "external_id"))
    for source in sources:
        sha = text_sha256(source.text)
        document = stored.get(source.external_id)
        if document is not None and document.sha256 == sha:
            result.unchanged.append(source.external_id)
            continue
        if document is None and sha in by_hash:
            result.same_text.append((source.external_id, by_hash[sha]))
            continue
        language = source.language or language_detect(source.text[:5000]) or ""
        fields = {"title": source.title, "text": source.text, "sha256": sha, "language": language}
        if document is None:
            document = Document.objects.create(
                project=project, external_id=source.external_id, **fields
            )
            result.created.append(source.external_id)
        else:
            Document.objects.filter(pk=document.pk).update(**fields)
            document.passages.all().delete()
            result.replaced.append(source.external_id)
        by_hash[sha] = source.external_id
        spans = passage_spans(source.text, max_chars)
        DocumentPassage.objects.bulk_create(
            DocumentPassage(document=document, position=i, start=s, end=e, text=source.text[s:e])
            for i, (s, e) in enumerate(spans)
        )
        result.passages += len(spans)
    return result
