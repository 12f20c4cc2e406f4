"""Column reads of a project's answers, claims, labels, gold, facts and evidence: one query each,
for the report (`metrics.services.report_compute`).
"""

import json

import numpy as np
import pandas as pd
from django.contrib.auth import get_user_model
from django.db.models import F, Max, OuterRef, Subquery
from django.db.models.functions import Coalesce
from django.db.models.lookups import Exact

from annotate.models import (
    Answer,
    Claim,
    EvidenceSpan,
    Fact,
    Gold,
    ImportedAnnotator,
    Label,
    LabelHistory,
    Project,
    imported_name,
)
from annotate.vocabulary import Verdict
from judges.models import JudgeVerdict
from metrics.selectors.frames import _boolean, _frame, _text
from testsets.models import SutRunItem, TruthCheck


def answer_columns(*, project: Project) -> pd.DataFrame:
    """answer_id, risk_category, answerable (True/False/None), abstention, system_id (NaN
    for an answer of no system)."""
    frame = _frame(
        Answer.objects.filter(project=project).order_by("id"),
        {
            "id": "answer_id",
            "risk_category": "risk_category",
            "answerable": "answerable",
            "abstention": "abstention",
            "system_id": "system_id",
        },
    )
    frame["abstention"] = _boolean(frame["abstention"]).fillna(False).astype(bool)
    frame["answerable"] = _boolean(frame["answerable"])
    return _text(frame, "risk_category")


def claim_columns(*, project: Project) -> pd.DataFrame:
    """claim_id, answer_id, stratum (the design stratum a file gave it, "" if none), ordered
    by claim id."""
    frame = _frame(
        Claim.objects.filter(project=project).order_by("id"),
        {"id": "claim_id", "answer_id": "answer_id", "stratum": "stratum"},
        quoted=("stratum",),
    )
    # An all-blank column comes back from CSV as float NaN: as text before filling.
    frame["stratum"] = frame["stratum"].astype(object)
    frame = _text(frame, "stratum")
    return frame.sort_values("claim_id", kind="stable", ignore_index=True)


def label_stratum_columns(*, project: Project) -> pd.DataFrame:
    """label_id, claim_id, stratum (the label's recorded queue stratum as JSON text) of every
    label whose stratum is not empty, oldest first (labels with `{}` are the whole-project
    queue: the caller needs only the others)."""
    frame = _frame(
        Label.objects.filter(claim__project=project).exclude(stratum={}).order_by("id"),
        {"id": "label_id", "claim_id": "claim_id", "stratum": "stratum"},
        quoted=("stratum",),
    )
    # JSON text from PostgreSQL's CSV; decoded dicts from the cursor elsewhere: one text form.
    frame["stratum"] = frame["stratum"].map(
        lambda value: value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    )
    return frame


def claims_with_whole_queue_labels(*, claim_ids: np.ndarray) -> np.ndarray:
    """Of `claim_ids`, those with a label saved from the whole-project queue (stratum `{}`)."""
    if not len(claim_ids):
        return np.empty(0, dtype=np.int64)
    rows = Label.objects.filter(claim_id__in=[int(i) for i in claim_ids], stratum={})
    return np.fromiter(rows.values_list("claim_id", flat=True).distinct(), dtype=np.int64)


def active_stratum_claim_ids(*, project: Project, name: str) -> np.ndarray:
    """Ids of the project's claims in the stratified queue design's stratum `name`."""
    rows = Claim.objects.filter(project=project, active_stratum=name).order_by("id")
    return np.fromiter(rows.values_list("id", flat=True), dtype=np.int64)


def run_verdict_claim_ids(*, run_id: int, verdict: str) -> np.ndarray:
    """Ids of the claims a judge run gave `verdict` (a queue stratum by the judge's verdict)."""
    frame = _frame(
        JudgeVerdict.objects.filter(
            run_id=run_id, verdict=verdict, claim__isnull=False, stale=False
        ).order_by("claim_id"),
        {"claim_id": "claim_id"},
    )
    return frame["claim_id"].to_numpy(dtype=np.int64)


def claim_tags(*, project: Project) -> pd.DataFrame:
    """One row per (claim_id, tag) for claims that carry tags."""
    raw = _frame(
        Claim.objects.filter(project=project).exclude(tags=[]).order_by("id"),
        {"id": "claim_id", "tags": "tags"},
        quoted=("tags",),
    )
    pairs: list[tuple[int, str]] = []
    for claim_id, tags in zip(raw["claim_id"].tolist(), raw["tags"].tolist(), strict=True):
        values = json.loads(tags) if isinstance(tags, str) else tags
        pairs.extend((claim_id, str(tag)) for tag in values or [])
    return pd.DataFrame(pairs, columns=["claim_id", "tag"])


def gold_columns(*, project: Project) -> pd.DataFrame:
    """claim_id, verdict, source of every gold verdict in the project."""
    frame = _frame(
        Gold.objects.filter(claim__project=project).order_by("claim_id"),
        {"claim_id": "claim_id", "verdict": "verdict", "source": "source"},
    )
    return _text(frame, "verdict", "source")


def label_columns(*, project: Project) -> pd.DataFrame:
    """Every analyst label: claim, annotator, verdict, correctness mark, and the guidelines
    version it was saved under (NaN: imported, or saved before versions were kept).

    `annotator_id` is the user's id, or minus the id of an imported annotator (labels that
    came in a file under a name, `annotate.models.ImportedAnnotator`); `annotator_names`
    names both. Labels changed after a reveal (the analyst saw the judge's or a colleague's
    verdict, then changed theirs) are left out unless the project counts them
    (`Project.count_changed_after_reveal`): they are no independent judgement.
    """
    labels = Label.objects.filter(claim__project=project)
    if not project.count_changed_after_reveal:
        labels = labels.exclude(changed_after_reveal=True)
    frame = _frame(
        labels.annotate(annotator_key=Coalesce(F("annotator_id"), -F("imported_annotator_id"))),
        {
            "claim_id": "claim_id",
            "annotator_key": "annotator_id",
            "verdict": "verdict",
            "correct": "correct",
            "guideline_version": "guideline_version",
        },
    )
    return _text(frame, "verdict", "correct")


def supported_evidence_columns(*, project: Project, claim_ids=None) -> pd.DataFrame:
    """The evidence quotes of SUPPORTED labels: claim, passage, start, end (for coverage), one
    row per span (a label's spans after the first are `EvidenceSpan` rows). `claim_ids`: of
    those claims only (the rollups' gold)."""
    labels = Label.objects.filter(
        claim__project=project, verdict=Verdict.SUPPORTED, evidence_passage__isnull=False
    )
    spans = EvidenceSpan.objects.filter(
        label__claim__project=project, label__verdict=Verdict.SUPPORTED
    )
    if claim_ids is not None:
        labels = labels.filter(claim_id__in=claim_ids)
        spans = spans.filter(label__claim_id__in=claim_ids)
    first = _frame(
        labels,
        {
            "claim_id": "claim_id",
            "evidence_passage_id": "passage_id",
            "evidence_start": "start",
            "evidence_end": "end",
        },
    )
    more = _frame(
        spans,
        {"label__claim_id": "claim_id", "passage_id": "passage_id", "start": "start", "end": "end"},
    )
    return first if more.empty else pd.concat([first, more], ignore_index=True)


def annotator_names(*, user_ids) -> dict[int, str]:
    """Annotator key (see `label_columns`) → name: the username, or "alice (imported)" for an
    imported annotator (two small queries)."""
    keys = [int(i) for i in user_ids]
    users = get_user_model().objects.filter(id__in=[k for k in keys if k > 0])
    names = dict(users.values_list("id", "username"))
    imported = ImportedAnnotator.objects.filter(id__in=[-k for k in keys if k < 0])
    names.update({-pk: imported_name(name) for pk, name in imported.values_list("id", "name")})
    return names


def fact_columns(*, project: Project, answer_ids=None) -> pd.DataFrame:
    """fact_id, answer_id, passage_id, start, end (`answer_ids`: of those answers only)."""
    facts = Fact.objects.filter(answer__project=project)
    if answer_ids is not None:
        facts = facts.filter(answer_id__in=answer_ids)
    return _frame(
        facts.order_by("id"),
        {
            "id": "fact_id",
            "answer_id": "answer_id",
            "passage_id": "passage_id",
            "start": "start",
            "end": "end",
        },
    )


def cited_claim_ids(*, project: Project) -> np.ndarray:
    """Ids of claims that cite at least one passage."""
    through = Claim.cited_passages.through
    frame = _frame(
        through.objects.filter(claim__project=project).order_by("claim_id").distinct(),
        {"claim_id": "claim_id"},
    )
    return frame["claim_id"].to_numpy(dtype=np.int64)


def label_history_max_id(*, project: Project) -> int:
    """The newest LabelHistory id of this project's claims: its labels saved later are 'since
    this report' (other projects' labels are not this report's)."""
    newest = LabelHistory.objects.filter(claim__project=project).aggregate(newest=Max("id"))
    return newest["newest"] or 0


def labels_since_count(*, project: Project, since_id: int) -> int:
    """Label changes in this project after `since_id`: a range scan on the primary key, each
    row's project looked up by its claim's primary key.

    Not a join: PostgreSQL planned `claim__project=project` as a hash join over every claim
    of the project (195 ms at 1M claims with 10k newer history rows in another project); the
    correlated lookup costs one index probe per newer history row (22 ms there), however
    large the project."""
    project_of_claim = (
        Claim.objects.filter(pk=OuterRef("claim_id")).order_by().values("project_id")[:1]
    )
    return (
        LabelHistory.objects.filter(id__gt=since_id)
        .filter(Exact(Subquery(project_of_claim), project.pk))
        .count()
    )


def active_claim_columns(*, project: Project) -> pd.DataFrame:
    """claim_id, inclusion_probability (NaN if none), active_stratum ("" if none),
    routed_to_judge of every claim of the project, ordered by claim id (issue 14)."""
    frame = _frame(
        Claim.objects.filter(project=project).order_by("id"),
        {
            "id": "claim_id",
            "inclusion_probability": "inclusion_probability",
            "active_stratum": "active_stratum",
            "routed_to_judge": "routed_to_judge",
        },
        quoted=("active_stratum",),
    )
    frame["active_stratum"] = frame["active_stratum"].astype(object)
    frame = _text(frame, "active_stratum")
    frame["inclusion_probability"] = frame["inclusion_probability"].astype(float)
    frame["routed_to_judge"] = _boolean(frame["routed_to_judge"]).fillna(False).astype(bool)
    return frame.sort_values("claim_id", kind="stable", ignore_index=True)


def label_design_columns(*, project: Project) -> pd.DataFrame:
    """claim_id, design, inclusion_probability of every label drawn under a queue design
    (`Label.design` not blank), oldest first (issue 14)."""
    frame = _frame(
        Label.objects.filter(claim__project=project).exclude(design="").order_by("id"),
        {
            "claim_id": "claim_id",
            "design": "design",
            "inclusion_probability": "inclusion_probability",
        },
    )
    frame = _text(frame, "design")
    frame["inclusion_probability"] = frame["inclusion_probability"].astype(float)
    return frame


def ground_truth_columns(*, project: Project) -> pd.DataFrame:
    """claim_id and the automatic check's verdict ("" when not checked yet) of every claim of
    an answer a system under test gave to a test question (testsets' `SutRunItem.answer`): the
    claims that have a ground truth. The newest method's verdict when a claim has several."""
    answers = SutRunItem.objects.filter(run__project=project, answer__isnull=False)
    claims = _frame(
        Claim.objects.filter(project=project, answer_id__in=answers.values("answer_id")).order_by(
            "id"
        ),
        {"id": "claim_id"},
    )
    checks = _frame(
        TruthCheck.objects.filter(claim__project=project).order_by("claim_id", "created_at", "id"),
        {"claim_id": "claim_id", "verdict": "truth"},
    )
    checks = _text(checks, "truth").drop_duplicates("claim_id", keep="last")
    frame = claims.merge(checks, on="claim_id", how="left")
    frame["truth"] = frame["truth"].fillna("").astype(str)
    return frame
