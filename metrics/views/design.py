"""The queue's sampling design (issue 14: leads choose it, a task computes it) and the
selective-judging routing."""

from urllib.parse import urlencode

from django import forms
from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from annotate.access import project_view
from annotate.models import Project, Role
from annotate.services.design import DesignError, design_settings_check
from metrics.scope import judge_from
from metrics.services.active_audit import (
    DEFAULT_DELTA,
    DEFAULT_TARGET_AGREEMENT,
    DEFAULT_TARGET_HALF_WIDTH,
)
from metrics.services.active_design import (
    active_design_request,
    design_run_get,
    design_runs,
    design_runs_unfinished,
)
from metrics.services.active_routing import (
    RoutingError,
    selective_routing_apply,
    selective_routing_clear,
)
from metrics.services.design_preview import design_preview


class SelectiveRoutingForm(forms.Form):
    """The lead's selective-judging action: route (with a target agreement and δ) or stop."""

    action = forms.ChoiceField(choices=[("route", "Route claims"), ("stop", "Stop routing")])
    judge = forms.CharField(required=False)
    target = forms.FloatField(required=False, min_value=0.5, max_value=0.999)
    delta = forms.FloatField(required=False, min_value=0.001, max_value=0.5)


@require_POST
@project_view(Role.LEAD)
def selective_routing(request, project, membership):
    """Route claims the judge may decide alone (certified threshold) or stop routing."""
    form = SelectiveRoutingForm(request.POST)
    back = reverse("metrics:dashboard", args=[project.slug])
    back += "?" + urlencode({"judge": request.POST.get("judge", "")[:20]})
    if not form.is_valid():
        for field, errors in form.errors.items():
            messages.error(request, f"{field}: {' '.join(errors)}")
        return redirect(back)
    if form.cleaned_data["action"] == "stop":
        cleared = selective_routing_clear(project=project)
        messages.success(request, f"Routing stopped: {cleared} claims back in the analysts' queue.")
        return redirect(back)
    judge = judge_from(project, form.cleaned_data["judge"])
    if judge is None:
        messages.error(request, "judge: routing needs a judge; choose one on the dashboard.")
        return redirect(back)
    try:
        result = selective_routing_apply(
            project=project,
            judge=judge,
            target=form.cleaned_data["target"] or DEFAULT_TARGET_AGREEMENT,
            delta=form.cleaned_data["delta"] or DEFAULT_DELTA,
        )
    except RoutingError as error:
        messages.error(request, f"Nothing routed: {error}.")
        return redirect(back)
    messages.success(
        request,
        f"{result['routed']} claims routed to {judge.name} (confidence ≥ "
        f"{result['threshold']:.3f}); the queue no longer serves them. Recompute the report "
        "to see the figures with routing on.",
    )
    return redirect(back)


class QueueDesignForm(forms.Form):
    queue_design = forms.ChoiceField(label="Queue design")
    label_budget = forms.IntegerField(
        required=False,
        label="Label budget",
        help_text="Labels you plan to spend; sets each claim's inclusion probability (active).",
    )
    target_half_width = forms.FloatField(
        required=False,
        label="Target half-width",
        help_text="The headline's 95% interval should reach ± this, e.g. 0.05.",
        widget=forms.NumberInput(attrs={"step": "0.01"}),
    )
    design_run_id = forms.ChoiceField(
        required=False,
        label="Judge run",
        help_text="A finished verify run: its verdicts and confidences set the design.",
    )

    def __init__(self, *args, project, runs, **kwargs):
        super().__init__(*args, **kwargs)

        self.fields["queue_design"].choices = Project.QueueDesign.choices
        none = "— none (the uniform design needs no run)" if runs else "— no finished judge run yet"
        self.fields["design_run_id"].choices = [("", none)] + [
            (str(run.pk), f"run {run.pk} · {run.judge.name} · {run.total} claims" + finished)
            for run in runs
            for finished in [f" · {run.finished_at:%Y-%m-%d %H:%M}" if run.finished_at else ""]
        ]


def _design_context(project, membership, form, runs=None) -> dict:

    return {
        "project": project,
        "membership": membership,
        "form": form,
        "job": project.design_job,
        "no_run": runs is not None and not runs,
        "runs_unfinished": list(design_runs_unfinished(project=project)[:3]),
    }


@project_view(Role.LEAD)
def queue_design(request, project, membership):
    """The project's sampling design: uniform, active or stratified, the budget, the target
    half-width and the judge run; applied by the `apply_active_design` task."""
    if request.method not in ("GET", "POST"):
        return HttpResponse(status=405)
    runs = list(design_runs(project=project))
    initial = {
        "queue_design": project.queue_design,
        "label_budget": project.label_budget,
        "target_half_width": project.target_half_width,
        # The run the design uses, while it is still offered; else the newest finished run.
        "design_run_id": str(
            project.design_run_id
            if project.design_run_id in {run.pk for run in runs}
            else (runs[0].pk if runs else "")
        ),
    }
    form = QueueDesignForm(
        request.POST if request.method == "POST" else None,
        project=project,
        runs=runs,
        initial=initial,
    )
    preview = None
    if request.method == "POST" and request.POST.get("action") == "preview":
        preview = _preview(project, form)
    elif request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            active_design_request(
                project=project,
                design=data["queue_design"],
                run_id=data["design_run_id"] or None,
                budget=data["label_budget"],
                target_half_width=data["target_half_width"],
            )
        except DesignError as error:
            field, _, message = str(error).partition(": ")
            form.add_error(field if field in form.fields else None, message or str(error))
        else:
            messages.success(request, "Queue design saved; the queue follows it once applied.")
            return redirect("metrics:queue-design", slug=project.slug)
    if request.htmx and request.GET.get("job"):
        return render(
            request,
            "metrics/queue_design.html#job",
            _design_context(project, membership, form),
        )
    return render(
        request,
        "metrics/queue_design.html",
        {**_design_context(project, membership, form, runs), "preview": preview},
        status=400 if form.errors else 200,
    )


def _preview(project, form) -> dict | None:
    """Each design's forecast for the form's run, budget and target, nothing saved
    (`design_preview`); None, with the form's errors shown, when the form is invalid."""
    if not form.is_valid():
        return None
    data = form.cleaned_data
    try:
        run = (
            design_run_get(project=project, run_id=data["design_run_id"])
            if data["design_run_id"]
            else None
        )
        if data["label_budget"] is not None:
            design_settings_check(project=project, fields={"label_budget": data["label_budget"]})
    except DesignError as error:
        field, _, message = str(error).partition(": ")
        form.add_error(field if field in form.fields else None, message or str(error))
        return None
    target = data["target_half_width"] or project.target_half_width or DEFAULT_TARGET_HALF_WIDTH
    return design_preview(
        project=project, run=run, budget=data["label_budget"], target=float(target)
    )
