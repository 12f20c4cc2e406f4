"""The labelling screen: the queue's next claim, save-and-next, undo, moving within an answer.

Every response renders `annotate/label.html`; htmx requests get only its `#screen` partial, so
save-and-next is one request. Without JavaScript the forms post normally and redirect.
Blind by default: the judge's verdicts and colleagues' labels reach the page only through
`claim_reveal_for_user`, which shows nothing before the analyst's own label is saved.
"""

from django import forms
from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import path, reverse
from django.utils.text import Truncator
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import push_url, trigger_client_event

from annotate import hooks
from annotate.access import project_view
from annotate.guidelines import guidelines_html
from annotate.models import (
    Claim,
    ClaimSkip,
    Label,
    LabelHistory,
    Passage,
    Role,
    Verdict,
)
from annotate.selectors import (
    claim_get_for_project,
    claim_reveal_for_user,
    label_screen_get,
    labelling_progress,
)
from annotate.services.label_history import reveal_record
from annotate.services.label_undo import label_undo, undo_target
from annotate.services.labels import ClaimHeld, LabelError, LabelSaveConflict, label_save_and_next
from annotate.services.queue import QueueError, claim_next_for_user, claim_reserve
from annotate.services.skips import claim_skip, claim_skip_undo
from annotate.views.comments import thread_context
from annotate.views.label_form import (
    MAX_ID,
    LabelForm,
    form_values,
    quote_options,
    spans_shown,
    utf16_length,
    whole_number,
)


def _screen(
    request, project, membership, claim: Claim | None, *, data=None, from_queue=False, **extra
):
    status = extra.pop("status", 200)
    context = {"project": project, "membership": membership, "claim": claim, **extra}
    context["progress"] = labelling_progress(
        project=project, user=request.user, membership=membership
    )
    if claim is not None:
        # The quote's passage: what was just sent, or (paging the pile) what the form holds.
        chosen = (data if data is not None else request.GET).get("passage") or None
        context.update(
            label_screen_get(
                project=project,
                user=request.user,
                claim=claim,
                from_queue=from_queue,
                pile=request.GET.get("pile"),
                chosen_passage_id=chosen,
            )
        )
        context["values"] = form_values(
            data=data, label=context["own_label"], passages=_PileById(claim)
        )
        if data is None and request.GET.get("passage"):
            context["values"]["passage"] = request.GET["passage"]
        context["quote_options"] = quote_options(
            context["quote_passages"], context["values"].get("passage")
        )
        if not (request.htmx and request.htmx.target == "pile"):
            context.update(thread_context(claim=claim, user=request.user, membership=membership))
    _saved_reveal_attach(context, request, project, extra.get("saved"))
    _ground_truth_attach(context, claim, extra.get("saved"))
    if not request.htmx:  # the panel sits outside the #screen partial: not on every save
        context["guidelines"] = guidelines_html(project.guidelines)
    template = "annotate/label.html"
    # A page of the pile alone (its links target #pile) shows no reveal; the screen does.
    pile_only = bool(request.htmx) and request.htmx.target == "pile" and claim is not None
    if not pile_only:
        _reveals_record(request.user, (context.get("reveal"), context.get("own_label")))
        _reveals_record(request.user, (context.get("saved_reveal"), extra.get("saved")))
    if request.htmx:
        template += "#pile-page" if pile_only else "#screen"
    return render(request, template, context, status=status)


def _saved_reveal_attach(context: dict, request, project, saved) -> None:
    """Beside the "Saved …" line, what the analyst may now see of the claim just labelled."""
    if saved is not None:
        context["saved_reveal"] = claim_reveal_for_user(
            claim=saved.claim, user=request.user, project=project
        )


def _confirmation(request, project, membership, following: Claim, *, saved, saved_quoted):
    """What a save answers when the browser already shows `following`'s screen, rendered ahead
    (label.js sends its id as `X-Screen-Ahead` and, when the answer is for that claim, takes
    only the counters and the "Saved …" line from it): the `#screen` element with those two,
    not the whole screen again. The saved claim's reveal and its record are as on the screen
    (`_screen`); `following`'s own reveal was recorded when its screen was rendered ahead."""
    context = {"project": project, "membership": membership, "claim": following}
    context["progress"] = labelling_progress(
        project=project, user=request.user, membership=membership
    )
    context.update(saved=saved, saved_quoted=saved_quoted)
    _saved_reveal_attach(context, request, project, saved)
    _ground_truth_attach(context, None, saved)
    _reveals_record(request.user, (context.get("saved_reveal"), saved))
    return render(request, "annotate/label.html#confirmation", context)


def _screen_ahead(request) -> int | None:
    """The claim whose screen the browser shows already, rendered ahead (label.js sends its id
    as `X-Screen-Ahead` with an htmx save); None without one."""
    if not request.htmx:
        return None
    return whole_number(request.headers.get("X-Screen-Ahead", ""), MAX_ID)


def _shown_ahead(request, following: Claim | None) -> bool:
    """Whether the browser shows `following`'s screen already (label.js's `X-Screen-Ahead`)."""
    return following is not None and _screen_ahead(request) == following.pk


class _PileById:
    """The claim's pile by passage id, read on first use (a screen without extra spans reads
    nothing): for naming the ranks of spans, on any page of the pile."""

    def __init__(self, claim: Claim):
        self._claim = claim
        self._passages: dict | None = None

    def get(self, passage_id):
        if self._passages is None:
            self._passages = {
                passage.pk: passage
                for passage in Passage.objects.filter(answer_id=self._claim.answer_id)
            }
        return self._passages.get(passage_id)


def _ground_truth_attach(context: dict, claim, saved) -> None:
    """Beside a reveal (never without one: the same gate, after the user's own label), the
    ground truth of a claim of an answer to a test question (issue 27, item 5)."""
    for key, shown in (("reveal", claim), ("saved_reveal", getattr(saved, "claim", None))):
        if context.get(key) is not None and shown is not None:
            context[key] = {**context[key], "ground_truth": hooks.claim_ground_truth(claim=shown)}


def _reveals_record(user, shown: tuple) -> None:
    """Record a reveal this screen renders (a judge's verdict or a colleague's label beside
    the user's own label): a later change of that label is then `changed_after_reveal`."""
    reveal, label = shown
    seen = reveal and (
        reveal["judge_verdicts"] or reveal["colleague_labels"] or reveal.get("ground_truth")
    )
    if label is not None and seen:
        reveal_record(claim_id=label.claim_id, user=user, verdict=label.verdict)


def _next(request, project, membership) -> tuple[Claim | None, str]:
    try:
        claim = claim_next_for_user(
            project=project, user=request.user, stratum=membership.queue_stratum
        )
    except QueueError as error:
        return None, f"Your queue's restriction cannot be applied: {error} Ask a lead to fix it."
    return claim, ""


@require_GET
@project_view(Role.ANALYST)
def label_next(request, project, membership):
    claim, error = _next(request, project, membership)
    saved = None
    if whole_number(request.GET.get("saved", ""), MAX_ID) is not None:
        saved = (
            Label.objects.select_related("claim")
            .prefetch_related("more_spans")
            .filter(claim__project=project, claim_id=request.GET["saved"], annotator=request.user)
            .first()
        )
    quoted = ""
    if saved is not None:
        quoted = _quotes_phrase([saved.evidence_quote, *(s.quote for s in saved.more_spans.all())])
    return _screen(
        request,
        project,
        membership,
        claim,
        error=error,
        saved=saved,
        saved_quoted=quoted,
        from_queue=True,
    )


@require_GET
@project_view(Role.ANALYST)
def label_claim(request, project, membership, claim_id: int):
    claim = claim_get_for_project(project=project, claim_id=claim_id)
    return _screen(request, project, membership, claim)


@never_cache
@require_GET
@project_view(Role.ANALYST)
def label_claim_following(request, project, membership, claim_id: int):
    """The screen save-and-next of claim `claim_id` will answer with, rendered ahead: label.js
    fetches it once `claim_id` is shown and swaps it in the moment the analyst saves, while the
    save is posted. The claim is reserved for the analyst now (`claim_next_for_user(after=)`);
    204 when nothing would follow, so the last save of a queue waits for the server."""
    try:
        claim = claim_next_for_user(
            project=project, user=request.user, stratum=membership.queue_stratum, after=claim_id
        )
    except QueueError:
        claim = None
    if claim is None:
        return HttpResponse(status=204)
    return _screen(request, project, membership, claim, from_queue=True)


@require_POST
@project_view(Role.ANALYST)
def label_claim_save(request, project, membership, claim_id: int):
    form = LabelForm(request.POST)
    try:
        if not form.is_valid():
            raise LabelError(form.first_error())
        data = form.cleaned_data
        more = form.more_spans()
        label, following = label_save_and_next(
            project=project,
            membership=membership,
            annotator=request.user,
            claim_id=claim_id,
            verdict=data["verdict"],
            passage_id=data["passage"],
            start_utf16=data["start_utf16"],
            end_utf16=data["end_utf16"],
            quote=data["quote"],
            more=more,
            note=data["note"],
            correct=data["correct"] if data["verdict"] != Verdict.SUPPORTED else "",
            seconds=data["seconds"],
            shown=_screen_ahead(request),
        )
    except ClaimHeld as error:
        return _moved_on(request, project, membership, str(error))
    except (LabelError, QueueError, LabelSaveConflict) as error:
        claim = claim_get_for_project(project=project, claim_id=claim_id)
        status = 200 if request.htmx else 422
        if isinstance(error, LabelSaveConflict):
            status = 503  # label.js swaps it in: the form as sent, with the message
        response = _screen(
            request, project, membership, claim, data=request.POST, error=str(error), status=status
        )
        if status == 503:
            response["Retry-After"] = "1"
        return response
    if not request.htmx:
        return redirect(f"{reverse('annotate:label-next', args=[project.slug])}?saved={claim_id}")
    quoted = label.evidence_quote and _quotes_phrase(
        [label.evidence_quote, *(span["quote"] for span in more)]
    )
    if _shown_ahead(request, following):
        response = _confirmation(
            request, project, membership, following, saved=label, saved_quoted=quoted
        )
    else:
        response = _screen(
            request,
            project,
            membership,
            following,
            saved=label,
            saved_quoted=quoted,
            from_queue=True,
        )
    push_url(response, reverse("annotate:label-next", args=[project.slug]))
    return trigger_client_event(
        response, "labelSaved", {"claim": claim_id, "verdict": label.verdict}
    )


def _moved_on(request, project, membership, why: str):
    """The analyst's next claim from their queue, with why their save was refused (a
    colleague holds the claim): without JavaScript, by a redirect to it and a message."""
    notice = f"{why} Here is the next claim from your queue."
    if not request.htmx:
        messages.warning(request, notice)
        return redirect("annotate:label-next", slug=project.slug)
    claim, error = _next(request, project, membership)
    response = _screen(request, project, membership, claim, from_queue=True, error=error or notice)
    return push_url(response, reverse("annotate:label-next", args=[project.slug]))


_NOTHING_TO_UNDO = "There is no save or skip of yours to undo."


def _quotes_phrase(quotes: list[str]) -> str:
    """How a message names a label's quote: every span, in order, each cut to a readable
    length ("" without a quote)."""
    quotes = [quote for quote in quotes if quote]
    if not quotes:
        return ""
    if len(quotes) == 1:
        return f" with the quote “{Truncator(quotes[0]).chars(60)}”"
    cut = [f"“{Truncator(quote).chars(40)}”" for quote in quotes]
    return f" with {len(cut)} quoted spans: {', '.join(cut[:-1])} and {cut[-1]}"


def _undo_notice(target: LabelHistory) -> tuple[str, dict | None]:
    """What the undo says it undid, and the form to show again: a new label's verdict, quote
    and note come back into the form (save again to keep them, changed or not); a changed
    label is back to its earlier state, which the form shows as the saved label."""
    claim_text = Truncator(target.claim.text).chars(80)
    verdict = target.verdict
    if target.action == LabelHistory.Action.CREATED:
        values = {
            "verdict": target.verdict,
            "note": target.note,
            "correct": target.correct,
            "quote": target.evidence_quote,
            "passage": "",
            "start_utf16": "",
            "end_utf16": "",
        }
        passage = (
            target.evidence_passage_id_at_time
            and Passage.objects.filter(pk=target.evidence_passage_id_at_time).first()
        )
        if passage and target.evidence_start is not None:
            values.update(
                passage=str(passage.pk),
                start_utf16=str(utf16_length(passage.text[: target.evidence_start])),
                end_utf16=str(utf16_length(passage.text[: target.evidence_end])),
                more_spans=spans_shown(_PileById(target.claim), target.more_spans or []),
            )
        quoted = _quotes_phrase(
            [target.evidence_quote, *(span["quote"] for span in target.more_spans or [])]
        )
        return (
            f"Label undone: your {verdict} label{quoted} on "
            f"“{claim_text}”; the form holds it again: save it as it is or changed, or move on.",
            values,
        )
    return (
        f"Label undone: your change to {verdict} on “{claim_text}”; your label is as it was "
        "before.",
        None,
    )


@require_POST
@project_view(Role.ANALYST)
def label_last_undo(request, project, membership):
    """Undo the analyst's most recent action, a save or a skip (`undo_target`)."""
    target = undo_target(user=request.user, project=project)
    if isinstance(target, ClaimSkip):
        return _skip_undo(request, project, membership, target)
    restore = None
    try:
        claim = label_undo(user=request.user, project=project)
    except LabelError as error:
        claim, notice, error = None, "", str(error)
    else:
        notice, restore = _undo_notice(target) if claim else (_NOTHING_TO_UNDO, None)
        error = ""
    if claim is not None:
        claim_reserve(claim=claim, user=request.user)
        # The counters moved in the database; the screen reads them from these objects.
        membership.refresh_from_db(fields=["labels_saved"])
        project.refresh_from_db(fields=["claims_complete"])
    if not request.htmx:
        if claim is None:
            messages.warning(request, error or notice)
            return redirect("annotate:label-next", slug=project.slug)
        messages.success(request, notice)
        return redirect("annotate:label-claim", slug=project.slug, claim_id=claim.pk)
    if claim is None:
        claim, _ = _next(request, project, membership)
    response = _screen(
        request, project, membership, claim, data=restore, notice=notice, error=error
    )
    return push_url(
        response,
        reverse("annotate:label-claim", args=[project.slug, claim.pk])
        if claim
        else reverse("annotate:label-next", args=[project.slug]),
    )


def _skip_undo(request, project, membership, skip: ClaimSkip):
    """The skipped claim back in the queue and on the screen, saying the skip was undone."""
    claim = claim_skip_undo(user=request.user, project=project, skip_id=skip.pk)
    if claim is None:
        notice, error = "", "That skip is gone already: a lead sent the claim back to you."
    else:
        notice = (
            f"Skip of claim “{Truncator(claim.text).chars(80)}” undone: it is back in your queue."
        )
        error = ""
    if not request.htmx:
        if claim is None:
            messages.warning(request, error)
            return redirect("annotate:label-next", slug=project.slug)
        messages.success(request, notice)
        return redirect("annotate:label-claim", slug=project.slug, claim_id=claim.pk)
    if claim is None:
        claim, _ = _next(request, project, membership)
    response = _screen(request, project, membership, claim, notice=notice, error=error)
    return push_url(
        response,
        reverse("annotate:label-claim", args=[project.slug, claim.pk])
        if claim
        else reverse("annotate:label-next", args=[project.slug]),
    )


class SkipForm(forms.Form):
    reason = forms.ChoiceField(
        choices=ClaimSkip.Reason.choices,
        error_messages={"required": "Say why you skip the claim."},
    )
    note = forms.CharField(required=False, max_length=2000)


@require_POST
@project_view(Role.ANALYST)
def label_claim_skip(request, project, membership, claim_id: int):
    form = SkipForm(request.POST)
    try:
        if not form.is_valid():
            raise QueueError(next(iter(form.errors.values()))[0])
        skip = claim_skip(
            project=project,
            user=request.user,
            claim_id=claim_id,
            reason=form.cleaned_data["reason"],
            note=form.cleaned_data["note"],
        )
    except QueueError as error:
        claim = claim_get_for_project(project=project, claim_id=claim_id)
        return _screen(request, project, membership, claim, error=str(error))
    notice = (
        f"Skipped “{Truncator(skip.claim.text).chars(80)}” ({skip.get_reason_display()}): "
        "it is out of your queue and on the leads' list of skipped claims."
    )
    if not request.htmx:
        messages.success(request, notice)
        return redirect("annotate:label-next", slug=project.slug)
    claim, error = _next(request, project, membership)
    response = _screen(
        request, project, membership, claim, notice=notice, error=error, from_queue=True
    )
    return push_url(response, reverse("annotate:label-next", args=[project.slug]))


urlpatterns = [
    path("p/<slug:slug>/label/", label_next, name="label-next"),
    path("p/<slug:slug>/label/<int:claim_id>/skip/", label_claim_skip, name="label-skip"),
    path("p/<slug:slug>/label/undo/", label_last_undo, name="label-undo"),
    path("p/<slug:slug>/label/<int:claim_id>/", label_claim, name="label-claim"),
    path("p/<slug:slug>/label/<int:claim_id>/save/", label_claim_save, name="label-save"),
    path(
        "p/<slug:slug>/label/<int:claim_id>/following/",
        label_claim_following,
        name="label-following",
    ),
]
