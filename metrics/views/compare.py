"""The comparison of two systems and its pairwise-judge button."""

from urllib.parse import urlencode

from django import forms
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from annotate.access import project_view
from annotate.models import Role
from annotate.text_diff import word_diff
from judges.backends.registry import backend_kind
from judges.services import pairwise_run_start
from metrics import selectors
from metrics.scope import judge_from, judge_param
from metrics.services.compare import systems_compare
from metrics.services.trend import systems_trend, trend_points
from metrics.trend_chart import trend_chart


class CompareForm(forms.Form):
    a = forms.IntegerField(required=False, min_value=1)
    b = forms.IntegerField(required=False, min_value=1)
    judge = forms.CharField(required=False)


@require_GET
@project_view(Role.LEAD)
def compare(request, project, membership):
    """Two systems on the questions both answered (`metrics.services.compare`), computed now."""
    form = CompareForm(request.GET)
    if not form.is_valid():
        raise Http404("Bad comparison parameters.")
    systems = list(selectors.systems_for_project(project=project))
    by_id = {system.pk: system for system in systems}
    a = by_id.get(form.cleaned_data["a"] or (systems[0].pk if systems else 0))
    b = by_id.get(form.cleaned_data["b"] or (systems[1].pk if len(systems) > 1 else 0))
    if (form.cleaned_data["a"] and a is None) or (form.cleaned_data["b"] and b is None):
        raise Http404("No such system.")
    judge = judge_from(project, form.cleaned_data["judge"])
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
        "judge_param": judge_param(judge),
        "judges": selectors.judges_for_project(project=project),
        "pairwise_judges": [
            j
            for j in selectors.judges_for_project(project=project)
            if backend_kind(j.backend).can_pairwise
        ],
        "result": result,
        "rates": list(result["rates"].values()) if result else [],
        "regressed": _with_word_diff(
            [row for row in result["worst_questions"] if row["delta"] < 0] if result else []
        ),
    }
    return render(request, "metrics/compare.html", context)


def _with_word_diff(rows: list[dict]) -> list[dict]:
    """Each regressed question with the words its two answers differ by, where each system
    gave one answer (annotate.text_diff; several answers a side are shown as they are)."""
    out = []
    for row in rows:
        a, b = row["a"]["answers"], row["b"]["answers"]
        diff = word_diff(a[0]["text"], b[0]["text"]) if len(a) == 1 and len(b) == 1 else None
        out.append({**row, "diff": diff})
    return out


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
