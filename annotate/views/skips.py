"""The leads' list of claims analysts skipped, with the reasons; a lead sends one back to the
analyst's queue or opens the claims editor for a claim flagged as not atomic."""

from django.contrib import messages
from django.core.paginator import Paginator
from django.shortcuts import redirect, render
from django.urls import path
from django.views.decorators.http import require_GET, require_POST

from annotate.access import project_view
from annotate.models import ClaimSkip, Role
from annotate.services.skips import claim_skip_return


@require_GET
@project_view(Role.LEAD)
def skipped_list(request, project, membership):
    skips = (
        ClaimSkip.objects.filter(claim__project=project)
        .select_related("claim__answer", "user")
        .order_by("-created_at", "-id")
    )
    reason = request.GET.get("reason", "")
    if reason in ClaimSkip.Reason.values:
        skips = skips.filter(reason=reason)
    page = Paginator(skips, 50).get_page(request.GET.get("page"))
    context = {
        "project": project,
        "membership": membership,
        "page": page,
        "reasons": ClaimSkip.Reason.choices,
        "reason": reason,
    }
    return render(request, "annotate/skipped.html", context)


@require_POST
@project_view(Role.LEAD)
def skipped_return(request, project, membership, skip_id: int):
    claim_skip_return(project=project, skip_id=skip_id)
    messages.success(request, "The claim is back in that analyst's queue.")
    return redirect("annotate:skipped", slug=project.slug)


urlpatterns = [
    path("p/<slug:slug>/skipped/", skipped_list, name="skipped"),
    path("p/<slug:slug>/skipped/<int:skip_id>/return/", skipped_return, name="skipped-return"),
]
