"""Judge versions (issue 28): the development disagreements a lead reviews, a new version with
chosen ones as few-shot examples in one action, the gold split, and two versions compared on
held-out gold. Leads and owners only."""

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from annotate.access import project_view
from annotate.models import Role
from judges import versions
from judges.forms import GoldSplitForm, JudgeVersionForm
from metrics import selectors
from metrics.services.judge_compare import judge_compare


def _versions_page(request, project, membership, judge, *, form=None, status=200):
    rows = versions.development_disagreements(judge=judge)
    context = {
        "project": project,
        "membership": membership,
        "judge": judge,
        "label": versions.judge_version_label(judge),
        "lineage": versions.judge_lineage(judge),
        "children": judge.versions.order_by("pk"),
        "split": versions.gold_split_get(project=project),
        "split_form": GoldSplitForm(),
        "rows": rows,
        "form": form or JudgeVersionForm(claim_ids=[r["claim"].pk for r in rows]),
        "judges": selectors.judges_for_project(project=project),
    }
    return render(request, "metrics/judge_versions.html", context, status=status)


@require_GET
@project_view(Role.LEAD)
def judge_versions(request, project, membership, judge_id: int):
    judge = selectors.judge_get_for_project(project=project, judge_id=judge_id)
    return _versions_page(request, project, membership, judge)


@require_POST
@project_view(Role.LEAD)
def gold_split(request, project, membership, judge_id: int):
    judge = selectors.judge_get_for_project(project=project, judge_id=judge_id)
    form = GoldSplitForm(request.POST)
    if form.is_valid():
        try:
            versions.gold_split_create(project=project, user=request.user, **form.cleaned_data)
            messages.success(request, "The project's gold is split: development and held-out.")
        except ValidationError as exc:
            messages.error(request, " ".join(exc.messages))
    else:
        messages.error(request, "; ".join(e for errs in form.errors.values() for e in errs))
    return redirect(reverse("metrics:judge-versions", args=[project.slug, judge.pk]))


@require_POST
@project_view(Role.LEAD)
def version_create(request, project, membership, judge_id: int):
    judge = selectors.judge_get_for_project(project=project, judge_id=judge_id)
    form = JudgeVersionForm(request.POST, claim_ids=request.POST.getlist("few_shot"))
    if form.is_valid():
        data = form.cleaned_data
        try:
            version = versions.judge_version_create(
                judge=judge,
                name=data["name"],
                model=data["model"] or None,
                verify_prompt=data["verify_prompt"] or None,
                few_shot_claim_ids=data["few_shot"],
            )
        except ValidationError as exc:
            for field, errors in exc.message_dict.items():
                form.add_error(field if field in form.fields else None, errors)
        else:
            messages.success(request, f"{version.name} made: run it, then compare.")
            return redirect(reverse("judges:judge-detail", args=[project.slug, version.pk]))
    return _versions_page(request, project, membership, judge, form=form, status=422)


@require_GET
@project_view(Role.LEAD)
def judge_compare_page(request, project, membership):
    judges = selectors.judges_for_project(project=project)
    a = b = result = None
    if request.GET.get("a") and request.GET.get("b"):
        a = selectors.judge_get_for_project(project=project, judge_id=request.GET["a"])
        b = selectors.judge_get_for_project(project=project, judge_id=request.GET["b"])
        result = judge_compare(project=project, a=a, b=b) if a.pk != b.pk else None
    context = {
        "project": project,
        "membership": membership,
        "judges": judges,
        "a": a,
        "b": b,
        "result": result,
    }
    return render(request, "metrics/judge_compare.html", context)
