"""The queue's active and stratified designs from a judge run (issue 14).

`active_design_apply` reads a finished verify run's verdicts and confidences, estimates each
claim's P(SUPPORTED) (Platt-calibrated on the project's gold when there are at least
`CALIBRATION_MIN_GOLD` gold claims the run judged with a confidence; else the run's raw
confidence, which the judges store as P(SUPPORTED)), and stores through annotate
(`annotate.services.design.claims_design_store`, one transaction):

- **active**: π = `metrics.stats.active.inclusion_probabilities(sqrt(p(1 − p)), budget)` per
  claim (a claim at a time), or per answer (an answer at a time: the answer is the unit drawn,
  its error sd sqrt(Σ p_i(1 − p_i)) over its claims, the budget in answers the claims' budget
  times answers/claims; its claims share its π and keep their reading order);
- **stratified**: each claim's stratum, judge verdict × confidence band × risk category, with
  the judge's mean P(SUPPORTED) in the stratum as the prior of its S_h.

π are frozen: applied again, claims already labelled keep the π they were drawn with (see
`claims_design_store`). A claim the run did not judge gets p = 0.5 (the most uncertain: it is
drawn with the largest probability). Refused, with nothing written, without a finished run.
"""

import logging
import math
from collections.abc import Callable

import numpy as np
from celery import current_app
from django.db import transaction
from django.db.models import F
from kombu.exceptions import OperationalError as BrokerUnreachable

from annotate.models import Claim, Gold, Project, Verdict
from annotate.services.design import DesignError, claims_design_store, design_settings_check
from judges.models import JudgeRun, JudgeVerdict
from metrics import stats
from metrics.stats.active import inclusion_probabilities

logger = logging.getLogger(__name__)

CALIBRATION_MIN_GOLD = 30
# The confidence the judge has in its own verdict, in bands (the stratified design's strata).
CONFIDENCE_BANDS = (0.0, 0.6, 0.8, 0.9, 1.0)


def _band(confidence: float | None) -> str:
    if confidence is None or math.isnan(confidence):
        return "no confidence"
    for low, high in zip(CONFIDENCE_BANDS, CONFIDENCE_BANDS[1:], strict=False):
        if confidence < high or high == 1.0:
            return f"conf {low:g}–{high:g}"
    return "conf 0.9–1"


def design_run_get(*, project: Project, run_id) -> JudgeRun:
    """The project's finished verify run `run_id`; DesignError naming the field otherwise."""
    run = None
    if run_id not in (None, ""):
        try:
            run = JudgeRun.objects.filter(project=project, pk=int(run_id)).first()
        except (TypeError, ValueError):
            run = None
    if run is None or run.status != JudgeRun.Status.DONE or run.kind != JudgeRun.Kind.VERIFY:
        raise DesignError(
            "design_run_id: the active queue needs a finished judge run (a verify run of this "
            "project whose status is done)."
        )
    return run


def design_runs(*, project: Project):
    """The runs a lead may base a design on: the project's finished verify runs, newest first."""
    return (
        JudgeRun.objects.filter(
            project=project, status=JudgeRun.Status.DONE, kind=JudgeRun.Kind.VERIFY
        )
        .select_related("judge")
        .order_by(F("finished_at").desc(nulls_last=True), "-id")
    )


def design_runs_unfinished(*, project: Project):
    """The project's verify runs still judging (pending or running), newest first: offered to
    a design once they have finished."""
    return (
        JudgeRun.objects.filter(
            project=project,
            status__in=(JudgeRun.Status.PENDING, JudgeRun.Status.RUNNING),
            kind=JudgeRun.Kind.VERIFY,
        )
        .select_related("judge")
        .order_by("-id")
    )


def claim_support_probabilities(*, project: Project, run: JudgeRun) -> dict:
    """Per claim of the project: arrays `claim_id`, `answer_id`, `risk`, `verdict`,
    `confidence` (the run's, NaN when none) and `p`, the estimated P(SUPPORTED); and
    `calibrated`, whether `p` is Platt-calibrated on gold."""
    claims = list(
        Claim.objects.filter(project=project)
        .order_by("id")
        .values_list("id", "answer_id", "answer__risk_category")
    )
    claim_ids = np.array([c[0] for c in claims], dtype=np.int64)
    answer_ids = np.array([c[1] for c in claims], dtype=np.int64)
    risk = np.array([c[2] for c in claims], dtype=object)
    at = {claim_id: i for i, claim_id in enumerate(claim_ids.tolist())}
    verdict = np.full(claim_ids.size, "", dtype=object)
    confidence = np.full(claim_ids.size, np.nan)
    rows = JudgeVerdict.objects.filter(run=run, stale=False, claim__isnull=False).values_list(
        "claim_id", "verdict", "confidence"
    )
    for claim_id, said, conf in rows.iterator(chunk_size=10000):
        i = at.get(claim_id)
        if i is None:
            continue
        verdict[i] = said
        confidence[i] = np.nan if conf is None else float(conf)
    gold = dict(Gold.objects.filter(claim__project=project).values_list("claim_id", "verdict"))
    y = np.full(claim_ids.size, -1, dtype=np.int64)
    for claim_id, said in gold.items():
        i = at.get(claim_id)
        if i is not None:
            y[i] = 1 if said == Verdict.SUPPORTED else 0
    has_conf = ~np.isnan(confidence)
    fit = has_conf & (y >= 0)
    p = np.full(claim_ids.size, 0.5)
    calibrated = bool(fit.sum() >= CALIBRATION_MIN_GOLD)
    if calibrated:
        calibrator = stats.platt_calibrator(confidence[fit], y[fit])
        p[has_conf] = calibrator(confidence[has_conf])
    else:
        p[has_conf] = confidence[has_conf]
    no_conf = ~has_conf & (verdict != "")
    if no_conf.any():
        # A verdict without a confidence: the share of gold SUPPORTED among claims the run gave
        # that verdict (with ≥ 30 gold), else 0.5 (nothing known).
        for said in np.unique(verdict[no_conf]):
            among = (verdict == said) & (y >= 0)
            share = float(y[among].mean()) if among.sum() >= CALIBRATION_MIN_GOLD else 0.5
            p[no_conf & (verdict == said)] = share
    p = np.clip(p, 0.0, 1.0)
    return {
        "claim_id": claim_ids,
        "answer_id": answer_ids,
        "risk": risk,
        "verdict": verdict,
        "confidence": confidence,
        "p": p,
        "calibrated": calibrated,
    }


def active_probabilities(*, project: Project, support: dict, budget: int) -> np.ndarray:
    """π per claim (in `support`'s order) for the active design, budget `budget` claims."""
    p = support["p"]
    variance = p * (1.0 - p)
    if project.queue_order != Project.QueueOrder.ANSWER:
        return inclusion_probabilities(np.sqrt(variance), budget)
    answers, inverse = np.unique(support["answer_id"], return_inverse=True)
    answer_sd = np.sqrt(np.bincount(inverse, weights=variance, minlength=answers.size))
    answer_budget = budget * answers.size / max(1, p.size)
    return inclusion_probabilities(answer_sd, answer_budget)[inverse]


def active_strata_names(support: dict) -> np.ndarray:
    """The stratified design's stratum per claim: "SUPPORTED · conf 0.9–1 · health"."""
    names = np.empty(support["p"].size, dtype=object)
    for i, (said, conf, risk) in enumerate(
        zip(support["verdict"], support["confidence"], support["risk"], strict=True)
    ):
        if not said:
            names[i] = f"no verdict · {risk}"
            continue
        own = conf if said == Verdict.SUPPORTED else 1.0 - conf
        names[i] = f"{said} · {_band(None if math.isnan(own) else own)} · {risk}"
    return names


def active_design_apply(
    *,
    project: Project,
    run,
    budget: int | None,
    design: str = Project.QueueDesign.ACTIVE,
    progress: Callable[[float], None] | None = None,
) -> int:
    """Put `project`'s queue under `design` ("active" or "stratified") from judge run `run`
    (a JudgeRun or its id), with `budget` labels (required for active; it sets π). Returns the
    number of claims re-keyed.

    One transaction (`claims_design_store`): the claims' π or strata, their queue keys, the
    run's id and the budget on the project. π are frozen: applied again, claims already
    labelled keep the π they were drawn with (an answer at a time: every claim of an answer
    with a labelled claim). DesignError naming the field, with nothing written: no finished
    run ("the active queue needs a finished judge run"; the queue stays as it was), a budget
    ≤ 0 or above the claims, an unknown design.
    """
    if design not in (Project.QueueDesign.ACTIVE, Project.QueueDesign.STRATIFIED):
        raise DesignError(f"queue_design: {design!r} is not computed from a judge run.")
    run = design_run_get(project=project, run_id=run.pk if isinstance(run, JudgeRun) else run)
    if design == Project.QueueDesign.ACTIVE and budget is None:
        raise DesignError("label_budget: the active design needs a label budget (its π).")
    design_settings_check(project=project, fields={"label_budget": budget})
    support = claim_support_probabilities(project=project, run=run)
    if progress is not None:
        progress(0.1)
    ids = support["claim_id"].tolist()
    if design == Project.QueueDesign.ACTIVE:
        pi = active_probabilities(project=project, support=support, budget=int(budget))
        return claims_design_store(
            project=project,
            design=design,
            probabilities=dict(zip(ids, pi.tolist(), strict=True)),
            run_id=run.pk,
            budget=budget,
            progress=_scaled(progress),
        )
    names = active_strata_names(support)
    priors = {str(name): float(support["p"][names == name].mean()) for name in np.unique(names)}
    return claims_design_store(
        project=project,
        design=design,
        strata=dict(zip(ids, names.tolist(), strict=True)),
        priors=priors,
        run_id=run.pk,
        budget=budget,
        progress=_scaled(progress),
    )


def _scaled(progress: Callable[[float], None] | None) -> Callable[[float], None] | None:
    if progress is None:
        return None
    return lambda share: progress(0.1 + 0.9 * share)


# ------------------------------------------------------------------------------------------
# the job: a lead's request, computed by the `metrics.tasks.apply_active_design` task

APPLY_TASK = "metrics.tasks.apply_active_design"


def design_request_check(
    *, project: Project, design: str, run_id, budget: int | None, target_half_width: float | None
) -> JudgeRun | None:
    """DesignError naming the field for a request that cannot be applied; the run to use."""
    if design not in Project.QueueDesign.values:
        raise DesignError(f"queue_design: unknown design {design!r}.")
    design_settings_check(
        project=project, fields={"label_budget": budget, "target_half_width": target_half_width}
    )
    if design == Project.QueueDesign.UNIFORM:
        return None
    if design == Project.QueueDesign.ACTIVE and budget is None:
        raise DesignError("label_budget: the active design needs a label budget (its π).")
    return design_run_get(project=project, run_id=run_id)


@transaction.atomic
def active_design_request(
    *,
    project: Project,
    design: str,
    run_id=None,
    budget: int | None = None,
    target_half_width: float | None = None,
) -> None:
    """A lead's design: checked now (DesignError naming the field, nothing written), the
    target half-width stored, the design computed by the `apply_active_design` task once this
    transaction commits (in-process when Celery is eager). `Project.design_job` shows its
    state and progress; until the task is done the queue keeps its current design."""
    run = design_request_check(
        project=project,
        design=design,
        run_id=run_id,
        budget=budget,
        target_half_width=target_half_width,
    )
    job = {
        "state": "queued",
        "progress": 0.0,
        "design": design,
        "run": run.pk if run is not None else None,
        "budget": budget,
        "error": "",
    }
    Project.objects.filter(pk=project.pk).update(
        target_half_width=target_half_width, design_job=job
    )
    project.target_half_width, project.design_job = target_half_width, job
    transaction.on_commit(lambda: _enqueue(project.pk, design, job["run"], budget))


def _enqueue(project_id: int, design: str, run_id: int | None, budget: int | None) -> None:
    if current_app.conf.task_always_eager:
        active_design_job_run(project_id=project_id, design=design, run_id=run_id, budget=budget)
        return
    try:
        current_app.send_task(APPLY_TASK, args=(project_id, design, run_id, budget))
    except BrokerUnreachable:
        logger.exception("could not enqueue the queue design of project %s", project_id)
        _job_update(
            project_id,
            state="failed",
            error="the task queue (Redis) could not be reached; apply the design again once "
            "it is back",
        )


def _job_update(project_id: int, **changes) -> None:
    with transaction.atomic():
        project = Project.objects.select_for_update().filter(pk=project_id).first()
        if project is None:
            return
        project.design_job = {**(project.design_job or {}), **changes}
        project.save(update_fields=["design_job"])


def _progress(project_id: int, share: float) -> None:
    # Written only between the steps: inside the storing transaction no one else would see it.
    if not transaction.get_connection().in_atomic_block:
        _job_update(project_id, progress=round(min(max(share, 0.0), 1.0), 3))


def active_design_job_run(
    *, project_id: int, design: str, run_id: int | None, budget: int | None
) -> None:
    """The task's work: apply the design, recording running / done / failed (with the reason)
    and the progress on `Project.design_job`. A failure leaves the queue's design as it was."""
    project = Project.objects.filter(pk=project_id).first()
    if project is None:
        return
    _job_update(project_id, state="running", progress=0.0, error="")
    try:
        if design == Project.QueueDesign.UNIFORM:
            changed = claims_design_store(project=project, design=design)
        else:
            changed = active_design_apply(
                project=project,
                run=run_id,
                budget=budget,
                design=design,
                progress=lambda share: _progress(project_id, share),
            )
    except DesignError as error:
        _job_update(project_id, state="failed", error=str(error))
        return
    except Exception as error:
        logger.exception("queue design of project %s failed", project_id)
        _job_update(project_id, state="failed", error=f"{type(error).__name__}: {error}")
        return
    _job_update(project_id, state="done", progress=1.0, rekeyed=changed)
