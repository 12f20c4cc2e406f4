"""Starting a test set's generation (the cost estimate shown before it starts) and the job's
page, whose progress htmx polls until the job has finished."""

from django import forms
from django.shortcuts import redirect, render
from django.urls import path
from django.views.decorators.http import require_GET, require_http_methods
from django_htmx.http import HttpResponseStopPolling

from annotate.access import project_view
from annotate.models import Role
from judges.endpoints import HOW_TO_DECLARE, EndpointsError, endpoints_declared
from judges.models import Judge
from testsets.limits import generation_limits
from testsets.models import GenerationDrop, GenerationJob
from testsets.services.generate import (
    GenerationRefused,
    generation_estimate,
    generation_job_get_for_project,
    generation_resume,
    generation_start,
    knowledge_base_summary,
)


class GenerateForm(forms.Form):
    name = forms.SlugField(max_length=80, initial="critical", help_text="The test set's name.")
    kind = forms.ChoiceField(
        label="Generator",
        choices=GenerationJob.Kind.choices,
        initial=GenerationJob.Kind.OFFLINE,
        widget=forms.RadioSelect,
    )
    endpoint = forms.ChoiceField(label="LLM endpoint", required=False, choices=[])
    model = forms.CharField(
        max_length=200, required=False, help_text="Blank: the endpoint's first model."
    )
    per_document = forms.IntegerField(
        label="Items per document (quota)", min_value=1, max_value=100
    )
    judge = forms.ModelChoiceField(
        label="Entailment check",
        queryset=Judge.objects.none(),
        required=False,
        empty_label="Offline lexical baseline",
        help_text="Who checks that each answer is supported by its quotes: the offline "
        "baseline, or one of the project's judges.",
    )

    def __init__(self, *args, project=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["judge"].queryset = Judge.objects.filter(project=project).order_by("name")
        try:
            names = sorted(endpoints_declared())
        except EndpointsError:
            names = []
        self.fields["endpoint"].choices = [("", "—")] + [(n, n) for n in names]
        self.fields["per_document"].initial = generation_limits().per_document

    def clean(self):
        data = super().clean()
        if data.get("kind") == GenerationJob.Kind.LLM and not data.get("endpoint"):
            self.add_error("endpoint", "Choose the endpoint the LLM generator calls.")
        return data


def _estimate(project, form) -> tuple[dict | None, str]:
    if not form.is_valid():
        return None, ""
    data = form.cleaned_data
    try:
        estimate = generation_estimate(
            project=project,
            kind=data["kind"],
            endpoint_name=data["endpoint"],
            model=data["model"],
            per_document=data["per_document"],
        )
    except GenerationRefused as exc:
        return None, str(exc)
    return estimate, ""


@require_http_methods(["GET", "POST"])
@project_view(Role.LEAD)
def generate_view(request, project, membership):
    problem = ""
    if request.method == "POST":
        form = GenerateForm(request.POST, project=project)
        if form.is_valid():
            data = form.cleaned_data
            try:
                job = generation_start(
                    project=project,
                    user=request.user,
                    name=data["name"],
                    kind=data["kind"],
                    endpoint_name=data["endpoint"],
                    model=data["model"],
                    per_document=data["per_document"],
                    judge=data["judge"],
                )
            except GenerationRefused as exc:
                problem = str(exc)
            else:
                return redirect("testsets:generation-job", project.slug, job.pk)
    else:
        fields = GenerateForm(project=project).fields.items()
        initial = {name: field.initial for name, field in fields}
        form = GenerateForm(request.GET or initial, project=project)
    estimate, estimate_problem = _estimate(project, form)
    context = {
        "project": project,
        "membership": membership,
        "form": form,
        "estimate": estimate,
        "problem": problem or estimate_problem,
        "summary": knowledge_base_summary(project=project),
        "how_to_declare": HOW_TO_DECLARE,
        "has_endpoints": len(form.fields["endpoint"].choices) > 1,
    }
    template = "testsets/generate.html#estimate" if request.htmx else "testsets/generate.html"
    status = 400 if request.method == "POST" and not request.htmx else 200
    return render(request, template, context, status=status)


@require_GET
@project_view(Role.LEAD)
def generation_job_view(request, project, membership, generation_job_id: int):
    job = generation_job_get_for_project(project=project, job_id=generation_job_id)
    dropped = (job.counts or {}).get("dropped", {})
    drop_rows = [(r.value, r.label, dropped.get(r.value, 0)) for r in GenerationDrop.Reason]
    context = {"project": project, "membership": membership, "job": job, "drop_rows": drop_rows}
    if not request.htmx:
        return render(request, "testsets/generation_job.html", context)
    response = render(request, "testsets/generation_job.html#generation-job", context)
    if job.finished:
        return HttpResponseStopPolling(response.content)
    return response


@require_http_methods(["POST"])
@project_view(Role.LEAD)
def generation_job_resume_view(request, project, membership, generation_job_id: int):
    job = generation_job_get_for_project(project=project, job_id=generation_job_id)
    generation_resume(job=job)
    return redirect("testsets:generation-job", project.slug, job.pk)


urlpatterns = [
    path("p/<slug:slug>/testsets/generate/", generate_view, name="generate"),
    path(
        "p/<slug:slug>/testsets/jobs/<int:generation_job_id>/",
        generation_job_view,
        name="generation-job",
    ),
    path(
        "p/<slug:slug>/testsets/jobs/<int:generation_job_id>/resume/",
        generation_job_resume_view,
        name="generation-job-resume",
    ),
]
