"""Claim splitting and editing by leads: one page per answer (`annotate:claims-edit`).

Every change is a POST form; with htmx it swaps the page's `#claims` region, without it the
browser is redirected back to the page (errors and notices as messages).
"""

from django import forms
from django.contrib import messages
from django.db.models import Count, Exists, OuterRef
from django.shortcuts import redirect, render
from django.urls import path
from django.views.decorators.http import require_GET, require_POST

from annotate.access import project_view
from annotate.models import Answer, Claim, ClaimSkip, Role
from annotate.quotes import QuoteError, utf16_to_codepoint_offset
from annotate.selectors import answer_get_for_project, claim_get_for_project
from annotate.services.claims import (
    ClaimsError,
    answer_abstention_set,
    claim_add,
    claim_delete,
    claim_edit,
    claim_split_at,
    claims_merge,
    claims_split,
)
from annotate.services.review import text_segments
from annotate.splitting import abstention_detect


class SplitForm(forms.Form):
    """Split by rule, here. Splitting by LLM calls an endpoint, so it runs as a job on a
    worker, started from the page's "Split by LLM" region (served by judges)."""

    method = forms.ChoiceField(choices=[("rule", "By rule"), ("llm", "By LLM")], initial="rule")
    force = forms.BooleanField(required=False)

    def clean(self):
        data = super().clean()
        if data.get("method") == "llm":
            raise forms.ValidationError(
                "Splitting by LLM runs as a job on a worker: use “Split by LLM” on this page."
            )
        return data


class ClaimTextForm(forms.Form):
    text = forms.CharField(max_length=5000)
    after = forms.IntegerField(required=False)


class SplitAtForm(forms.Form):
    before = forms.CharField(required=False, max_length=5000, strip=False)
    at_utf16 = forms.IntegerField(required=False, min_value=0)


def _first_error(form: forms.Form) -> str:
    for field, errors in form.errors.items():
        name = "" if field == "__all__" else f"{field}: "
        return f"{name}{errors[0]}"
    return "The form was not valid."


def _stale_notice(n: int) -> str:
    """What the lead must know when an edit left judge verdicts on text the claim lost."""
    if not n:
        return ""
    made, counts = ("verdict was", "counts") if n == 1 else ("verdicts were", "count")
    return (
        f" {n} judge {made} made on the old text and no longer {counts}; "
        "re-run the judge on unjudged claims."
    )


def _editor_context(project, membership, answer: Answer, **extra) -> dict:
    claims = list(
        answer.claims.select_related("gold")
        .annotate(
            n_labels=Count("labels"),
            flagged_not_atomic=Exists(
                ClaimSkip.objects.filter(claim=OuterRef("pk"), reason=ClaimSkip.Reason.NOT_ATOMIC)
            ),
        )
        .order_by("position", "id")
    )
    spans = [(c.span_start, c.span_end, c.position + 1) for c in claims if c.span_start is not None]
    neighbours = project.answers.order_by("position", "id")
    return {
        "project": project,
        "membership": membership,
        "answer": answer,
        "claims": claims,
        "segments": text_segments(answer.text, spans),
        "abstention_phrase": abstention_detect(answer.text),
        "previous": neighbours.filter(position__lt=answer.position).last(),
        "following": neighbours.filter(position__gt=answer.position).first(),
        **extra,
    }


def _respond(
    request,
    project,
    membership,
    answer: Answer,
    *,
    error: str = "",
    notice: str = "",
    edited: Claim | None = None,
):
    """The editor again; `edited` is the claim whose text a service just changed (its judge
    verdicts on the old text stopped counting: the notice says how many)."""
    stale = getattr(edited, "verdicts_retired", 0) if edited is not None else 0
    notice += _stale_notice(stale)
    rerun_judge = bool(stale)
    if request.htmx:
        context = _editor_context(
            project, membership, answer, error=error, notice=notice, rerun_judge=rerun_judge
        )
        return render(request, "annotate/claims_edit.html#claims", context)
    if error:
        messages.error(request, error)
    elif notice:
        messages.success(request, notice)
    return redirect("annotate:claims-edit", project.slug, answer.pk)


@require_GET
@project_view(Role.LEAD)
def claims_edit(request, project, membership, answer_id: int):
    answer = answer_get_for_project(project=project, answer_id=answer_id)
    return render(
        request, "annotate/claims_edit.html", _editor_context(project, membership, answer)
    )


@require_POST
@project_view(Role.LEAD)
def claims_split_view(request, project, membership, answer_id: int):
    answer = answer_get_for_project(project=project, answer_id=answer_id)
    form = SplitForm(request.POST)
    if not form.is_valid():
        return _respond(request, project, membership, answer, error=_first_error(form))
    data = form.cleaned_data
    try:
        created = claims_split(
            answer=answer, method=data["method"], user=request.user, force=data["force"]
        )
    except ClaimsError as error:
        return _respond(request, project, membership, answer, error=str(error))
    notice = f"Split into {len(created)} new claim{'s' if len(created) != 1 else ''}."
    return _respond(request, project, membership, answer, notice=notice)


@require_POST
@project_view(Role.LEAD)
def claim_add_view(request, project, membership, answer_id: int):
    answer = answer_get_for_project(project=project, answer_id=answer_id)
    form = ClaimTextForm(request.POST)
    if not form.is_valid():
        return _respond(request, project, membership, answer, error=_first_error(form))
    after_id = form.cleaned_data["after"]
    after = answer.claims.filter(pk=after_id).first() if after_id else None
    try:
        claim_add(answer=answer, text=form.cleaned_data["text"], user=request.user, after=after)
    except ClaimsError as error:
        return _respond(request, project, membership, answer, error=str(error))
    return _respond(request, project, membership, answer, notice="Claim added.")


@require_POST
@project_view(Role.LEAD)
def answer_abstention(request, project, membership, answer_id: int):
    answer = answer_get_for_project(project=project, answer_id=answer_id)
    abstention = request.POST.get("abstention") == "yes"
    answer_abstention_set(answer=answer, abstention=abstention, user=request.user)
    notice = (
        "Marked as an abstention: its claims are left out of claim rates."
        if abstention
        else "Marked as not an abstention."
    )
    return _respond(request, project, membership, answer, notice=notice)


@require_POST
@project_view(Role.LEAD)
def claim_edit_view(request, project, membership, claim_id: int):
    claim = claim_get_for_project(project=project, claim_id=claim_id)
    form = ClaimTextForm(request.POST)
    if not form.is_valid():
        return _respond(request, project, membership, claim.answer, error=_first_error(form))
    try:
        claim = claim_edit(claim=claim, text=form.cleaned_data["text"], user=request.user)
    except ClaimsError as error:
        return _respond(request, project, membership, claim.answer, error=str(error))
    notice = f"Claim {claim.position + 1} saved."
    if claim.needs_review:
        notice += " Its labels are kept and flagged for review on the adjudication page."
    return _respond(request, project, membership, claim.answer, notice=notice, edited=claim)


def _split_point(claim: Claim, form: SplitAtForm) -> int:
    """Code-point offset from the typed start of the second claim, or the cursor (UTF-16)."""
    before = form.cleaned_data["before"].strip()
    if before:
        index = claim.text.find(before)
        if index < 0:
            raise ClaimsError(f"The claim does not contain {before!r}.")
        return index
    if form.cleaned_data["at_utf16"] is None:
        raise ClaimsError("Type the words the second claim starts with, or place the cursor.")
    try:
        return utf16_to_codepoint_offset(claim.text, form.cleaned_data["at_utf16"])
    except QuoteError as error:
        raise ClaimsError(str(error)) from error


@require_POST
@project_view(Role.LEAD)
def claim_split_at_view(request, project, membership, claim_id: int):
    claim = claim_get_for_project(project=project, claim_id=claim_id)
    form = SplitAtForm(request.POST)
    try:
        if not form.is_valid():
            raise ClaimsError(_first_error(form))
        first, second = claim_split_at(claim=claim, at=_split_point(claim, form), user=request.user)
    except ClaimsError as error:
        return _respond(request, project, membership, claim.answer, error=str(error))
    notice = f"Split into claims {first.position + 1} and {second.position + 1}."
    if first.needs_review:
        notice += f" The labels stay on claim {first.position + 1}, flagged for review."
    return _respond(request, project, membership, claim.answer, notice=notice, edited=first)


@require_POST
@project_view(Role.LEAD)
def claim_merge_view(request, project, membership, claim_id: int):
    claim = claim_get_for_project(project=project, claim_id=claim_id)
    following = claim.answer.claims.filter(position__gt=claim.position).order_by("position").first()
    if following is None:
        return _respond(
            request, project, membership, claim.answer, error="The last claim has no next one."
        )
    try:
        merged = claims_merge(first=claim, second=following, user=request.user)
    except ClaimsError as error:
        return _respond(request, project, membership, claim.answer, error=str(error))
    notice = f"Merged into claim {merged.position + 1}."
    if merged.needs_review:
        notice += " It keeps the labels of the labelled claim, flagged for review."
    return _respond(request, project, membership, claim.answer, notice=notice, edited=merged)


@require_POST
@project_view(Role.LEAD)
def claim_delete_view(request, project, membership, claim_id: int):
    claim = claim_get_for_project(project=project, claim_id=claim_id)
    answer = claim.answer
    discard = request.POST.get("discard_labels") == "on"
    try:
        claim_delete(claim=claim, user=request.user, discard_labels=discard)
    except ClaimsError as error:
        return _respond(request, project, membership, answer, error=str(error))
    return _respond(request, project, membership, answer, notice="Claim deleted.")


urlpatterns = [
    path("p/<slug:slug>/answers/<int:answer_id>/claims/", claims_edit, name="claims-edit"),
    path(
        "p/<slug:slug>/answers/<int:answer_id>/claims/split/",
        claims_split_view,
        name="claims-split",
    ),
    path("p/<slug:slug>/answers/<int:answer_id>/claims/add/", claim_add_view, name="claim-add"),
    path(
        "p/<slug:slug>/answers/<int:answer_id>/abstention/",
        answer_abstention,
        name="answer-abstention",
    ),
    path("p/<slug:slug>/claims/<int:claim_id>/edit/", claim_edit_view, name="claim-edit"),
    path(
        "p/<slug:slug>/claims/<int:claim_id>/split-at/",
        claim_split_at_view,
        name="claim-split-at",
    ),
    path("p/<slug:slug>/claims/<int:claim_id>/merge/", claim_merge_view, name="claim-merge"),
    path("p/<slug:slug>/claims/<int:claim_id>/delete/", claim_delete_view, name="claim-delete"),
]
