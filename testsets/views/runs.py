"""The system-under-test pages (issue 27, item 4): a lead picks a published test set and a
declared RAG endpoint by its name (never its URL or key), names the system and its version,
and starts a run (testsets/services/sut.py `sut_run_start`); the run's page shows its
progress (htmx polls it), every failed question with its reason, a resume button for an
interrupted run, and a link to the answers it wrote (the answers list filtered by system).
"""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import path
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import HttpResponseStopPolling

from annotate.access import project_view
from annotate.models import Role, System
from judges.endpoints import EndpointNotDeclared, EndpointsError
from testsets.models import SutRun, SutRunItem, TestSet
from testsets.rag_endpoints import REFERENCE, rag_endpoints_declared
from testsets.services.sut import sut_run_resume, sut_run_start
from testsets.services.truth import truth_check_counts, truth_check_run


def endpoint_choices() -> tuple[list[str], str]:
    """The endpoints a lead may pick, by name (the built-in reference first), and the
    declaration's error when the operator's list is invalid (then only the reference)."""
    try:
        return [REFERENCE, *sorted(rag_endpoints_declared())], ""
    except EndpointsError as exc:
        return [REFERENCE], f"The declared RAG endpoints are invalid ({exc}): ask the operator."


class RunForm(forms.Form):
    test_set = forms.TypedChoiceField(coerce=int, label="Published test set")
    endpoint = forms.ChoiceField(label="System under test (declared endpoint)")
    system_name = forms.CharField(max_length=100, label="System name")
    system_version = forms.CharField(max_length=100, required=False, label="System version")

    def __init__(self, *args, project, **kwargs):
        super().__init__(*args, **kwargs)
        published = TestSet.objects.filter(project=project, status=TestSet.Status.PUBLISHED)
        self.fields["test_set"].choices = [(s.pk, str(s)) for s in published]
        names, self.endpoints_error = endpoint_choices()
        self.fields["endpoint"].choices = [
            (n, f"{n} (built-in BM25 baseline)" if n == REFERENCE else n) for n in names
        ]


def _runs_page(request, project, membership, form, status=200):
    runs = SutRun.objects.filter(project=project).select_related("test_set")[:100]
    context = {"project": project, "membership": membership, "form": form, "runs": runs}
    return render(request, "testsets/runs.html", context, status=status)


@require_GET
@project_view(Role.LEAD)
def run_list(request, project, membership):
    initial = {"test_set": request.GET.get("test_set")}
    return _runs_page(request, project, membership, RunForm(project=project, initial=initial))


@require_POST
@project_view(Role.LEAD)
def run_start(request, project, membership):
    form = RunForm(request.POST, project=project)
    if not form.is_valid():
        return _runs_page(request, project, membership, form, status=400)
    data = form.cleaned_data
    test_set = get_object_or_404(TestSet, pk=data["test_set"], project=project)
    try:
        run = sut_run_start(
            project=project,
            test_set=test_set,
            endpoint_name=data["endpoint"],
            system_name=data["system_name"],
            system_version=data["system_version"],
        )
    except (ValueError, EndpointNotDeclared, EndpointsError) as exc:
        form.add_error(None, f"The run was not started: {exc}.")
        return _runs_page(request, project, membership, form, status=400)
    messages.success(request, f"Started {run}.")
    return redirect("testsets:run-detail", project.slug, run.pk)


def run_get(project, sut_run_id: int) -> SutRun:
    return get_object_or_404(
        SutRun.objects.select_related("test_set"), pk=sut_run_id, project=project
    )


def _run_context(project, membership, run: SutRun) -> dict:
    states = SutRunItem.objects.filter(run=run)
    system = System.objects.filter(
        project=project, name=run.system_name, version=run.system_version
    ).first()
    return {
        "project": project,
        "membership": membership,
        "run": run,
        "answered": states.filter(state=SutRunItem.State.ANSWERED).count(),
        "failures": states.filter(state=SutRunItem.State.FAILED).select_related("item")[:500],
        "failed": states.filter(state=SutRunItem.State.FAILED).count(),
        "finished": run.status in (SutRun.Status.DONE, SutRun.Status.INTERRUPTED),
        "percent": round(100 * run.done / run.total) if run.total else 100,
        "system": system,
        "truth": truth_check_counts(run=run),
    }


@require_GET
@project_view(Role.LEAD)
def run_detail(request, project, membership, sut_run_id: int):
    run = run_get(project, sut_run_id)
    return render(request, "testsets/run_detail.html", _run_context(project, membership, run))


@require_GET
@project_view(Role.LEAD)
def run_progress(request, project, membership, sut_run_id: int):
    """The progress region; htmx polls it and stops once the run is done or interrupted."""
    run = run_get(project, sut_run_id)
    context = _run_context(project, membership, run)
    if not request.htmx:
        return render(request, "testsets/run_detail.html", context)
    response = render(request, "testsets/run_detail.html#run-progress", context)
    if context["finished"]:
        stop = HttpResponseStopPolling(response.content)
        stop["HX-Refresh"] = "true"  # once: the failures list and the answers link appear
        return stop
    return response


@require_POST
@project_view(Role.LEAD)
def run_resume(request, project, membership, sut_run_id: int):
    run = run_get(project, sut_run_id)
    if sut_run_resume(run=run):
        messages.success(request, "Run resumed: it carries on with the questions not yet asked.")
    else:
        messages.warning(request, "The run is done: nothing to resume.")
    return redirect("testsets:run-detail", project.slug, run.pk)


@require_POST
@project_view(Role.LEAD)
def run_truth(request, project, membership, sut_run_id: int):
    """Check the claims of the run's answers against their items' ground truth (offline)."""
    run = run_get(project, sut_run_id)
    counts = truth_check_run(run=run)
    if not counts["claims"]:
        messages.warning(request, "No claim to check: split the run's answers into claims first.")
    else:
        messages.success(
            request,
            f"Checked {counts['claims']} claims against the ground truth: "
            f"{counts['CORRECT']} correct, {counts['INCORRECT']} incorrect, "
            f"{counts['NOT_ADDRESSED']} not addressed"
            + (
                f"; {counts['answers_without_claims']} answers are not split yet."
                if counts["answers_without_claims"]
                else "."
            ),
        )
    return redirect("testsets:run-detail", project.slug, run.pk)


RUN = "p/<slug:slug>/testsets/runs/<int:sut_run_id>/"
urlpatterns = [
    path("p/<slug:slug>/testsets/runs/", run_list, name="runs"),
    path("p/<slug:slug>/testsets/runs/start/", run_start, name="run-start"),
    path(RUN, run_detail, name="run-detail"),
    path(RUN + "progress/", run_progress, name="run-progress"),
    path(RUN + "resume/", run_resume, name="run-resume"),
    path(RUN + "truth/", run_truth, name="run-truth"),
]
