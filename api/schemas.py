"""The API's request and response shapes (pydantic, through django-ninja); the OpenAPI schema
is generated from them."""

from datetime import datetime
from typing import Annotated, Any, Literal

from ninja import Schema
from pydantic import ConfigDict, Field, WithJsonSchema

from annotate.vocabulary import VERDICT_VALUES
from judges.backends.registry import backend_names
from metrics.services.report_schema import report_json_schema


class ProblemItem(Schema):
    field: str = Field(
        description="The field at fault, as a path (`pile[2].text`); '' for the whole item."
    )
    detail: str
    index: int | None = Field(None, description="For a batch: the 0-based index of the item.")
    location: str | None = Field(
        None, description="The import's own location: `record 3 (line 40)`."
    )


class ProblemOut(Schema):
    """An RFC 9457 problem document (served as application/problem+json)."""

    type: str
    title: str
    status: int
    detail: str
    instance: str
    errors: list[ProblemItem] | None = None


class ProjectOut(Schema):
    slug: str
    name: str
    description: str
    answers: int
    role: str | None


class ProjectIn(Schema):
    slug: str = Field(pattern=r"^[-a-zA-Z0-9_]+$", min_length=1, max_length=80)
    name: str = Field(min_length=1, max_length=200)
    description: str = ""


class MemberOut(Schema):
    username: str
    role: str


class MemberSetOut(Schema):
    username: str
    role: str = Field(description="The role asked for.")
    detail: str = Field(
        description="The same words whether or not an active user of that name exists."
    )


class MemberIn(Schema):
    role: Literal["owner", "lead", "analyst"]


class AnswersOut(Schema):
    created: int = Field(description="Answers written by this request.")
    existing: int = Field(description="Answers already there with the same content (left alone).")
    passages: int
    claims: int
    labels: int
    gold: int
    judge_verdicts: int


# A report passed through as computed (its keys and their order are the report's), described
# by its own JSON Schema, made from its section dataclasses (metrics/services/report_types.py).
ReportJson = Annotated[dict[str, Any], WithJsonSchema(report_json_schema())]


class SnapshotOut(Schema):
    id: int
    status: str
    progress: float
    stage: str
    error: str
    judge: str | None
    created_at: datetime
    computed_at: datetime | None
    report: ReportJson | None = Field(
        description="The report once done: the same JSON as GET …/report."
    )


class GateOut(Schema):
    model_config = ConfigDict(populate_by_name=True)

    pass_: bool = Field(
        alias="pass", description="Whether the judged end of the figure meets the threshold."
    )
    metric: str
    on: str
    min: float | None
    max: float | None
    figure: float | None = Field(description="The point estimate.")
    interval: list[float] | None = Field(description="Its 95% interval [lower, upper].")
    judged_value: float | None
    method: str
    reason: str
    project: str | None
    judge: str | None
    computed_at: str | None


class JudgeOut(Schema):
    id: int
    name: str
    backend: str
    model: str
    endpoint: str


class JudgeIn(Schema):
    name: str = Field(min_length=1, max_length=100)
    backend: Literal[backend_names(selectable=True)] = "baseline"  # judges/backends/registry.py
    model: str = ""
    endpoint: str = Field("", description="An endpoint the operator declared (openai backend).")
    temperature: float = Field(0.0, ge=0, le=2)


class RunIn(Schema):
    kind: Literal["verify", "citation"] = "verify"
    scope: Literal["all", "unjudged", "gold"] = "all"


class RunOut(Schema):
    id: int
    judge: str
    kind: str
    scope: str
    status: str
    total: int
    done: int
    failed: int
    unparseable: int
    remaining: int
    error: str
    created_at: datetime
    finished_at: datetime | None


class ClaimOut(Schema):
    id: int
    answer: str = Field(description="The answer's external id.")
    position: int
    text: str
    origin: str
    tags: list[str]


class PassageOut(Schema):
    rank: int
    id: str
    title: str
    text: str


class ClaimDetailOut(ClaimOut):
    answer_text: str
    question: str
    pile: list[PassageOut]


class ClaimPage(Schema):
    items: list[ClaimOut]
    next: int | None = Field(description="Pass as `after` for the next page; null at the end.")


class ClaimIn(Schema):
    text: str = Field(min_length=1)


class SplitIn(Schema):
    method: Literal["rule", "llm"] = "rule"
    judge: str | None = Field(None, description="For llm: the judge whose decompose prompt splits.")
    force: bool = False


class SplitJobOut(Schema):
    id: int
    status: str


class SpanOut(Schema):
    passage_rank: int
    quote: str


class LabelOut(Schema):
    annotator: str
    verdict: str
    quote: str
    passage_rank: int | None
    more_quotes: list[SpanOut] = Field(
        description="The quote's spans after the first, when the decision needs several "
        "sentences (in order; empty for a quote of one span)."
    )
    note: str
    updated_at: datetime


class JudgeVerdictOut(Schema):
    judge: str
    verdict: str
    confidence: float | None


class RevealOut(Schema):
    judge_verdicts: list[JudgeVerdictOut]
    colleague_labels: list[LabelOut]


class LabelsOut(Schema):
    own: LabelOut | None
    revealed: RevealOut | None = Field(
        description="Only after your own label, where the project reveals after saving."
    )
    all: list[LabelOut] | None = Field(description="Every label: leads and owners only.")


class SpanIn(Schema):
    passage_rank: int = Field(ge=1, description="The rank of the span's passage.")
    quote: str = Field(min_length=1, description="The exact text of that passage.")


class LabelIn(Schema):
    verdict: Literal[VERDICT_VALUES]
    passage_rank: int | None = Field(None, ge=1, description="The rank of the quoted passage.")
    quote: str = Field("", description="The exact sentence of that passage that decides the claim.")
    more_quotes: list[SpanIn] = Field(
        default_factory=list,
        max_length=4,
        description="When the decision needs more than one sentence: the quote's further spans "
        "(up to 5 spans in all; each found at its first place in its passage; none may overlap "
        "another in one passage).",
    )
    note: str = Field("", max_length=5000)
    correct: Literal["", "yes", "no", "partial"] = ""


class GoldOut(Schema):
    id: int
    claim: int
    verdict: str
    source: str
    reason: str


class GoldPage(Schema):
    items: list[GoldOut]
    next: int | None


class GoldIn(Schema):
    verdict: Literal[VERDICT_VALUES]
    reason: str = Field(min_length=1)


# -- documentation only: the native import record (validated by interchange's importer) ----


class NativePassage(Schema):
    id: str | None = None
    title: str | None = None
    text: str


class NativeAnswer(Schema):
    """One answer as a line of a native JSON Lines file (DESIGN.md); extra fields allowed.
    Validation is the file import's, so its errors name the item and field."""

    model_config = ConfigDict(extra="allow")

    id: str
    question: str
    answer: str
    pile: list[NativePassage]
    reference: str | None = None
    risk_category: str | None = None
    answerable: bool | None = None
    abstention: bool | None = None
    metadata: dict[str, Any] | None = None
    citations: list[str | int] | None = None
    claims: list[dict[str, Any]] | None = None


class NativePreference(Schema):
    """One pairwise preference as a line of a native preferences file (DESIGN.md); validated
    by interchange's importer, so its errors name the item and field."""

    question_id: str | int
    system_a: str | dict[str, Any] = Field(description="NAME, NAME@VERSION or {name, version}.")
    system_b: str | dict[str, Any]
    annotator: str
    preference: Literal["A", "B", "tie"] | None = None
    strength: int | None = Field(
        None, ge=-2, le=2, description="−2 A clearly better … 0 tie … 2 B clearly better."
    )
    note: str | None = None


class PreferencesOut(Schema):
    created: int = Field(description="Preferences written by this request.")
    updated: int = Field(description="Preferences already imported, changed by this request.")
    unchanged: int = Field(description="Preferences already imported the same (left alone).")
    pairs: int
    annotators: int


class OtlpPartial(Schema):
    rejectedSpans: int = 0  # noqa: N815 - OTLP's own field names
    errorMessage: str = ""  # noqa: N815


class OtlpOut(Schema):
    """OTLP's ExportTraceServiceResponse, with what the traces became."""

    partialSuccess: OtlpPartial  # noqa: N815
    created: int
    existing: int
    skipped: int = Field(description="Traces without a retrieval or a generation span.")
