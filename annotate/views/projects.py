from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.shortcuts import redirect, render
from django.urls import path
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotate.access import project_view
from annotate.forms import (
    AnswerFilterForm,
    MembershipForm,
    ProjectCreateForm,
    ProjectSettingsForm,
)
from annotate.models import ROLE_RANK, Label, Role
from annotate.selectors import (
    answer_claims_page,
    answer_get_for_project,
    answers_page,
    claim_reveal_for_user,
    labels_by_guideline_version,
    pile_page_get,
    project_list_for_user,
)
from annotate.services.label_history import reveal_record
from annotate.services.projects import (
    MembershipError,
    member_set_notice,
    membership_remove,
    membership_set,
    project_create,
    project_create_allowed,
    project_settings_update,
)


@require_GET
@login_required
def project_list(request):
    projects = project_list_for_user(user=request.user)
    context = {"projects": projects, "can_create": project_create_allowed(user=request.user)}
    return render(request, "annotate/project_list.html", context)


@require_http_methods(["GET", "POST"])
@login_required
def project_new(request):
    if not project_create_allowed(user=request.user):
        raise PermissionDenied("Only staff may create projects here: ask an administrator.")
    form = ProjectCreateForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        project = project_create(owner=request.user, **form.cleaned_data)
        return redirect("annotate:project-detail", slug=project.slug)
    return render(request, "annotate/project_new.html", {"form": form})


@require_GET
@project_view(Role.ANALYST)
def project_detail(request, project, membership):
    """The answers list: filters and sort (AnswerFilterForm), paginated on the server; a lead
    acts on the listed answers in bulk (split into claims, export). An analyst's list is
    blind: no System column, no filter by judge verdict, gold, disagreement or system."""
    is_lead = ROLE_RANK[Role(membership.role)] >= ROLE_RANK[Role.LEAD]
    form = AnswerFilterForm(request.GET, project=project, blind=not is_lead)
    if not form.is_valid():
        messages.error(request, _form_problem(form))
        form = AnswerFilterForm({}, project=project, blind=not is_lead)
        form.is_valid()
    page = answers_page(
        project=project,
        page=request.GET.get("page"),
        sort=form.cleaned_data["sort"] or "position",
        **form.filters(),
    )
    context = {
        "project": project,
        "membership": membership,
        "page": page,
        "form": form,
        "filters": form.query(),
        "is_lead": is_lead,
    }
    return render(request, "annotate/project_detail.html", context)


def _form_problem(form) -> str:
    return "; ".join(
        f"{form.fields[name].label or name}: {' '.join(errors)}"
        if name in form.fields
        else " ".join(errors)
        for name, errors in form.errors.items()
    )


@require_GET
@project_view(Role.ANALYST)
def answer_detail(request, project, membership, answer_id: int):
    answer = answer_get_for_project(project=project, answer_id=answer_id)
    context = {
        "project": project,
        "membership": membership,
        "answer": answer,
        # A page of the pile and of the claims: no page grows with the answer.
        **pile_page_get(answer=answer, page=request.GET.get("pile")),
        "claims_page": answer_claims_page(answer=answer, page=request.GET.get("claims")),
    }
    _bits_beside_verdicts(request.user, project, context["claims_page"])
    return render(request, "annotate/answer_detail.html", context)


def _bits_beside_verdicts(user, project, claims_page) -> None:
    """Put on each listed claim (`claim.bits_verdicts`) the judge verdicts that carry grounding
    bits, through the labelling screen's reveal gate (`claim_reveal_for_user`: only with
    reveal-after-save, only on claims the user has labelled), recording the reveal as that
    screen does."""
    claims = list(claims_page.object_list)
    claims_page.object_list = claims
    if not project.reveal_after_save or not claims:
        return
    own = dict(
        Label.objects.filter(claim__in=claims, annotator=user).values_list("claim_id", "verdict")
    )
    for claim in claims:
        if claim.pk not in own:
            continue
        reveal = claim_reveal_for_user(claim=claim, user=user, project=project)
        claim.bits_verdicts = [
            v for v in (reveal or {}).get("judge_verdicts", []) if v.bits is not None
        ]
        if claim.bits_verdicts:
            reveal_record(claim_id=claim.pk, user=user, verdict=own[claim.pk])


@require_http_methods(["GET", "POST"])
@project_view(Role.OWNER)
def project_settings(request, project, membership):
    form = ProjectSettingsForm(request.POST or None, instance=project)
    if request.method == "POST" and form.is_valid():
        try:
            project_settings_update(
                project=project, **{f: form.cleaned_data[f] for f in form.fields}
            )
        except ValidationError as error:
            project.refresh_from_db()
            for field, problems in error.message_dict.items():
                form.add_error(field if field in form.fields else None, problems)
        else:
            messages.success(request, "Settings saved.")
            return redirect("annotate:settings", slug=project.slug)
    members = project.memberships.select_related("user").order_by("role", "user__username")
    context = {
        "project": project,
        "membership": membership,
        "form": form,
        "members": members,
        "member_form": MembershipForm(),
        "guideline_versions": labels_by_guideline_version(project=project),
    }
    return render(request, "annotate/settings.html", context)


@require_POST
@project_view(Role.OWNER)
def member_set(request, project, membership):
    form = MembershipForm(request.POST)
    if form.is_valid():
        try:
            membership_set(project=project, **form.cleaned_data)
            # The same words whether or not the user exists (no username oracle).
            messages.success(request, member_set_notice(**form.cleaned_data))
        except MembershipError as error:
            messages.error(request, str(error))
    else:
        messages.error(request, "Give a username and a role.")
    return redirect("annotate:settings", slug=project.slug)


@require_POST
@project_view(Role.OWNER)
def member_remove(request, project, membership, membership_id: int):
    try:
        membership_remove(project=project, membership_id=membership_id)
        messages.success(request, "Member removed.")
    except MembershipError as error:
        messages.error(request, str(error))
    return redirect("annotate:settings", slug=project.slug)


urlpatterns = [
    path("", project_list, name="project-list"),
    path("projects/new/", project_new, name="project-new"),
    path("p/<slug:slug>/", project_detail, name="project-detail"),
    path("p/<slug:slug>/answers/<int:answer_id>/", answer_detail, name="answer-detail"),
    path("p/<slug:slug>/settings/", project_settings, name="settings"),
    path("p/<slug:slug>/members/", member_set, name="member-set"),
    path("p/<slug:slug>/members/<int:membership_id>/remove/", member_remove, name="member-remove"),
]
