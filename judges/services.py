"""Every write in judges goes through a service here, named <entity>_<verb>."""

from __future__ import annotations

import logging
from datetime import timedelta

from celery import current_app
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Max
from django.utils import timezone
from kombu.exceptions import OperationalError as BrokerUnreachable

from annotate.models import Answer, Project, System
from judges.backends.base import JudgeConfigError
from judges.backends.registry import backend_kind
from judges.canaries import canaries_transplant as canaries_transplant
from judges.canaries import canary_add as canary_add
from judges.endpoints import HOW_TO_DECLARE, EndpointNotDeclared, endpoint_get, endpoints_declared
from judges.models import Backend, Canary, Judge, JudgeFailure, JudgeRun, prompt_version
from judges.pairwise_runner import shared_pairs
from judges.prompts import (
    DEFAULT_DECOMPOSE_PROMPT,
    DEFAULT_PAIRWISE_PROMPT,
    DEFAULT_VERIFY_PROMPT,
    pairwise_prompt_problem,
)
from judges.runner import lease_seconds
from judges.selectors import claims_in_scope

logger = logging.getLogger(__name__)

# Parameters a judge may carry in `parameters` that the OpenAI backend understands.
OPENAI_PARAMETERS = ("max_tokens", "top_logprobs", "backoff_base_s", "backoff_cap_s")
# ... and those of a grounding-bits judge (judges/backends/bits_backend.py).
BITS_PARAMETERS = ("bits_threshold", "bits_mode")
# What a judge asks for when it says nothing (an endpoint's caps lower them).
DEFAULT_TIMEOUT_SECONDS = 30.0
DEFAULT_MAX_RETRIES = 5
DEFAULT_MAX_CONCURRENCY = 8
JUDGE_FIELDS = (
    "name",
    "backend",
    "model",
    "endpoint",
    "temperature",
    "max_concurrency",
    "timeout_seconds",
    "max_retries",
    "verify_prompt",
    "decompose_prompt",
    "pairwise_prompt",
)


def _pairwise_prompt_set(judge: Judge, text: str | None) -> None:
    """Store the judge's pairwise prompt in `parameters["pairwise_prompt"]` (blank or the
    default: none stored, the default applies); ValidationError naming the placeholders it
    lacks."""
    if text is None:
        return
    text = text.strip()
    parameters = dict(judge.parameters or {})
    if not text or text == DEFAULT_PAIRWISE_PROMPT.strip():
        parameters.pop("pairwise_prompt", None)
    else:
        problem = pairwise_prompt_problem(text)
        if problem:
            raise ValidationError({"pairwise_prompt": problem})
        parameters["pairwise_prompt"] = text
    judge.parameters = parameters


def endpoint_choice_error(name: str) -> str:
    """Why `name` cannot be a judge's endpoint, in words a lead can act on."""
    declared = endpoints_declared()
    if not declared:
        return "No LLM endpoint is declared on this deployment. " + HOW_TO_DECLARE
    choices = ", ".join(sorted(declared))
    if not name:
        return f"Choose one of the endpoints the operator declared: {choices}."
    return (
        f"{name!r} is not an endpoint declared by the operator. Choose one of: {choices}. "
        "(A judge cannot name a URL or a key variable: the operator declares endpoints.)"
    )


def _kind_or_error(name: str):
    """The registered backend of that name, or the form's error naming the choices."""
    try:
        return backend_kind(name)
    except JudgeConfigError as exc:
        raise ValidationError({"backend": str(exc)}) from None


def _verify_prompt_check(judge: Judge) -> None:
    if backend_kind(judge.backend).verify_prompt_needs_claim and "{claim}" not in (
        judge.verify_prompt
    ):
        raise ValidationError({"verify_prompt": "The verify prompt must contain {claim}."})


def _judge_check(judge: Judge) -> None:
    """Fill what the judge left blank and refuse what it may not ask for: an endpoint the
    operator has not declared, a model the endpoint does not offer, more time, retries or
    concurrency than the endpoint's caps. Lowering them is always allowed."""
    if not backend_kind(judge.backend).needs_endpoint:
        judge.endpoint = ""
        judge.timeout_seconds = judge.timeout_seconds or DEFAULT_TIMEOUT_SECONDS
        judge.max_retries = DEFAULT_MAX_RETRIES if judge.max_retries is None else judge.max_retries
        judge.max_concurrency = judge.max_concurrency or DEFAULT_MAX_CONCURRENCY
        return
    errors: dict[str, str] = {}
    if not judge.model:
        errors["model"] = "A judge on an OpenAI-compatible endpoint needs a model name."
    try:
        endpoint = endpoint_get(judge.endpoint)
    except EndpointNotDeclared:
        errors["endpoint"] = endpoint_choice_error(judge.endpoint)
        raise ValidationError(errors) from None
    if endpoint.models and judge.model and judge.model not in endpoint.models:
        errors["model"] = (
            f"Endpoint {endpoint.name} offers the models {', '.join(endpoint.models)}; "
            f"{judge.model!r} is not one of them."
        )
    caps = (
        ("timeout_seconds", endpoint.timeout_seconds, "{:g} s"),
        ("max_retries", endpoint.max_retries, "{} retries"),
        ("max_concurrency", endpoint.max_concurrency, "{} calls at a time"),
    )
    for field, cap, unit in caps:
        value = getattr(judge, field)
        if value is None or value == "":
            setattr(judge, field, cap)
        elif value > cap:
            errors[field] = (
                f"At most {unit.format(cap)} for endpoint {endpoint.name} (the operator's "
                "cap); ask for less or leave it blank for the cap."
            )
    if errors:
        raise ValidationError(errors)


@transaction.atomic
def judge_create(
    *,
    project: Project,
    name: str,
    backend: str = Backend.BASELINE,
    model: str = "",
    endpoint: str = "",
    temperature: float = 0.0,
    max_concurrency: int | None = None,
    timeout_seconds: float | None = None,
    max_retries: int | None = None,
    verify_prompt: str = "",
    decompose_prompt: str = "",
    pairwise_prompt: str | None = None,
    parameters: dict | None = None,
) -> Judge:
    """Configure a judge. An OpenAI-compatible judge names an endpoint the operator declared
    (judges/endpoints.py); it cannot give a URL or a key variable. Timeout, retries and
    concurrency left blank take the endpoint's caps; above them they are refused."""
    kind = _kind_or_error(backend)
    model = model or kind.default_model
    judge = Judge(
        project=project,
        name=name,
        backend=backend,
        model=model,
        endpoint=endpoint or "",
        temperature=temperature,
        max_concurrency=max_concurrency,
        timeout_seconds=timeout_seconds,
        max_retries=max_retries,
        verify_prompt=(verify_prompt or "").strip() or DEFAULT_VERIFY_PROMPT,
        decompose_prompt=(decompose_prompt or "").strip() or DEFAULT_DECOMPOSE_PROMPT,
        parameters=parameters or {},
    )
    _pairwise_prompt_set(judge, pairwise_prompt)
    _judge_check(judge)
    judge.full_clean()
    _verify_prompt_check(judge)
    judge.save()
    return judge


@transaction.atomic
def judge_update(*, judge: Judge, **fields) -> Judge:
    """Change a judge's configuration. Runs already made keep the instrument they froze; a new
    prompt text is a new prompt version, audited afresh by the next run."""
    unknown = set(fields) - set(JUDGE_FIELDS)
    if unknown:
        raise ValidationError(f"Unknown judge fields: {', '.join(sorted(unknown))}.")
    _pairwise_prompt_set(judge, fields.pop("pairwise_prompt", None))
    for key, value in fields.items():
        setattr(judge, key, value)
    judge.endpoint = judge.endpoint or ""
    judge.verify_prompt = (judge.verify_prompt or "").strip() or DEFAULT_VERIFY_PROMPT
    judge.decompose_prompt = (judge.decompose_prompt or "").strip() or DEFAULT_DECOMPOSE_PROMPT
    _kind_or_error(judge.backend)
    _judge_check(judge)
    _verify_prompt_check(judge)
    judge.full_clean()
    judge.save()
    return judge


def judge_endpoint_problem(judge: Judge) -> str:
    """Why this judge cannot call its endpoint now ("" when it can, or needs none): for its
    page, and to refuse a run or a split before it is queued."""
    if not backend_kind(judge.backend).needs_endpoint:
        return ""
    try:
        endpoint = endpoint_get(judge.endpoint)
    except EndpointNotDeclared:
        return (
            f"This judge has no usable endpoint ({judge.endpoint!r} is not declared). "
            if judge.endpoint
            else "This judge has no endpoint yet. "
        ) + endpoint_choice_error("")
    if endpoint.models and judge.model not in endpoint.models:
        return (
            f"Endpoint {endpoint.name} no longer offers the model {judge.model!r} "
            f"(models: {', '.join(endpoint.models)}): choose another model."
        )
    return ""


def judge_spec(judge: Judge) -> dict:
    """The instrument as a plain dict: what a run freezes. Names the endpoint only; its URL
    and key variable are looked up when a call is made."""
    spec = {
        "backend": judge.backend,
        "model": judge.model,
        "endpoint": judge.endpoint,
        "temperature": judge.temperature,
        "timeout_seconds": judge.timeout_seconds,
        "max_retries": judge.max_retries,
        "max_concurrency": judge.max_concurrency,
        "verify_prompt": judge.verify_prompt or DEFAULT_VERIFY_PROMPT,
        "decompose_prompt": judge.decompose_prompt or DEFAULT_DECOMPOSE_PROMPT,
    }
    for key in OPENAI_PARAMETERS + BITS_PARAMETERS:
        if key in (judge.parameters or {}):
            spec[key] = judge.parameters[key]
    return spec


@transaction.atomic
def judge_run_start(
    *,
    judge: Judge,
    kind: str = "verify",
    scope: str = "all",
    user=None,
    enqueue: bool = True,
    among=None,
    among_described: str = "",
) -> JudgeRun:
    """Freeze the instrument, count the work, and enqueue the run once this transaction commits
    (`enqueue=False`: the caller executes it, as `run_judge --wait` does without a broker).

    The set of items is frozen as an id bound: claims (or canaries) imported after the start
    are not part of this run. `among` (a queryset or list of answer ids: the answers list's
    filtered set, described in words by `among_described`) narrows a claims run to those
    answers' claims, frozen as the list of answer ids; refused when they have none.
    """
    if kind not in JudgeRun.Kind.values or kind == JudgeRun.Kind.PAIRWISE:
        raise ValidationError(
            {
                "kind": f"Unknown run kind {kind!r}: use verify, citation or canary "
                "(pairwise runs start with pairwise_run_start: manage.py pairwise_judge)."
            }
        )
    if scope not in JudgeRun.Scope.values:
        raise ValidationError(
            {"scope": f"Unknown claim scope {scope!r}: use all, unjudged or gold."}
        )
    problem = judge_endpoint_problem(judge)
    if problem:
        raise ValidationError({"endpoint": problem})
    spec = judge_spec(judge)
    prompt_text, spec = backend_kind(judge.backend).instrument(spec)
    answer_ids = None
    if among is not None:
        if kind == JudgeRun.Kind.CANARY:
            raise ValidationError({"kind": "A canary run judges canaries, not listed answers."})
        answer_ids = sorted(
            Answer.objects.filter(project_id=judge.project_id, pk__in=among).values_list(
                "pk", flat=True
            )
        )
    if kind == JudgeRun.Kind.CANARY:
        items = Canary.objects.filter(project=judge.project)
        scope = JudgeRun.Scope.ALL
    else:
        items = claims_in_scope(
            project_id=judge.project_id,
            kind=kind,
            scope=scope,
            judge_id=judge.pk,
            answer_ids=answer_ids,
        )
        if answer_ids is not None and not items.exists():
            raise ValidationError(
                {"scope": "The answers listed have no claims in that scope: nothing to judge."}
            )
    bound = items.aggregate(m=Max("pk"))["m"] or 0
    run = JudgeRun.objects.create(
        judge=judge,
        project=judge.project,
        kind=kind,
        scope=scope,
        status=JudgeRun.Status.PENDING,
        backend=judge.backend,
        model=judge.model,
        prompt_text=prompt_text,
        prompt_version=prompt_version(prompt_text),
        parameters={**spec, "items_up_to_id": bound},
        answer_ids=answer_ids,
        answers_filter=among_described[:500] if answer_ids is not None else "",
        created_by=user if user is not None and user.is_authenticated else None,
    )
    # Counted after the run exists, so an "unjudged" scope excludes exactly what the run will.
    run.total = items.filter(pk__lte=bound).count()
    run.save(update_fields=["total"])
    if enqueue:
        _enqueue(run.pk)
    return run


@transaction.atomic
def pairwise_run_start(
    *, judge: Judge, a: System, b: System, user=None, enqueue: bool = True
) -> JudgeRun:
    """Judge every question systems `a` and `b` both answered, in both orders
    (judges/pairwise_runner.py), and enqueue the work once this transaction commits.

    Idempotent: the judge's earlier pairwise run of the same two systems with the same model
    and prompt is carried on (only its (question, order) items without a stored verdict are
    asked); a live one is returned as it is. Another model or prompt is a new instrument and a
    new run.
    """
    if a.project_id != judge.project_id or b.project_id != judge.project_id:
        raise ValidationError({"system": "Both systems must belong to the judge's project."})
    if a.pk == b.pk:
        raise ValidationError({"system": "Choose two different systems (A and B)."})
    if not backend_kind(judge.backend).can_pairwise:
        raise ValidationError(
            {"backend": "Pairwise judging needs an OpenAI-compatible judge (backend openai)."}
        )
    problem = judge_endpoint_problem(judge)
    if problem:
        raise ValidationError({"endpoint": problem})
    shared = len(shared_pairs(system_a_id=a.pk, system_b_id=b.pk))
    if not shared:
        raise ValidationError(
            {"system": f"{a} and {b} answered no question in common (the same question_id)."}
        )
    spec = judge_spec(judge)
    spec.pop("verify_prompt")
    spec.pop("decompose_prompt")
    prompt_text = (judge.parameters or {}).get("pairwise_prompt") or DEFAULT_PAIRWISE_PROMPT
    version = prompt_version(prompt_text)
    existing = (
        JudgeRun.objects.select_for_update()
        .filter(
            judge=judge,
            kind=JudgeRun.Kind.PAIRWISE,
            model=judge.model,
            prompt_version=version,
            parameters__system_a=a.pk,
            parameters__system_b=b.pk,
        )
        .order_by("-created_at", "-id")
        .first()
    )
    if existing is not None and existing.status in (
        JudgeRun.Status.PENDING,
        JudgeRun.Status.RUNNING,
    ):
        return existing
    parameters = {**spec, "pairwise_prompt": prompt_text, "system_a": a.pk, "system_b": b.pk}
    if existing is not None:
        existing.status = JudgeRun.Status.PENDING
        existing.error = ""
        existing.finished_at = None
        existing.lease_owner = ""
        existing.parameters = parameters
        existing.save(update_fields=["status", "error", "finished_at", "lease_owner", "parameters"])
        run = existing
    else:
        run = JudgeRun.objects.create(
            judge=judge,
            project=judge.project,
            kind=JudgeRun.Kind.PAIRWISE,
            scope=JudgeRun.Scope.ALL,
            status=JudgeRun.Status.PENDING,
            backend=judge.backend,
            model=judge.model,
            prompt_text=prompt_text,
            prompt_version=version,
            parameters=parameters,
            created_by=user if user is not None and user.is_authenticated else None,
        )
    run.total = 2 * shared  # both orders of every pair; counted again when it executes
    run.save(update_fields=["total"])
    if enqueue:
        _enqueue(run.pk, run.kind)
    return run


def task(name: str):
    """A task of judges/tasks.py by its registered name. The task module imports this one, so
    services never import it; JudgesConfig.ready registers the tasks in every process."""
    return current_app.tasks[f"judges.tasks.{name}"]


def _enqueue(run_id: int, kind: str = "") -> None:
    name = "run_pairwise" if kind == JudgeRun.Kind.PAIRWISE else "run_judge"

    def send() -> None:
        task(name).delay(run_id)
        if not current_app.conf.task_always_eager:
            # Resumes the run if its worker dies (judges.tasks.watch_run_schedule's countdown).
            task("watch_run").apply_async(args=[run_id], countdown=lease_seconds() + 1)

    transaction.on_commit(lambda: _send_or_fail(run_id, send))


QUEUE_DOWN = (
    "The task queue (Redis) could not be reached, so the run was not started and nothing was "
    "judged. Press Resume once the queue is back."
)


def _send_or_fail(run_id: int, send) -> None:
    """Enqueue; with the broker down, fail the run with a clear message instead of leaving it
    pending with no task (and the request with a 500)."""
    try:
        send()
    except BrokerUnreachable:
        logger.exception("could not enqueue judge run %s", run_id)
        JudgeRun.objects.filter(pk=run_id, status=JudgeRun.Status.PENDING).update(
            status=JudgeRun.Status.FAILED, finished_at=timezone.now(), error=QUEUE_DOWN
        )


@transaction.atomic
def judge_run_cancel(*, run: JudgeRun) -> bool:
    """Stop a pending or running run; the worker notices between chunks (or within seconds
    during a long chunk) and writes what it already has. False if it had already finished."""
    updated = JudgeRun.objects.filter(
        pk=run.pk, status__in=[JudgeRun.Status.PENDING, JudgeRun.Status.RUNNING]
    ).update(status=JudgeRun.Status.CANCELLED, finished_at=timezone.now(), lease_owner="")
    run.refresh_from_db()
    return bool(updated)


def run_is_stale(run: JudgeRun, now=None) -> bool:
    """Running (or pending) with no heartbeat for longer than the lease: its worker died."""
    if run.status not in (JudgeRun.Status.PENDING, JudgeRun.Status.RUNNING):
        return False
    now = now or timezone.now()
    last = run.heartbeat_at or run.started_at or run.created_at
    return last < now - timedelta(seconds=lease_seconds())


@transaction.atomic
def judge_run_resume(*, run: JudgeRun) -> bool:
    """Re-enqueue a run whose worker died (stale heartbeat), that failed, or that finished with
    failed claims (those are tried again); it carries on with the items that have no verdict
    yet. False when the run is live, or finished with nothing left to do."""
    locked = JudgeRun.objects.select_for_update().get(pk=run.pk)
    retry_failed = locked.status in (JudgeRun.Status.DONE, JudgeRun.Status.FAILED) and (
        locked.failed > 0
    )
    if retry_failed:
        # Claims whose calls failed are handed out again; their verdicts come fresh.
        JudgeFailure.objects.filter(run=locked).delete()
        locked.failed = 0
    if locked.status == JudgeRun.Status.FAILED or retry_failed:
        locked.status = JudgeRun.Status.PENDING
        locked.error = ""
        locked.finished_at = None
        locked.lease_owner = ""
        locked.save(update_fields=["status", "error", "finished_at", "lease_owner", "failed"])
    elif not run_is_stale(locked):
        return False
    _enqueue(locked.pk, locked.kind)
    run.refresh_from_db()
    return True


def judge_runs_resume_stale(*, project: Project | None = None) -> list[int]:
    """Resume every run whose heartbeat is stale (for cron or Celery beat: `resume_runs`)."""
    runs = JudgeRun.objects.filter(status__in=[JudgeRun.Status.PENDING, JudgeRun.Status.RUNNING])
    if project is not None:
        runs = runs.filter(project=project)
    resumed = []
    for run in runs:
        if run_is_stale(run) and judge_run_resume(run=run):
            resumed.append(run.pk)
    return resumed
