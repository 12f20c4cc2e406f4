"""The dashboard: reads the stored report snapshot, never recounts on page load."""

import io
import json
from urllib.parse import urlencode

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.http import content_disposition_header
from django.utils.text import slugify
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import HttpResponseStopPolling

from annotate.access import project_view
from annotate.csv_safe import NeutralCsvWriter
from annotate.models import Role
from judges.backends.registry import backend_kind
from metrics import charts, selectors
from metrics.models import ReportSnapshot
from metrics.services import estimators

# metrics.services pulls in scikit-learn, SciPy and statsmodels through metrics.stats; the
# URLconf imports this module on any page's first request, so the services are imported where
# used and a labeller's first page does not pay for them.
DEFAULT_ALPHA = 0.10  # metrics.services.DEFAULT_ALPHA

NO_JUDGE = "none"
ALL_SYSTEMS = "all"


class DashboardForm(forms.Form):
    judge = forms.CharField(required=False)
    system = forms.CharField(required=False)
    alpha = forms.FloatField(required=False, min_value=0.001, max_value=0.999)
    instrument = forms.IntegerField(required=False, min_value=0)
    open = forms.ChoiceField(choices=[("all", "every section")], required=False)


class AuditCardForm(forms.Form):
    judge = forms.CharField(required=False)
    system = forms.CharField(required=False)
    instrument = forms.IntegerField(required=False, min_value=0)
    format = forms.ChoiceField(
        choices=[("json", "JSON"), ("csv", "CSV"), ("md", "Markdown")], required=False
    )


def _judge_from(project, value: str | None):
    """The judge named by the `judge` parameter: an id, "none" for none, empty for the default."""
    if value == NO_JUDGE:
        return None
    if value:
        return selectors.judge_get_for_project(project=project, judge_id=value)
    return selectors.judge_default_for_project(project=project)


def _judge_param(judge) -> str:
    return str(judge.pk) if judge is not None else NO_JUDGE


class _Scope:
    """The answers a report covers, from the `system` parameter: a system's id, "all" (every
    system's answers pooled), or empty for the project's default (its first system when it
    has two or more; every answer of a project with one system or none)."""

    def __init__(self, project, value: str | None):
        self.systems = list(selectors.systems_for_project(project=project))
        self.system = None
        self.all_systems = False
        value = (value or "").strip()
        several = len(self.systems) >= 2
        if value == ALL_SYSTEMS and several:
            self.all_systems = True
        elif value and several:
            by_id = {str(system.pk): system for system in self.systems}
            if value not in by_id:
                raise Http404("No such system.")
            self.system = by_id[value]
        elif value and value != ALL_SYSTEMS:
            raise Http404("No such system.")
        elif several:
            self.system = self.systems[0]
        self.default = not self.all_systems and (not several or self.system == self.systems[0])

    @property
    def several(self) -> bool:
        return len(self.systems) >= 2

    @property
    def param(self) -> str:
        if self.all_systems:
            return ALL_SYSTEMS
        return str(self.system.pk) if self.system is not None and self.several else ""

    @property
    def query(self) -> str:
        """The parameter to append to a link ("&system=…"; "" for the default)."""
        return f"&system={self.param}" if self.param and not self.default else ""

    def selectors_kwargs(self) -> dict:
        return {"system": self.system, "all_systems": self.all_systems, "default": self.default}

    @classmethod
    def of_snapshot(cls, project, snapshot) -> "_Scope":
        if snapshot.all_systems:
            return cls(project, ALL_SYSTEMS)
        return cls(project, str(snapshot.system_id) if snapshot.system_id else "")


def _dashboard_context(
    project, judge, alpha: float | None, instrument: int, scope: _Scope | None = None
) -> dict:
    scope = scope or _Scope(project, "")
    kwargs = scope.selectors_kwargs()
    snapshot = selectors.snapshot_latest_done(project=project, judge=judge, **kwargs)
    report = snapshot.data if snapshot else None
    context = {
        "snapshot": snapshot,
        "report": report,
        "scope": scope,
        "system_qs": scope.query,
        "pending": selectors.snapshot_unfinished(project=project, judge=judge, **kwargs),
        "failed": selectors.snapshot_latest_failed_after(
            project=project, judge=judge, after=snapshot, **kwargs
        ),
        "labels_since": selectors.labels_since_count(
            project=project, since_id=snapshot.labels_at_compute
        )
        if snapshot
        else 0,
        "alpha": alpha if alpha is not None else DEFAULT_ALPHA,
    }
    if report and report.get("judge"):
        instruments = report.get("instruments") or [report["judge"]]
        instrument = min(instrument, len(instruments) - 1)
        block = instruments[instrument]
        crc = block["crc"]
        if alpha is not None and abs(alpha - crc["alpha"]) > 1e-12:
            from metrics.services import crc_from_inputs

            inputs = (snapshot.crc_inputs or [{}] * len(instruments))[instrument]
            crc = crc_from_inputs(inputs, alpha=alpha)
        from metrics.services import instruments_left_out_text

        context.update(
            {
                "instruments": instruments,
                "instrument_index": instrument,
                "audit": block,
                "instruments_left_out_text": (
                    instruments_left_out_text(report["instruments_left_out"])
                    if report.get("instruments_left_out")
                    else ""
                ),
                "crc": crc,
                "confusion_svg": charts.confusion_heatmap(block["confusion"]),
                "confusion_rows": list(
                    zip(block["confusion"]["labels"], block["confusion"]["matrix"], strict=True)
                ),
                "reliability_svg": charts.reliability_diagram(block["calibration"]["bins"]),
                "frontier_svg": charts.frontier_chart(block["frontier"], crc["lambda_hat"]),
                "estimates": [
                    {
                        "key": e.key,
                        "label": e.label,
                        "term": e.term,
                        "estimate": block[e.key],
                        "detail": e.detail(block[e.key]),
                    }
                    for e in estimators.shown()
                    if e.key in block
                ],
            }
        )
    return context


def _dashboard_summary(context: dict) -> dict | None:
    """The answer first (metrics.services.summary), or None before any report."""
    if not context.get("report"):
        return None
    from metrics.services.summary import dashboard_summary

    return dashboard_summary(report=context["report"], audit=context.get("audit"))


@require_GET
@login_required
def glossary(request):
    """Every term the dashboard and the audit card use, in plain words (metrics.glossary)."""
    from metrics.glossary import GLOSSARY

    entries = [(key, name, text) for key, (name, text) in GLOSSARY.items()]
    return render(request, "metrics/glossary.html", {"entries": entries})


@require_GET
@project_view(Role.LEAD)
def dashboard(request, project, membership):
    form = DashboardForm(request.GET)
    if not form.is_valid():
        raise Http404("Bad dashboard parameters.")
    judge = _judge_from(project, form.cleaned_data["judge"])
    scope = _Scope(project, form.cleaned_data["system"])
    context = {
        "project": project,
        "membership": membership,
        "judge": judge,
        "judge_param": _judge_param(judge),
        "judges": selectors.judges_for_project(project=project),
        "form": form,
        **_dashboard_context(
            project,
            judge,
            form.cleaned_data["alpha"],
            form.cleaned_data["instrument"] or 0,
            scope,
        ),
    }
    context["summary"] = _dashboard_summary(context)
    context["open_all"] = form.cleaned_data["open"] == "all"
    template = "metrics/dashboard.html"
    if request.htmx and request.htmx.target == "crc":
        template += "#crc"
    elif request.htmx:
        template += "#report"
    return render(request, template, context)


@require_POST
@project_view(Role.LEAD)
def recompute(request, project, membership):
    from metrics.services import snapshot_request

    judge = _judge_from(project, request.POST.get("judge"))
    scope = _Scope(project, request.POST.get("system"))
    snapshot = snapshot_request(
        project=project, judge=judge, system=scope.system, all_systems=scope.all_systems
    )
    if request.htmx:
        snapshot.refresh_from_db()
        response = render(
            request,
            "metrics/dashboard.html#progress",
            {
                "project": project,
                "pending": snapshot,
                "judge_param": _judge_param(judge),
                "system_qs": scope.query,
            },
        )
        if snapshot.status == ReportSnapshot.Status.DONE:
            response["HX-Refresh"] = "true"  # computed in-process already: show it
        return response
    return redirect(
        f"{reverse('metrics:dashboard', args=[project.slug])}?judge={_judge_param(judge)}"
        f"{scope.query}"
    )


@require_GET
@project_view(Role.LEAD)
def snapshot_progress(request, project, membership, snapshot_id: int):
    snapshot = selectors.snapshot_get_for_project(project=project, snapshot_id=snapshot_id)
    context = {
        "project": project,
        "membership": membership,
        "pending": snapshot,
        "judge_param": _judge_param(snapshot.judge),
        "system_qs": _Scope.of_snapshot(project, snapshot).query,
    }
    if not request.htmx:
        return render(request, "metrics/snapshot_progress.html", context)
    finished = snapshot.status in (ReportSnapshot.Status.DONE, ReportSnapshot.Status.FAILED)
    response = render(request, "metrics/dashboard.html#progress", context)
    if not finished:
        return response
    stop = HttpResponseStopPolling(response.content)
    if snapshot.status == ReportSnapshot.Status.DONE:
        stop["HX-Refresh"] = "true"  # reload the page to show the new report
    return stop


def _attachment(project, judge, kind: str, extension: str, scope: _Scope | None = None) -> str:
    """The Content-Disposition of a download: a file name of slugs only (a judge's name is
    free text: quotes, dots or line breaks in it must not name the file or break the header);
    a report of one system of several, or of all of them, says which."""
    which = ""
    if scope is not None and scope.several:
        system = scope.system
        which = "all-systems" if scope.all_systems else f"{system.name}-{system.version}"
    parts = [kind, project.slug, judge.name if judge is not None else "", which]
    name = "-".join(filter(None, (slugify(part) for part in parts)))
    stamp = timezone.now().strftime("%Y%m%d")
    return content_disposition_header(True, f"{name}-{stamp}.{extension}")


@require_GET
@project_view(Role.LEAD)
def report_download(request, project, membership):
    judge = _judge_from(project, request.GET.get("judge"))
    scope = _Scope(project, request.GET.get("system"))
    snapshot = selectors.snapshot_latest_done(
        project=project, judge=judge, **scope.selectors_kwargs()
    )
    if snapshot is None:
        messages.info(request, "No report has been computed yet: press Recompute.")
        return redirect("metrics:dashboard", slug=project.slug)
    from metrics.services import report_public

    # allow_nan=False: the report's figures are finite or None (json_safe); NaN is not JSON.
    response = JsonResponse(
        report_public(snapshot.data), json_dumps_params={"indent": 2, "allow_nan": False}
    )
    response["Content-Disposition"] = _attachment(project, judge, "report", "json", scope)
    return response


def _audit_card_for(request, project):
    """(judge, report, card, instrument index, format, scope) of the request's audit card, or
    a redirect to the dashboard saying why there is none."""
    from metrics.services import audit_card

    form = AuditCardForm(request.GET)
    if not form.is_valid():
        raise Http404("Bad audit card parameters.")
    judge = _judge_from(project, form.cleaned_data["judge"])
    if judge is None:
        messages.info(request, "An audit card belongs to a judge: choose one on the dashboard.")
        return redirect("metrics:dashboard", slug=project.slug)
    scope = _Scope(project, form.cleaned_data["system"])
    snapshot = selectors.snapshot_latest_done(
        project=project, judge=judge, **scope.selectors_kwargs()
    )
    if snapshot is None or not snapshot.data.get("judge"):
        messages.info(request, "No report of this judge has been computed yet: press Recompute.")
        return redirect("metrics:dashboard", slug=project.slug)
    instruments = snapshot.data.get("instruments") or [snapshot.data["judge"]]
    index = min(form.cleaned_data["instrument"] or 0, len(instruments) - 1)
    card = audit_card(report=snapshot.data, instrument=index)
    return judge, snapshot.data, card, index, form.cleaned_data["format"] or "json", scope


@require_GET
@project_view(Role.LEAD)
def audit_card_download(request, project, membership):
    from metrics.services import audit_card_rows
    from metrics.services.audit_card import AUDIT_CARD_CSV_HEADER
    from metrics.services.audit_card_text import audit_card_markdown, audit_card_readable

    found = _audit_card_for(request, project)
    if isinstance(found, HttpResponse):
        return found
    judge, report, card, _index, fmt, scope = found
    if fmt == "csv":
        buffer = io.StringIO()
        writer = NeutralCsvWriter(buffer)
        writer.writerow(AUDIT_CARD_CSV_HEADER)
        writer.writerows(audit_card_rows(card))
        response = HttpResponse(buffer.getvalue(), content_type="text/csv; charset=utf-8")
    elif fmt == "md":
        readable = audit_card_readable(card=card, design=report.get("design"))
        response = HttpResponse(
            audit_card_markdown(readable), content_type="text/markdown; charset=utf-8"
        )
    else:
        response = HttpResponse(
            json.dumps(card, indent=2, ensure_ascii=False, allow_nan=False),
            content_type="application/json",
        )
    response["Content-Disposition"] = _attachment(project, judge, "audit-card", fmt, scope)
    return response


@require_GET
@project_view(Role.LEAD)
def audit_card_page(request, project, membership):
    """The audit card to read and print (a print stylesheet); the downloads link from it."""
    from metrics.services.audit_card_text import audit_card_readable

    found = _audit_card_for(request, project)
    if isinstance(found, HttpResponse):
        return found
    judge, report, card, index, _fmt, scope = found
    context = {
        "project": project,
        "membership": membership,
        "judge_param": _judge_param(judge),
        "system_qs": scope.query,
        "instrument_index": index,
        "readable": audit_card_readable(card=card, design=report.get("design")),
    }
    return render(request, "metrics/audit_card.html", context)


class CompareForm(forms.Form):
    a = forms.IntegerField(required=False, min_value=1)
    b = forms.IntegerField(required=False, min_value=1)
    judge = forms.CharField(required=False)


@require_GET
@project_view(Role.LEAD)
def compare(request, project, membership):
    """Two systems on the questions both answered (`metrics.services.compare`), computed now."""
    from metrics.services.compare import systems_compare
    from metrics.services.trend import systems_trend, trend_points
    from metrics.trend_chart import trend_chart

    form = CompareForm(request.GET)
    if not form.is_valid():
        raise Http404("Bad comparison parameters.")
    systems = list(selectors.systems_for_project(project=project))
    by_id = {system.pk: system for system in systems}
    a = by_id.get(form.cleaned_data["a"] or (systems[0].pk if systems else 0))
    b = by_id.get(form.cleaned_data["b"] or (systems[1].pk if len(systems) > 1 else 0))
    if (form.cleaned_data["a"] and a is None) or (form.cleaned_data["b"] and b is None):
        raise Http404("No such system.")
    judge = _judge_from(project, form.cleaned_data["judge"])
    result = None
    if a is not None and b is not None and a.pk != b.pk:
        result = systems_compare(project=project, a=a, b=b, judge=judge)
    trend = systems_trend(project=project, judge=judge) if len(systems) > 1 else []
    context = {
        "trend": trend,
        "trend_svg": trend_chart(trend_points(trend)) if trend else "",
        "project": project,
        "membership": membership,
        "systems": systems,
        "a": a,
        "b": b,
        "judge": judge,
        "judge_param": _judge_param(judge),
        "judges": selectors.judges_for_project(project=project),
        "pairwise_judges": [
            j
            for j in selectors.judges_for_project(project=project)
            if backend_kind(j.backend).can_pairwise
        ],
        "result": result,
        "rates": list(result["rates"].values()) if result else [],
        "regressed": [row for row in result["worst_questions"] if row["delta"] < 0]
        if result
        else [],
    }
    return render(request, "metrics/compare.html", context)


class PairwiseRunForm(forms.Form):
    a = forms.IntegerField(min_value=1, max_value=2**31 - 1)
    b = forms.IntegerField(min_value=1, max_value=2**31 - 1)
    judge = forms.IntegerField(min_value=1, max_value=2**31 - 1)


@require_POST
@project_view(Role.LEAD)
def compare_pairwise_run(request, project, membership):
    """The compare page's *Run the pairwise judge* button: `judges.services.pairwise_run_start`
    on A and B (both orders, idempotent), then back to the comparison, which shows the run's
    figures once it is done (at once without a broker)."""
    from django.core.exceptions import ValidationError

    from judges.services import pairwise_run_start

    form = PairwiseRunForm(request.POST)
    compare = reverse("metrics:compare", args=[project.slug])
    if not form.is_valid():
        for field, errors in form.errors.items():
            messages.error(request, f"{field}: {' '.join(errors)}")
        return redirect(compare)
    data = form.cleaned_data
    systems = {s.pk: s for s in selectors.systems_for_project(project=project)}
    a, b = systems.get(data["a"]), systems.get(data["b"])
    judge = selectors.judge_get_for_project(project=project, judge_id=data["judge"])
    if a is None or b is None:
        raise Http404("No such system.")
    back = (
        reverse("metrics:compare", args=[project.slug])
        + "?"
        + urlencode({"a": a.pk, "b": b.pk, "judge": judge.pk})
    )
    try:
        run = pairwise_run_start(judge=judge, a=a, b=b, user=request.user)
    except ValidationError as error:
        for field, errors in error.message_dict.items():
            messages.error(request, f"{field}: {' '.join(errors)}")
        return redirect(back)
    run.refresh_from_db()
    state = "done" if run.status == "done" else f"{run.status}; this page shows it when done"
    messages.success(
        request, f"Pairwise judge {judge.name} on A and B, both orders: run {run.pk} ({state})."
    )
    return redirect(back)


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
    from metrics.services.active_audit import (
        DEFAULT_DELTA,
        DEFAULT_TARGET_AGREEMENT,
        RoutingError,
        selective_routing_apply,
        selective_routing_clear,
    )

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
    judge = _judge_from(project, form.cleaned_data["judge"])
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


# ------------------------------------------------------------------------------------------
# the queue's sampling design (issue 14): leads choose it, a task computes it


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
        from annotate.models import Project

        self.fields["queue_design"].choices = Project.QueueDesign.choices
        none = "— none (the uniform design needs no run)" if runs else "— no finished judge run yet"
        self.fields["design_run_id"].choices = [("", none)] + [
            (str(run.pk), f"run {run.pk} · {run.judge.name} · {run.total} claims" + finished)
            for run in runs
            for finished in [f" · {run.finished_at:%Y-%m-%d %H:%M}" if run.finished_at else ""]
        ]


def _design_context(project, membership, form, runs=None) -> dict:
    from metrics.services.active_design import design_runs_unfinished

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
    from annotate.services.design import DesignError
    from metrics.services.active_design import active_design_request, design_runs

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
    if request.method == "POST" and form.is_valid():
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
        _design_context(project, membership, form, runs),
        status=400 if form.errors else 200,
    )
