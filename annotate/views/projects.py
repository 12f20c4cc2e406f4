from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db.models import Count
from django.shortcuts import render
from django.urls import path
from django.views.decorators.http import require_GET

from annotate.access import project_view
from annotate.models import Role
from annotate.selectors import answer_get_for_project, project_list_for_user


@require_GET
@login_required
def project_list(request):
    projects = project_list_for_user(user=request.user)
    return render(request, "annotate/project_list.html", {"projects": projects})


@require_GET
@project_view(Role.ANALYST)
def project_detail(request, project, membership):
    answers = project.answers.annotate(n_claims=Count("claims")).order_by("position", "id")
    page = Paginator(answers, 50).get_page(request.GET.get("page"))
    return render(
        request,
        "annotate/project_detail.html",
        {"project": project, "membership": membership, "page": page},
    )


@require_GET
@project_view(Role.ANALYST)
def answer_detail(request, project, membership, answer_id: int):
    answer = answer_get_for_project(project=project, answer_id=answer_id)
    context = {
        "project": project,
        "membership": membership,
        "answer": answer,
        "passages": answer.passages.all(),
        "claims": answer.claims.order_by("position", "id"),
    }
    return render(request, "annotate/answer_detail.html", context)


urlpatterns = [
    path("", project_list, name="project-list"),
    path("p/<slug:slug>/", project_detail, name="project-detail"),
    path("p/<slug:slug>/answers/<int:answer_id>/", answer_detail, name="answer-detail"),
]
