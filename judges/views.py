"""Judges' pages: configure judges, start and watch runs, canaries. Leads and owners only."""

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.db.models import Count
from django.shortcuts import redirect, render
from django.urls import path, reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import HttpResponseStopPolling

from annotate.access import project_view
from annotate.forms import AnswerFilterForm
from annotate.models import Claim, Role
from annotate.selectors import answer_get_for_project, answers_filtered
from judges import selectors, services
from judges.endpoints import HOW_TO_DECLARE, endpoints_declared
from judges.forms import (
    CanaryListForm,
    CanaryTransplantForm,
    JudgeForm,
    RunBulkForm,
    RunStartForm,
    SplitBulkForm,
    SplitStartForm,
)
from judges.models import JudgeRun
from judges.split_jobs import split_job_start, split_job_start_by_rule
from metrics.judge_agreement import run_agreement


def _judge_form(membership, *args, **kwargs) -> JudgeForm:
    """The judge form as this member may see it: endpoints' base URLs for owners only."""
    return JudgeForm(*args, show_urls=membership.has_role(Role.OWNER), **kwargs)


def _form_errors(form, exc: ValidationError) -> None:
    if hasattr(exc, "error_dict"):
        for field, errors in exc.message_dict.items():
            form.add_error(field if field in form.fields else None, errors)
    else:
        form.add_error(None, exc.messages)


def _judge_list_page(request, project, membership, form, status=200):
    context = {
        "project": project,
        "membership": membership,
        "judges": selectors.judge_list_for_project(project=project).annotate(n_runs=Count("runs")),
        "form": form,
    }
    return render(request, "judges/judge_list.html", context, status=status)


@require_GET
@project_view(Role.LEAD)
def judge_list(request, project, membership):
    return _judge_list_page(request, project, membership, _judge_form(membership))


@require_POST
@project_view(Role.LEAD)
def judge_create(request, project, membership):
    form = _judge_form(membership, request.POST)
    if form.is_valid():
        try:
            judge = services.judge_create(project=project, **form.cleaned_data)
        except ValidationError as exc:
            _form_errors(form, exc)
        else:
            messages.success(request, f"Judge {judge.name} created.")
            return redirect("judges:judge-detail", project.slug, judge.pk)
    return _judge_list_page(request, project, membership, form, status=400)


def _judge_detail_page(request, project, membership, judge, *, edit_form=None, status=200):
    fields = [
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
    ]
    context = {
        "project": project,
        "membership": membership,
        "judge": judge,
        "runs": judge.runs.order_by("-created_at"),
        "canary_run": selectors.judge_latest_canary_run(judge=judge),
        "form": RunStartForm(),
        "edit_form": edit_form
        or _judge_form(membership, initial={f: getattr(judge, f) for f in fields}),
        "editing": edit_form is not None,
        "endpoint_problem": services.judge_endpoint_problem(judge),
        "endpoint_shown": _endpoint_shown(judge, membership),
        "split_jobs": judge.split_jobs.select_related("answer")[:10],
    }
    return render(request, "judges/judge_detail.html", context, status=status)


def _endpoint_shown(judge, membership) -> str:
    """The judge's declared endpoint as this member may see it ("" when undeclared)."""
    declared = endpoints_declared().get(judge.endpoint) if judge.endpoint else None
    return declared.describe(with_url=membership.has_role(Role.OWNER)) if declared else ""


@require_GET
@project_view(Role.LEAD)
def judge_detail(request, project, membership, judge_id: int):
    judge = selectors.judge_get_for_project(project=project, judge_id=judge_id)
    return _judge_detail_page(request, project, membership, judge)


@require_POST
@project_view(Role.LEAD)
def judge_update(request, project, membership, judge_id: int):
    judge = selectors.judge_get_for_project(project=project, judge_id=judge_id)
    form = _judge_form(membership, request.POST)
    if form.is_valid():
        try:
            services.judge_update(judge=judge, **form.cleaned_data)
        except ValidationError as exc:
            _form_errors(form, exc)
        else:
            messages.success(
                request,
                f"Judge saved; prompt version now {judge.prompt_version}, pairwise prompt "
                f"version {judge.pairwise_prompt_version}. "
                "Earlier runs keep the instrument they ran with.",
            )
            return redirect("judges:judge-detail", project.slug, judge.pk)
    judge.refresh_from_db()
    return _judge_detail_page(request, project, membership, judge, edit_form=form, status=400)


@require_POST
@project_view(Role.LEAD)
def run_start(request, project, membership, judge_id: int):
    judge = selectors.judge_get_for_project(project=project, judge_id=judge_id)
    form = RunStartForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Choose a run kind and a claim scope.")
        return redirect("judges:judge-detail", project.slug, judge.pk)
    try:
        run = services.judge_run_start(judge=judge, user=request.user, **form.cleaned_data)
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
        return redirect("judges:judge-detail", project.slug, judge.pk)
    return redirect("judges:run-detail", project.slug, run.pk)


def _run_context(project, membership, run):
    return {
        "project": project,
        "membership": membership,
        "run": run,
        "stale": services.run_is_stale(run),
        "finished": run.status not in (JudgeRun.Status.PENDING, JudgeRun.Status.RUNNING),
    }


def _run_page(request, project, membership, run):
    context = _run_context(project, membership, run)
    context.update(
        agreement=run_agreement(run=run),
        unparseable_rows=selectors.run_unparseable(run=run),
        failure_rows=selectors.run_failures(run=run),
    )
    return render(request, "judges/run_detail.html", context)


@require_GET
@project_view(Role.LEAD)
def run_detail(request, project, membership, run_id: int):
    run = selectors.judge_run_get_for_project(project=project, run_id=run_id)
    return _run_page(request, project, membership, run)


@require_GET
@project_view(Role.LEAD)
def run_progress(request, project, membership, run_id: int):
    """The progress region; htmx polls it every second and stops once the run has finished."""
    run = selectors.judge_run_get_for_project(project=project, run_id=run_id)
    if not request.htmx:
        return _run_page(request, project, membership, run)
    context = _run_context(project, membership, run)
    response = render(request, "judges/run_detail.html#run-progress", context)
    if context["finished"]:
        stop = HttpResponseStopPolling(response.content)
        stop["HX-Refresh"] = "true"  # reload once: agreement and unparseable rows appear
        return stop
    return response


@require_POST
@project_view(Role.LEAD)
def run_cancel(request, project, membership, run_id: int):
    run = selectors.judge_run_get_for_project(project=project, run_id=run_id)
    if services.judge_run_cancel(run=run):
        messages.success(request, "Run cancelled; verdicts written so far are kept.")
    else:
        messages.warning(request, "The run had already finished.")
    return redirect("judges:run-detail", project.slug, run.pk)


@require_POST
@project_view(Role.LEAD)
def run_resume(request, project, membership, run_id: int):
    run = selectors.judge_run_get_for_project(project=project, run_id=run_id)
    if services.judge_run_resume(run=run):
        messages.success(request, "Run resumed: it carries on with the claims not yet judged.")
    else:
        messages.warning(request, "The run is alive or finished; nothing to resume.")
    return redirect("judges:run-detail", project.slug, run.pk)


def _canary_page(request, project, membership, list_form, transplant_form, status=200):
    context = {
        "project": project,
        "membership": membership,
        "canaries": selectors.canary_list_for_project(project=project)[:500],
        "list_form": list_form,
        "transplant_form": transplant_form,
    }
    return render(request, "judges/canary_list.html", context, status=status)


@require_GET
@project_view(Role.LEAD)
def canary_list(request, project, membership):
    return _canary_page(request, project, membership, CanaryListForm(), CanaryTransplantForm())


@require_POST
@project_view(Role.LEAD)
def canary_add(request, project, membership):
    form = CanaryListForm(request.POST)
    if form.is_valid():
        try:
            made = services.canary_add(project=project, lines=form.cleaned_data["lines"])
        except ValidationError as exc:
            _form_errors(form, exc)
        else:
            messages.success(request, f"{len(made)} canaries added.")
            return redirect("judges:canary-list", project.slug)
    return _canary_page(request, project, membership, form, CanaryTransplantForm(), status=400)


@require_POST
@project_view(Role.LEAD)
def canary_transplant(request, project, membership):
    form = CanaryTransplantForm(request.POST)
    if form.is_valid():
        made = services.canaries_transplant(project=project, **form.cleaned_data)
        messages.success(
            request,
            f"{len(made)} transplant canaries made"
            + ("" if made else ": no gold-SUPPORTED claim found an unrelated pile")
            + ".",
        )
        return redirect("judges:canary-list", project.slug)
    return _canary_page(request, project, membership, CanaryListForm(), form, status=400)


def _split_panel(request, project, membership, answer, *, job=None, form=None):
    """The claims page's "Split by LLM" region: the answer's latest split job (polling while
    it runs) and the form to start one."""
    job = job or selectors.split_job_latest_for_answer(answer=answer)
    judges = list(selectors.split_judges_for_project(project=project))
    for judge in judges:
        judge.problem = services.judge_endpoint_problem(judge)
    panel_url = reverse("judges:split-panel", args=[project.slug, answer.pk])
    return {
        "project": project,
        "membership": membership,
        "answer": answer,
        "answer_has_claims": answer.claims.exists(),
        "job": job,
        "form": form or SplitStartForm(project=project),
        "split_judges": judges,
        "recent_jobs": selectors.split_jobs_bulk_for_project(project=project),
        "endpoints": endpoints_declared(),
        "how_to_declare": HOW_TO_DECLARE,
        "poll_url": f"{panel_url}?poll={job.pk}" if job else "",
        "poll_target": "split-panel",
    }


@require_GET
@project_view(Role.LEAD)
def split_panel(request, project, membership, answer_id: int):
    answer = answer_get_for_project(project=project, answer_id=answer_id)
    context = _split_panel(request, project, membership, answer)
    if not request.htmx:
        return render(request, "judges/split_panel.html", context)
    response = render(request, "judges/split_panel.html#split-panel", context)
    job = context["job"]
    if request.GET.get("poll") and job is not None and job.finished:
        stop = HttpResponseStopPolling(response.content)
        stop["HX-Refresh"] = "true"  # reload once: the new claims appear on the claims page
        return stop
    return response


@require_POST
@project_view(Role.LEAD)
def split_start(request, project, membership):
    """Queue a split by LLM; the endpoint is called by a worker, not in this request."""
    form = SplitStartForm(request.POST, project=project)
    answer_id = request.POST.get("answer", "")
    answer = None
    if answer_id.isascii() and answer_id.isdigit() and len(answer_id) < 19:  # a 64-bit id
        answer = answer_get_for_project(project=project, answer_id=int(answer_id))
    job = None
    if form.is_valid():
        data = form.cleaned_data
        try:
            job = split_job_start(
                judge=data["judge"], user=request.user, answer=answer, force=data["force"]
            )
        except ValidationError as exc:
            _form_errors(form, exc)
    if answer is not None and request.htmx:
        # 200 either way: htmx swaps the region with the job, or with the form's errors.
        context = _split_panel(request, project, membership, answer, job=job, form=form)
        return render(request, "judges/split_panel.html#split-panel", context)
    if job is None:
        for errors in form.errors.values():
            messages.error(request, " ".join(errors))
        if answer is not None:
            return redirect("judges:split-panel", project.slug, answer.pk)
        return redirect("judges:judge-list", project.slug)
    messages.success(request, f"Split job #{job.pk} queued: {job.total} answers.")
    return redirect("judges:split-job", project.slug, job.pk)


def _split_bulk_answers(request, project, data):
    """The answers list's filtered set (the same AnswerFilterForm as the list), or None with
    the form's errors when a filter is unknown."""
    form = AnswerFilterForm(data, project=project)
    if not form.is_valid():
        return form, None
    return form, answers_filtered(project=project, **form.filters())


@require_http_methods(["GET", "POST"])
@project_view(Role.LEAD)
def split_bulk(request, project, membership):
    """Split the answers list's filtered answers (all of them with no filter) into claims, by
    rule or by an LLM judge, as a split job with a progress bar (judges/split_jobs.py)."""
    data = request.POST if request.method == "POST" else request.GET
    filters, answers = _split_bulk_answers(request, project, data)
    form = SplitBulkForm(request.POST if request.method == "POST" else None, project=project)
    if answers is not None and request.method == "POST" and form.is_valid():
        judge = form.cleaned_data["judge"]
        scope = {
            "user": request.user,
            "force": form.cleaned_data["force"],
            "among": answers.values("pk"),
            "among_described": filters.described(),
        }
        try:
            if judge is None:
                job = split_job_start_by_rule(project=project, **scope)
            else:
                job = split_job_start(judge=judge, **scope)
        except ValidationError as exc:
            _form_errors(form, exc)
        else:
            messages.success(request, f"Split job #{job.pk} queued: {job.total} answers.")
            return redirect("judges:split-job", project.slug, job.pk)
    judges = list(selectors.split_judges_for_project(project=project))
    for judge in judges:
        judge.problem = services.judge_endpoint_problem(judge)
    context = {
        "project": project,
        "membership": membership,
        "filter_form": filters,
        "filters": filters.query() if answers is not None else "",
        "count": answers.count() if answers is not None else 0,
        "without_claims": answers.filter(claims__isnull=True).count() if answers is not None else 0,
        "form": form,
        "split_judges": judges,
        "recent_jobs": selectors.split_jobs_bulk_for_project(project=project),
        "endpoints": endpoints_declared(),
        "how_to_declare": HOW_TO_DECLARE,
    }
    status = 400 if (answers is None or (request.method == "POST" and form.errors)) else 200
    return render(request, "judges/split_bulk.html", context, status=status)


@require_http_methods(["GET", "POST"])
@project_view(Role.LEAD)
def run_bulk(request, project, membership):
    """Run a judge (verify) over the claims of the answers list's filtered answers (all of
    them with no filter), as one run with its progress page."""
    data = request.POST if request.method == "POST" else request.GET
    filters, answers = _split_bulk_answers(request, project, data)
    form = RunBulkForm(request.POST or None, project=project)
    if answers is not None and request.method == "POST" and form.is_valid():
        try:
            described = filters.described()
            run = services.judge_run_start(
                judge=form.cleaned_data["judge"],
                scope=form.cleaned_data["scope"],
                user=request.user,
                # No filter: every answer, as a run started from the judge's page (no ids kept).
                among=answers.values("pk") if described else None,
                among_described=described,
            )
        except ValidationError as exc:
            _form_errors(form, exc)
        else:
            messages.success(request, f"Run #{run.pk} queued: {run.total} claims.")
            return redirect("judges:run-detail", project.slug, run.pk)
    judges = list(form.fields["judge"].queryset)
    for judge in judges:
        judge.problem = services.judge_endpoint_problem(judge)
    context = {
        "project": project,
        "membership": membership,
        "filter_form": filters,
        "filters": filters.query() if answers is not None else "",
        "described": filters.described() if answers is not None else "",
        "count": answers.count() if answers is not None else 0,
        "claims": (
            Claim.objects.filter(answer__in=answers.values("pk")).count()
            if answers is not None
            else 0
        ),
        "form": form,
        "judges": judges,
    }
    status = 400 if (answers is None or (request.method == "POST" and form.errors)) else 200
    return render(request, "judges/run_bulk.html", context, status=status)


@require_GET
@project_view(Role.LEAD)
def split_job_detail(request, project, membership, split_job_id: int):
    job = selectors.split_job_get_for_project(project=project, job_id=split_job_id)
    context = {
        "project": project,
        "membership": membership,
        "job": job,
        "poll_url": reverse("judges:split-job", args=[project.slug, job.pk]),
        "poll_target": "split-job",
    }
    if not request.htmx:
        return render(request, "judges/split_job.html", context)
    response = render(request, "judges/split_job.html#split-job", context)
    if job.finished:
        return HttpResponseStopPolling(response.content)
    return response


urlpatterns = [
    path("p/<slug:slug>/judges/", judge_list, name="judge-list"),
    path("p/<slug:slug>/judges/new/", judge_create, name="judge-create"),
    path("p/<slug:slug>/judges/<int:judge_id>/", judge_detail, name="judge-detail"),
    path("p/<slug:slug>/judges/<int:judge_id>/edit/", judge_update, name="judge-update"),
    path("p/<slug:slug>/judges/<int:judge_id>/runs/", run_start, name="run-start"),
    path("p/<slug:slug>/judges/runs/answers/", run_bulk, name="run-bulk"),
    path("p/<slug:slug>/judges/runs/<int:run_id>/", run_detail, name="run-detail"),
    path("p/<slug:slug>/judges/runs/<int:run_id>/progress/", run_progress, name="run-progress"),
    path("p/<slug:slug>/judges/runs/<int:run_id>/cancel/", run_cancel, name="run-cancel"),
    path("p/<slug:slug>/judges/runs/<int:run_id>/resume/", run_resume, name="run-resume"),
    path("p/<slug:slug>/judges/split/", split_start, name="split-start"),
    path("p/<slug:slug>/judges/split/answers/", split_bulk, name="split-bulk"),
    path("p/<slug:slug>/judges/splits/<int:split_job_id>/", split_job_detail, name="split-job"),
    path("p/<slug:slug>/answers/<int:answer_id>/split-by-llm/", split_panel, name="split-panel"),
    path("p/<slug:slug>/judges/canaries/", canary_list, name="canary-list"),
    path("p/<slug:slug>/judges/canaries/add/", canary_add, name="canary-add"),
    path("p/<slug:slug>/judges/canaries/transplant/", canary_transplant, name="canary-transplant"),
]
