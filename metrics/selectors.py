"""Reads for reports and the dashboard.

Column reads feed `metrics.services.report_compute`: each is ONE query over one table (joined
only to filter by project), fetched straight from the cursor into a pandas DataFrame, so a
1M-claim project costs a handful of queries, never one per claim. The snapshot reads are what
pages use: they read the stored report, never recount.
"""

import io
import json

import numpy as np
import pandas as pd
from django.contrib.auth import get_user_model
from django.db import connection
from django.db.models import Count, F, Max, OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce
from django.db.models.lookups import Exact
from django.http import Http404

from annotate.models import (
    Answer,
    Claim,
    EvidenceSpan,
    Fact,
    Gold,
    ImportedAnnotator,
    Label,
    LabelHistory,
    PairwisePreference,
    Project,
    System,
    imported_name,
)
from annotate.vocabulary import Verdict
from judges.models import Judge, JudgeRun, JudgeVerdict, PairwiseVerdict
from metrics.models import ReportSnapshot
from metrics.sql import rows_as_csv_text
from testsets.models import SutRunItem, TruthCheck

# Runs whose verdicts count: finished, or still writing (their verdicts so far are real).
COUNTED_RUN_STATUSES = (JudgeRun.Status.DONE, JudgeRun.Status.RUNNING)


def _frame(queryset: QuerySet, columns: dict[str, str], quoted: tuple = ()) -> pd.DataFrame:
    """Run `queryset.values_list(*columns)` as one SQL query, rows straight into a DataFrame.

    `columns` maps ORM field paths to DataFrame column names. On PostgreSQL the rows come out
    as one CSV text into `pandas.read_csv` (a million rows in about a second); elsewhere
    (SQLite, the demo) through the ORM's values_list. Booleans come back as True/False,
    NULL as NaN/None, and text columns never NaN ("" for empty). Callers sort where order
    matters.
    """
    names = list(columns.values())
    if connection.vendor == "postgresql":
        sql, params = queryset.values_list(*columns).query.sql_with_params()
        text = rows_as_csv_text(sql, params, names=names, quoted=quoted)
        if not text:
            return pd.DataFrame({name: pd.Series(dtype=object) for name in names})
        return pd.read_csv(
            io.StringIO(text), names=names, header=None, keep_default_na=False, na_values=[""]
        )
    # Elsewhere the ORM's own one query (it was a cursor over the same SQL; no figure bought).
    rows = list(queryset.values_list(*columns))
    return pd.DataFrame.from_records(rows, columns=names, nrows=len(rows))


def _boolean(series: pd.Series) -> pd.Series:
    """PostgreSQL CSV 't'/'f', SQLite 1/0, or Python bools → True/False/None (object)."""

    def convert(value):
        if value is None or value != value:  # NULL, NaN
            return None
        if isinstance(value, str):
            return value in ("t", "true", "True", "1")
        return bool(value)

    return series.map(convert).astype(object)


def _text(frame: pd.DataFrame, *names: str) -> pd.DataFrame:
    for name in names:
        frame[name] = (
            frame[name].fillna("").astype(str) if len(frame) else frame[name].astype(object)
        )
    return frame


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
    """Every analyst label: claim, annotator, verdict, correctness mark.

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
        },
    )
    return _text(frame, "verdict", "correct")


def supported_evidence_columns(*, project: Project) -> pd.DataFrame:
    """The evidence quotes of SUPPORTED labels: claim, passage, start, end (for coverage), one
    row per span (a label's spans after the first are `EvidenceSpan` rows)."""
    first = _frame(
        Label.objects.filter(
            claim__project=project, verdict=Verdict.SUPPORTED, evidence_passage__isnull=False
        ),
        {
            "claim_id": "claim_id",
            "evidence_passage_id": "passage_id",
            "evidence_start": "start",
            "evidence_end": "end",
        },
    )
    more = _frame(
        EvidenceSpan.objects.filter(
            label__claim__project=project, label__verdict=Verdict.SUPPORTED
        ),
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


def fact_columns(*, project: Project) -> pd.DataFrame:
    """fact_id, answer_id, passage_id, start, end."""
    return _frame(
        Fact.objects.filter(answer__project=project).order_by("id"),
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


def _verdict_frame(queryset: QuerySet) -> pd.DataFrame:
    """Verdict rows, oldest first, with their run's instrument joined from a small run table."""
    verdicts = _frame(
        queryset.order_by("id"),
        {
            "id": "verdict_id",
            "claim_id": "claim_id",
            "verdict": "verdict",
            "confidence": "confidence",
            "run_id": "run_id",
        },
    )
    runs = pd.DataFrame.from_records(
        list(
            JudgeRun.objects.filter(pk__in=verdicts["run_id"].unique().tolist()).values_list(
                "id", "model", "prompt_version", "backend"
            )
        ),
        columns=["run_id", "model", "prompt_version", "backend"],
    )
    verdicts = _text(verdicts, "verdict").sort_values("verdict_id", kind="stable")
    verdicts["confidence"] = verdicts["confidence"].astype(float)
    if verdicts.empty:
        return verdicts.assign(model="", prompt_version="", backend="")
    runs["run_id"] = runs["run_id"].astype(verdicts["run_id"].dtype)
    return verdicts.merge(runs, on="run_id", how="left", sort=False)


def _verify_verdicts(judge: Judge) -> QuerySet:
    """The judge's claim verdicts from its verify runs (done or running)."""
    return JudgeVerdict.objects.filter(
        run__judge=judge,
        run__kind=JudgeRun.Kind.VERIFY,
        run__status__in=COUNTED_RUN_STATUSES,
        claim__isnull=False,
    )


def judge_verify_columns(*, judge: Judge) -> pd.DataFrame:
    """The judge's claim verdicts from its verify runs (done or running), oldest first; never
    one made on a claim's previous text (`stale`: a lead changed the claim since)."""
    return _verdict_frame(_verify_verdicts(judge).filter(stale=False))


def judge_stale_counts(*, judge: Judge) -> dict[tuple[str, str], int]:
    """(model, prompt version) → how many of the judge's verify verdicts were made on a claim's
    previous text and are left out (a small partial index, not a scan of the verdicts)."""
    rows = (
        _verify_verdicts(judge)
        .filter(stale=True)
        .values("run__model", "run__prompt_version")
        .annotate(n=Count("id"))
        .order_by()
    )
    return {(row["run__model"], row["run__prompt_version"]): row["n"] for row in rows}


def citation_columns(*, project: Project, judge: Judge | None = None) -> pd.DataFrame:
    """Verdicts of citation runs (claim against its cited passages alone), oldest first; not
    those made on a claim's previous text."""
    runs = Q(run__project=project, run__kind=JudgeRun.Kind.CITATION)
    if judge is not None:
        runs &= Q(run__judge=judge)
    return _verdict_frame(
        JudgeVerdict.objects.filter(
            runs, run__status__in=COUNTED_RUN_STATUSES, claim__isnull=False, stale=False
        )
    )


def canary_columns(*, judge: Judge) -> pd.DataFrame:
    """The judge's verdicts on canaries (statements absent from the pile), oldest first."""
    return (
        _frame(
            JudgeVerdict.objects.filter(
                run__judge=judge,
                run__kind=JudgeRun.Kind.CANARY,
                run__status__in=COUNTED_RUN_STATUSES,
                canary__isnull=False,
            ).order_by("id"),
            {
                "id": "verdict_id",
                "canary_id": "canary_id",
                "verdict": "verdict",
                "run__model": "model",
                "run__prompt_version": "prompt_version",
            },
        )
        .pipe(_text, "verdict", "model", "prompt_version")
        .sort_values("verdict_id", kind="stable")
    )


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


def judges_for_project(*, project: Project) -> QuerySet[Judge]:
    return Judge.objects.filter(project=project).order_by("name")


def judge_get_for_project(*, project: Project, judge_id) -> Judge:
    try:
        judge_id = int(judge_id)
    except (TypeError, ValueError):
        raise Http404("No such judge.") from None
    judge = Judge.objects.filter(project=project, pk=judge_id).first()
    if judge is None:
        raise Http404("No such judge.")
    return judge


def judge_get_by_name(*, project: Project, name: str) -> Judge | None:
    return Judge.objects.filter(project=project, name=name).first()


def judge_default_for_project(*, project: Project) -> Judge | None:
    """The judge whose verify run is newest: what a lead most likely wants to read."""
    run = (
        JudgeRun.objects.filter(project=project, kind=JudgeRun.Kind.VERIFY)
        .select_related("judge")
        .order_by("-created_at", "-id")
        .first()
    )
    if run is not None:
        return run.judge
    return judges_for_project(project=project).first()


def _snapshot_scope(system: System | None, all_systems: bool, default: bool) -> Q:
    """Snapshots of these answers: one system's, all systems' pooled, or the project's default
    (`default`: the scope asked for is the project's default one, which snapshots stored
    without a scope — the default's, as every snapshot before systems were picked — cover)."""
    scope = Q(system=system, all_systems=all_systems)
    if default:
        scope |= Q(system__isnull=True, all_systems=False)
    return scope


def snapshot_latest_done(
    *,
    project: Project,
    judge: Judge | None,
    system: System | None = None,
    all_systems: bool = False,
    default: bool = True,
) -> ReportSnapshot | None:
    return (
        ReportSnapshot.objects.filter(
            _snapshot_scope(system, all_systems, default),
            project=project,
            judge=judge,
            status=ReportSnapshot.Status.DONE,
        )
        .order_by("-computed_at", "-id")
        .first()
    )


def snapshot_unfinished(
    *,
    project: Project,
    judge: Judge | None,
    system: System | None = None,
    all_systems: bool = False,
    default: bool = True,
) -> ReportSnapshot | None:
    return (
        ReportSnapshot.objects.filter(
            _snapshot_scope(system, all_systems, default),
            project=project,
            judge=judge,
            status__in=[ReportSnapshot.Status.PENDING, ReportSnapshot.Status.RUNNING],
        )
        .order_by("-created_at", "-id")
        .first()
    )


def snapshot_latest_failed_after(
    *,
    project: Project,
    judge: Judge | None,
    after: ReportSnapshot | None,
    system: System | None = None,
    all_systems: bool = False,
    default: bool = True,
) -> ReportSnapshot | None:
    """A failed snapshot newer than the shown one: the page says the recompute failed."""
    failed = ReportSnapshot.objects.filter(
        _snapshot_scope(system, all_systems, default),
        project=project,
        judge=judge,
        status=ReportSnapshot.Status.FAILED,
    )
    if after is not None:
        failed = failed.filter(created_at__gt=after.created_at)
    return failed.order_by("-created_at", "-id").first()


def snapshot_get_for_project(*, project: Project, snapshot_id: int) -> ReportSnapshot:
    snapshot = (
        ReportSnapshot.objects.select_related("judge")
        .filter(project=project, pk=snapshot_id)
        .first()
    )
    if snapshot is None:
        raise Http404("No such report.")
    return snapshot


def judge_bits_columns(*, judge: Judge) -> pd.DataFrame:
    """Grounding bits of the judge's verify runs (done or running), oldest first: claim, bits,
    the stored confidence and the run's instrument; never a stale verdict, never one without
    bits (UNPARSEABLE)."""
    frame = _frame(
        _verify_verdicts(judge).filter(stale=False, bits__isnull=False).order_by("id"),
        {
            "id": "verdict_id",
            "claim_id": "claim_id",
            "verdict": "verdict",
            "bits": "bits",
            "confidence": "confidence",
            "run__model": "model",
            "run__prompt_version": "prompt_version",
        },
    )
    frame = _text(frame, "verdict", "model", "prompt_version")
    frame["bits"] = frame["bits"].astype(float)
    frame["confidence"] = frame["confidence"].astype(float)
    return frame.sort_values("verdict_id", kind="stable")


def judge_bits_threshold(*, judge: Judge, model: str, prompt_version: str) -> float:
    """The threshold of the instrument's newest run (0 when it set none)."""
    run = (
        JudgeRun.objects.filter(judge=judge, model=model, prompt_version=prompt_version)
        .order_by("-pk")
        .values_list("parameters", flat=True)
        .first()
    )
    return float((run or {}).get("bits_threshold") or 0.0)


def system_answer_columns(*, project: Project, system_ids: list[int]) -> pd.DataFrame:
    """answer_id, system_id, question key (the answer's question_id, else its question text),
    risk_category, abstention of the answers of `system_ids`, by answer id."""
    frame = _frame(
        Answer.objects.filter(project=project, system_id__in=system_ids).order_by("id"),
        {
            "id": "answer_id",
            "system_id": "system_id",
            "question_id": "question_id",
            "question": "question",
            "risk_category": "risk_category",
            "abstention": "abstention",
        },
        quoted=("question_id", "question"),
    )
    frame["abstention"] = _boolean(frame["abstention"]).fillna(False).astype(bool)
    frame = _text(frame, "question_id", "question", "risk_category")
    frame["question_key"] = frame["question_id"].where(
        frame["question_id"] != "", frame["question"]
    )
    return frame.drop(columns=["question_id", "question"])


def system_claim_columns(*, project: Project, system_ids: list[int]) -> pd.DataFrame:
    """claim_id, answer_id, the gold verdict ("" without gold) and the design stratum a file
    gave the claim ("" if none) of the claims of the answers of `system_ids`, by claim id."""
    frame = _frame(
        Claim.objects.filter(project=project, answer__system_id__in=system_ids).order_by("id"),
        {"id": "claim_id", "answer_id": "answer_id", "gold__verdict": "gold", "stratum": "stratum"},
        quoted=("stratum",),
    )
    # Integer ids even when there is no claim (an empty column is untyped), so merges on
    # them work for systems with answers but no claims yet.
    frame = frame.astype({"claim_id": "int64", "answer_id": "int64"})
    # Object columns: all empty on PostgreSQL they are read as float NaN.
    frame = frame.astype({"gold": object, "stratum": object})
    return _text(frame, "gold", "stratum")


def systems_for_project(*, project: Project) -> QuerySet:
    return System.objects.filter(project=project).order_by("id")


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


def snapshot_active_audit(*, project: Project, judge: Judge | None) -> dict | None:
    """The `active_audit` block of the latest done report (only that key is read)."""
    row = (
        ReportSnapshot.objects.filter(
            project=project, judge=judge, status=ReportSnapshot.Status.DONE
        )
        .order_by("-computed_at", "-id")
        .values_list("data__active_audit", flat=True)
        .first()
    )
    return row or None


def pairwise_verdict_rows(*, a: System, b: System, judge: Judge | None = None) -> dict:
    """The newest pairwise run on systems `a` and `b` (in either orientation; of `judge` when
    given): {"run": run or None, "swapped": the run's A is `b`, "rows": [(question_id, order,
    verdict)]}."""
    runs = JudgeRun.objects.filter(kind=JudgeRun.Kind.PAIRWISE, pairwise_verdicts__isnull=False)
    runs = runs.filter(
        Q(parameters__system_a=a.pk, parameters__system_b=b.pk)
        | Q(parameters__system_a=b.pk, parameters__system_b=a.pk)
    )
    if judge is not None:
        runs = runs.filter(judge=judge)
    run = runs.select_related("judge").order_by("-created_at", "-id").first()
    if run is None:
        return {"run": None, "swapped": False, "rows": []}
    rows = list(
        PairwiseVerdict.objects.filter(run=run)
        .order_by("question_id", "order")
        .values_list("question_id", "order", "verdict")
    )
    return {"run": run, "swapped": int(run.parameters.get("system_a")) == b.pk, "rows": rows}


def pairwise_preference_rows(*, a: System, b: System) -> list[tuple[str, str, str, int | None]]:
    """The people's pairwise preferences between systems `a` and `b`, from the blind screen
    and from files: [(question key, who, "B" | "A" | "tie", strength)], B and A as named here
    whichever system has the lower id. `who` is "analyst:<id>" or "imported:<name>" (one
    person, whichever path the mark came by); `strength` the file's grade (0–2) or None."""
    low, high = sorted((a.pk, b.pk))
    rows = PairwisePreference.objects.filter(system_1_id=low, system_2_id=high).values_list(
        "question_key", "analyst_id", "imported_annotator__name", "preferred_system_id", "strength"
    )
    side = {b.pk: "B", a.pk: "A", None: "tie"}
    return [
        (
            key,
            f"analyst:{analyst}" if analyst is not None else f"imported:{imported}",
            side[preferred],
            strength,
        )
        for key, analyst, imported, preferred, strength in rows.order_by("id")
    ]


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
