"""The operator's limits on the knowledge base and on generation (FAITHAUDIT_DOCUMENT_* and
FAITHAUDIT_GENERATION_*), in the style of annotate/limits.py.

Read at each use, from the Django settings when set there, else from the environment, else the
default here, so a changed setting (or a test's override) applies at once. Every message that
names a limit names its setting, so a lead who hits one knows what to ask the operator for.
"""

import os
from dataclasses import dataclass

from django.conf import settings


@dataclass(frozen=True)
class DocumentLimits:
    file_bytes: int
    documents_per_import: int
    document_chars: int
    passage_chars: int
    title_chars: int
    upload_bytes: int


@dataclass(frozen=True)
class GenerationLimits:
    per_document: int
    duplicate_threshold: float
    document_prompt_chars: int


# Setting name and default of each limit. Why these defaults: a policy or contract of 300
# pages is ~1M characters (document_chars); 1,500-character passages are what common RAG
# chunkers cut (500-2,000) and what one screen shows whole; a ratio of 90 (rapidfuzz, 0-100)
# catches rewordings of one word in a ten-word question without merging two questions that
# differ in a figure ("within 30 days" / "within 90 days" score 96 on fuzz.ratio, so figures
# are compared apart, see testsets/services/verify.py).
DOCUMENT_SETTINGS = {
    "file_bytes": ("FAITHAUDIT_DOCUMENT_MAX_FILE_BYTES", 20 * 1024 * 1024),
    "documents_per_import": ("FAITHAUDIT_DOCUMENT_MAX_PER_IMPORT", 10_000),
    "document_chars": ("FAITHAUDIT_DOCUMENT_MAX_CHARS", 1_000_000),
    "passage_chars": ("FAITHAUDIT_DOCUMENT_PASSAGE_CHARS", 1_500),
    "title_chars": ("FAITHAUDIT_DOCUMENT_MAX_TITLE_CHARS", 500),
    # One upload of several files on the page, refused before it is read when larger.
    "upload_bytes": ("FAITHAUDIT_DOCUMENT_MAX_UPLOAD_BYTES", 100 * 1024 * 1024),
}
GENERATION_SETTINGS = {
    "per_document": ("FAITHAUDIT_GENERATION_PER_DOCUMENT", 5),
    "duplicate_threshold": ("FAITHAUDIT_GENERATION_DUPLICATE_THRESHOLD", 90.0),
    "document_prompt_chars": ("FAITHAUDIT_GENERATION_PROMPT_CHARS", 24_000),
}


def _read(name: str, default):
    value = getattr(settings, name, None)
    if value is None:
        value = os.environ.get(name, default)
    return type(default)(value)


def document_limits() -> DocumentLimits:
    return DocumentLimits(
        **{field: _read(name, default) for field, (name, default) in DOCUMENT_SETTINGS.items()}
    )


def generation_limits() -> GenerationLimits:
    return GenerationLimits(
        **{field: _read(name, default) for field, (name, default) in GENERATION_SETTINGS.items()}
    )


def setting_name(field: str) -> str:
    return {**DOCUMENT_SETTINGS, **GENERATION_SETTINGS}[field][0]
