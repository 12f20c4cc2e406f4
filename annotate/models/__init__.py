"""Projects, members, answers with their pile, claims, labels, gold and facts.

Invariants the database can hold are constraints here; the ones it cannot (a quote's span lies
inside its passage, the passage belongs to the claim's answer) are checked by `clean()` and by
`annotate.services.label_save`, the only writer of labels.

One module per concept (`annotate/models/<concept>.py`); every name is re-exported here so
`from annotate.models import X` keeps working and Django finds the models under app "annotate".
"""

from annotate.models.answers import Answer, Passage, System
from annotate.models.choices import ROLE_RANK, ClaimTag, Correctness, RiskCategory, Role, Verdict
from annotate.models.claims import ActiveStratum, Claim
from annotate.models.comments import COMMENT_LENGTH_MAX, ClaimComment
from annotate.models.facts import Fact
from annotate.models.gold import Gold
from annotate.models.imports import ImportJob, import_upload_to
from annotate.models.labels import (
    EVIDENCE_SPANS_MAX,
    IMPORTED_SUFFIX,
    LABEL_SECONDS_MAX,
    EvidenceSpan,
    ImportedAnnotator,
    Label,
    LabelHistory,
    LabelTime,
    imported_name,
)
from annotate.models.pairwise import PairwisePreference
from annotate.models.projects import Membership, Project
from annotate.models.queue import ClaimSkip, Reservation, Reveal
from annotate.models.sessions import UserSession

__all__ = [
    "ActiveStratum",
    "Answer",
    "Claim",
    "COMMENT_LENGTH_MAX",
    "ClaimComment",
    "ClaimSkip",
    "ClaimTag",
    "Correctness",
    "EVIDENCE_SPANS_MAX",
    "EvidenceSpan",
    "Fact",
    "Gold",
    "IMPORTED_SUFFIX",
    "ImportJob",
    "ImportedAnnotator",
    "LABEL_SECONDS_MAX",
    "Label",
    "LabelHistory",
    "LabelTime",
    "Membership",
    "PairwisePreference",
    "Passage",
    "Project",
    "ROLE_RANK",
    "Reservation",
    "Reveal",
    "RiskCategory",
    "Role",
    "System",
    "UserSession",
    "Verdict",
    "import_upload_to",
    "imported_name",
]
