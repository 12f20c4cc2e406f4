"""One answer as read from a file, in any format, before it touches the database.

Every parser (native, ragas, ragchecker) turns a record into an `AnswerIn`, already checked for
types, verdicts and quotes against its own pile, so the writer only has to check what needs the
database (ids already in the project, judges that exist with another backend).
"""

from dataclasses import dataclass, field

from interchange.importers.systems import SystemIn


@dataclass
class PassageIn:
    source_id: str
    title: str
    text: str


@dataclass
class QuoteIn:
    passage_index: int  # 0-based index into AnswerIn.pile
    start: int  # code points
    end: int
    text: str


@dataclass
class LabelIn:
    annotator: str  # username
    verdict: str
    quote: QuoteIn | None = None
    more_quotes: list[QuoteIn] = field(default_factory=list)  # its spans after the first
    note: str = ""
    correct: str = ""
    field: str = ""  # where in the record, for errors found later
    changed_after_reveal: bool = False  # as an export says: left out of gold and agreement


@dataclass
class GoldIn:
    verdict: str
    source: str
    reason: str = ""
    decided_by: str = ""


@dataclass
class JudgeVerdictIn:
    name: str
    verdict: str
    confidence: float | None = None
    prompt_version: str = "imported"
    model: str = ""
    kind: str = "verify"
    run: str = ""  # distinguishes two runs of one judge and prompt version in one file
    raw_response: str = ""
    field: str = ""


@dataclass
class ClaimIn:
    text: str
    position: int
    origin: str = "manual"
    tags: list[str] = field(default_factory=list)
    stratum: str = ""  # the audit design stratum; blank: the project's default
    citations: list[int] = field(default_factory=list)  # 0-based pile indexes
    span: tuple[int, int] | None = None
    labels: list[LabelIn] = field(default_factory=list)
    gold: GoldIn | None = None
    judges: list[JudgeVerdictIn] = field(default_factory=list)


@dataclass
class AnswerIn:
    location: str
    external_id: str
    question: str
    text: str
    pile: list[PassageIn] = field(default_factory=list)
    reference: str = ""
    risk_category: str = "none"
    answerable: bool | None = None
    abstention: bool = False
    metadata: dict = field(default_factory=dict)
    claims: list[ClaimIn] = field(default_factory=list)
    system: SystemIn | None = None
    question_id: str = ""  # the question key shared by systems' answers to one question
    # The file's id names the question (RAGChecker's query_id, a RAGAS id column), not one
    # system's answer: an import `--system S` keeps it as the question key and ids the answer
    # "S:<id>", so two systems' files of the same questions go into one project.
    id_is_question: bool = False
