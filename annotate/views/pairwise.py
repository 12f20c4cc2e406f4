"""The analysts' pairwise screen: two systems' answers to one question side by side, blind.

Every response renders `annotate/pairwise.html`; htmx requests get only its `#pairwise-screen`
partial, so save-and-next is one request. Without JavaScript the forms post and redirect.
The screen never names a system (see `pairwise_screen_get`) nor carries an answer's id: a pair
travels as the analyst's pair token (`annotate.pairwise.pair_token`). The queue's URL carries
the two systems' ids, which a lead copies from the compare page; no analyst's page names them.
"""

from django import forms
from django.contrib import messages
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import path, reverse
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import trigger_client_event

from annotate.access import project_view
from annotate.models import PairwisePreference, Role
from annotate.pairwise import pair_token
from annotate.selectors import (
    pairwise_pair_for_user,
    pairwise_queues_for_user,
    pairwise_screen_get,
    pairwise_systems_get,
)
from annotate.services.pairwise import (
    NOTE_MAX,
    PairwiseError,
    pairwise_preference_save,
    pairwise_preference_undo,
)
from annotate.text_diff import word_diff


class PreferenceForm(forms.Form):
    pair = forms.CharField(
        max_length=64, error_messages={"required": "not given; reload the page."}
    )
    choice = forms.ChoiceField(
        choices=[c for c in PairwisePreference.Choice.choices if c[0] != "import"],
        error_messages={"required": "Choose: a (left), b (right) or = (tie)."},
    )
    note = forms.CharField(required=False, max_length=NOTE_MAX)

    def first_error(self) -> str:
        for field, errors in self.errors.items():
            return f"{field}: {errors[0]}"
        return ""


def _screen(request, project, membership, systems, *, token=None, status=200, **extra):
    """The screen at pair `token` (else the next unmarked pair). After a refused save the
    token is whatever was posted: not one of the queue's, the screen shows the next pair."""
    context = {"project": project, "membership": membership, **extra}
    get = {"project": project, "user": request.user, "system_1": systems[0], "system_2": systems[1]}
    try:
        context.update(pairwise_screen_get(**get, token=token))
    except Http404:
        if "error" not in extra:
            raise
        context.update(pairwise_screen_get(**get))
    context["pair_systems"] = (systems[0].pk, systems[1].pk)
    if context.get("left") and context.get("right"):
        context["diff"] = word_diff(context["left"]["text"], context["right"]["text"])
    template = "annotate/pairwise.html" + ("#pairwise-screen" if request.htmx else "")
    return render(request, template, context, status=status)


@require_GET
@project_view(Role.ANALYST)
def pairwise_index(request, project, membership):
    """The project's pairwise queues: every two systems that answered a question both."""
    queues = pairwise_queues_for_user(project=project, user=request.user)
    context = {"project": project, "membership": membership, "queues": queues}
    return render(request, "annotate/pairwise_index.html", context)


@require_GET
@project_view(Role.ANALYST)
def pairwise_next(request, project, membership, a: int, b: int):
    systems = pairwise_systems_get(project=project, a=a, b=b)
    return _screen(request, project, membership, systems, token=request.GET.get("pair") or None)


@require_POST
@project_view(Role.ANALYST)
def pairwise_save(request, project, membership, a: int, b: int):
    systems = pairwise_systems_get(project=project, a=a, b=b)
    form = PreferenceForm(request.POST)
    try:
        if not form.is_valid():
            raise PairwiseError(form.first_error())
        pair = pairwise_pair_for_user(
            project=project,
            user=request.user,
            system_1=systems[0],
            system_2=systems[1],
            token=form.cleaned_data["pair"],
        )
        if pair is None:
            raise PairwiseError("pair: not a pair of this queue; reload the page.")
        saved = pairwise_preference_save(
            project=project,
            analyst=request.user,
            system_1=systems[0],
            system_2=systems[1],
            answer_ids=(pair.answer_1, pair.answer_2),
            choice=form.cleaned_data["choice"],
            note=form.cleaned_data["note"],
        )
    except PairwiseError as error:
        token, status = request.POST.get("pair") or None, 200 if request.htmx else 422
        return _screen(
            request, project, membership, systems, token=token, error=str(error), status=status
        )
    if not request.htmx:
        messages.success(request, f"Saved: {saved.get_choice_display()}.")
        return redirect("annotate:pairwise", slug=project.slug, a=a, b=b)
    response = _screen(request, project, membership, systems, saved=saved)
    return trigger_client_event(response, "pairwisePreferenceSaved", {"choice": saved.choice})


@require_POST
@project_view(Role.ANALYST)
def pairwise_undo(request, project, membership, a: int, b: int):
    systems = pairwise_systems_get(project=project, a=a, b=b)
    undone = pairwise_preference_undo(
        project=project, analyst=request.user, system_1=systems[0], system_2=systems[1]
    )
    if undone is None:
        notice, token = "There is no preference of yours to undo in this queue.", None
    else:
        notice = f"Undone: your “{undone.get_choice_display()}” on this pair; mark it again."
        token = pair_token(
            analyst_id=request.user.pk,
            answer_1_id=undone.answer_1_id,
            answer_2_id=undone.answer_2_id,
        )
    if not request.htmx:
        messages.success(request, notice)
        url = reverse("annotate:pairwise", args=[project.slug, a, b])
        return redirect(f"{url}?pair={token}" if token else url)
    return _screen(request, project, membership, systems, token=token, notice=notice)


urlpatterns = [
    path("p/<slug:slug>/pairwise/", pairwise_index, name="pairwise-index"),
    path("p/<slug:slug>/pairwise/<int:a>/<int:b>/", pairwise_next, name="pairwise"),
    path("p/<slug:slug>/pairwise/<int:a>/<int:b>/save/", pairwise_save, name="pairwise-save"),
    path("p/<slug:slug>/pairwise/<int:a>/<int:b>/undo/", pairwise_undo, name="pairwise-undo"),
]
