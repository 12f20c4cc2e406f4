"""The report's section types: the frozen dataclass each section's builder returns
(`metrics.services.report` declares the sections; `metrics.services.report_schema` makes the
JSON Schema from these).

A field's order is its key's order in the report JSON. Nested parts whose keys are stable are
TypedDicts (the values stay the dicts the figure modules build); a part whose keys depend on
the data or on a registry (a risk category's name, an estimator's key, a judge instrument's
block with its backend's extras) is a `Mapping[str, Any]` — typed no further than is true.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from typing_extensions import TypedDict

from metrics.services.sections import flattened, omitted

Interval = tuple[float | None, float | None]


class Proportion(TypedDict):
    """A count over a count with its interval (Wilson, or clustered: see `interval_method`)."""

    value: float | None
    ci: Interval
    numerator: int
    denominator: int


class DesignRate(Proportion):
    """A design-based rate (`audit_design.design_rate`): clustered by answer, stratified."""

    design_effect: float | None
    answers: int
    strata: int
    unseen_share: float | None
    interval_method: str


class MeanPerAnswer(TypedDict):
    value: float | None
    answers: int


class Faithfulness(TypedDict):
    pooled: DesignRate
    mean_per_answer: MeanPerAnswer


class CoverageRate(DesignRate):
    f1: float | None
    measured: bool


class CitationRate(DesignRate):
    cited_claims: int
    checked: int
    measured: bool
    status: str


class SelfKnowledge(TypedDict):
    unfaithful_claims: int
    self_knowledge: DesignRate
    hallucination: DesignRate
    unmarked: int


# ------------------------------------------------------------------------------------------
# top-level sections


@dataclass(frozen=True)
class ProjectRef:
    slug: str
    name: str


@dataclass(frozen=True)
class SystemEntry:
    name: str
    version: str
    metadata: Mapping[str, Any]


@dataclass(frozen=True)
class Header:
    """Spread at the top: which project, when, and which of its systems the report covers."""

    project: ProjectRef
    computed_at: str
    labels_at_compute: int | None
    system: SystemEntry | None = omitted()
    system_scope: str | None = omitted()
    systems: tuple[SystemEntry, ...] | None = omitted()


@dataclass(frozen=True)
class ClaimCounts:
    SUPPORTED: int
    CONTRADICTED: int
    NOT_IN_PILE: int
    total: int
    in_project: int
    without_gold: int
    in_abstentions: int


@dataclass(frozen=True)
class ProjectRates:
    """Spread at the top: the project's gold rates."""

    claims: ClaimCounts
    faithfulness: Faithfulness
    contradiction_rate: DesignRate
    not_in_pile_rate: DesignRate
    hallucination_rate: DesignRate
    answers_with_unsupported_rate: Proportion


@dataclass(frozen=True)
class Abstention:
    rate: Proportion
    by_answerable: Mapping[str, Proportion]
    abstentions: int
    answers: int


@dataclass(frozen=True)
class Coverage:
    """Marked facts grounded, with F1 against faithfulness (the coverage rate itself)."""

    figure: CoverageRate = flattened()


@dataclass(frozen=True)
class Citation:
    figure: CitationRate = flattened()


@dataclass(frozen=True)
class SelfKnowledgeSection:
    figure: SelfKnowledge = flattened()


@dataclass(frozen=True)
class Groups:
    """Every rate per risk category or claim tag (keys are the groups' names)."""

    groups: Mapping[str, Mapping[str, Any]] = flattened()


@dataclass(frozen=True)
class AnalystPair:
    a: str
    b: str
    n: int
    agreement: float | None
    kappa: float | None


@dataclass(frozen=True)
class AnalystVsGold:
    annotator: str
    n: int
    agreement: float | None
    kappa: float | None


@dataclass(frozen=True)
class Analysts:
    krippendorff_alpha: float | None
    analysts: int
    labels: int
    multi_labelled_claims: int
    per_analyst: tuple[AnalystVsGold, ...]
    pairwise: tuple[AnalystPair, ...]
    human_human_kappa: float | None
    human_pairs: int


@dataclass(frozen=True)
class GuidelineVersion:
    """One guidelines version's labels and gold, and the agreement measured under it."""

    version: int | None  # None: labels saved with no version (imported, or older)
    current: bool
    labels: int
    analysts: int
    multi_labelled_claims: int
    analyst_pairs: int
    analyst_agreement: float | None
    krippendorff_alpha: float | None
    gold_claims: int
    judge_audited: int
    judge_agreement: float | None
    judge_agreement_ci: tuple[float | None, float | None]
    judge_kappa: float | None
    judge_kappa_ci: tuple[float | None, float | None]


@dataclass(frozen=True)
class Guidelines:
    """Only when labels were made under two guidelines versions or more (issue 28 item 5)."""

    current_version: int
    versions: tuple[GuidelineVersion, ...]
    mixed_gold: bool
    warning: str | None
    method: str


@dataclass(frozen=True)
class LeftOutInstrument:
    model: str | None
    prompt_version: str | None
    stale_verdicts: int


@dataclass(frozen=True)
class JudgeAudits:
    """Spread at the top, only with a judge: its instruments' audits, the newest as `judge`."""

    instruments_left_out: tuple[LeftOutInstrument, ...] | None = omitted()
    judge: Mapping[str, Any] | None = omitted()
    instruments: tuple[Mapping[str, Any], ...] | None = omitted()


@dataclass(frozen=True)
class BackendBlocks:
    """Spread at the top: the block a judge's backend declares, under its `report_key`."""

    blocks: Mapping[str, Mapping[str, Any]] = flattened()


@dataclass(frozen=True)
class OutsideQueue:
    labels: int
    gold_claims_left_out: int
    counted: bool
    text: str


@dataclass(frozen=True)
class Design:
    """The claims' design strata, what the audit cannot see, and each figure's design effect."""

    design: str
    weighted: bool
    phases: Any
    active_gold_left_out: int
    strata: tuple[Mapping[str, Any], ...]
    n_strata: int
    answers_audited: int
    gold_claims: int
    claims_per_audited_answer: float | None
    unseen_share: float | None
    outside_queue: OutsideQueue
    design_effects: tuple[Mapping[str, Any], ...]
    method: str


@dataclass(frozen=True)
class MethodStrings:
    """How each figure was measured, in words; built after the sections it describes.
    `judge`: one string per registered estimator (`judge_<key>`) and `judge_audit`."""

    faithfulness: str
    contradiction_rate: str
    answers_with_unsupported_rate: str
    abstention: str
    coverage: str
    coverage_by_risk_category: str
    coverage_by_tag: str
    citation_accuracy: str
    judge: Mapping[str, str] = flattened()
    design: str = field(kw_only=True)


@dataclass(frozen=True)
class Block:
    """A block whose keys depend on the data (ground truth, active audit, a backend's)."""

    figure: Mapping[str, Any] = flattened()


# ------------------------------------------------------------------------------------------
# internal: what travels between sections, never in the report


@dataclass(frozen=True)
class FactLinks:
    links: pd.DataFrame
    grounded: np.ndarray


@dataclass(frozen=True)
class JudgeRun:
    """The judge's instruments audited: their blocks, each one's compact CRC inputs (kept in
    the snapshot's own column) and the headline instrument's per-claim arrays."""

    blocks: tuple[Mapping[str, Any], ...]
    left_out: tuple[Mapping[str, Any], ...]
    crc_inputs: tuple
    judged: Any
