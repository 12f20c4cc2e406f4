"""A claim's comment thread: posted from the labelling screen or the adjudication card, and
answered with the thread as the poster may read it."""

from django.contrib import messages
from django.shortcuts import redirect, render
from django.urls import path
from django.views.decorators.http import require_POST

from annotate.access import project_view
from annotate.models import Label, Role
from annotate.selectors import claim_get_for_project, claim_thread_for_user
from annotate.services.comments import CommentError, comment_add
from annotate.services.label_history import reveal_record


def thread_context(*, claim, user, membership) -> dict:
    """The thread `user` may read on `claim`; colleagues' comments shown beside the user's own
    label are recorded as a reveal (a later change of that label is `changed_after_reveal`)."""
    thread = claim_thread_for_user(claim=claim, user=user, membership=membership)
    if thread["others_shown"] and membership.role == Role.ANALYST:
        own = Label.objects.filter(claim=claim, annotator=user).values_list("verdict", flat=True)
        if own:
            reveal_record(claim_id=claim.pk, user=user, verdict=own[0])
    return {"thread": thread, "thread_claim": claim}


@require_POST
@project_view(Role.ANALYST)
def comment_post(request, project, membership, claim_id: int):
    claim = claim_get_for_project(project=project, claim_id=claim_id)
    error = ""
    try:
        comment_add(claim=claim, author=request.user, text=request.POST.get("text", ""))
    except CommentError as refused:
        error = str(refused)
    if not request.htmx:
        if error:
            messages.error(request, f"Your comment was not saved: {error}")
        else:
            messages.success(request, "Comment added.")
        back = request.POST.get("next") or ""
        if back == "adjudicate" and membership.role != Role.ANALYST:
            return redirect("annotate:adjudicate-claim", project.slug, claim.pk)
        return redirect("annotate:label-claim", project.slug, claim.pk)
    context = {
        "project": project,
        "membership": membership,
        "comment_error": error,
        "comment_text": request.POST.get("text", "") if error else "",
        **thread_context(claim=claim, user=request.user, membership=membership),
    }
    # htmx swaps only a 200: a refusal comes back as the thread with its message and the text
    return render(request, "annotate/_comments.html", context)


urlpatterns = [
    path("p/<slug:slug>/claims/<int:claim_id>/comments/", comment_post, name="comment-post"),
]
