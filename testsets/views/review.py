"""The test sets' pages: the list, a set's card (and its JSON/Markdown), the review queue
(one item at a time, keyboard first like the labelling screen), publish and new version,
export and import.

The review screen renders `testsets/review.html`; htmx requests get only its `#review`
partial, so accept/edit/reject-and-next is one request. Without JavaScript the forms post
normally and redirect to the next item.
"""

from __future__ import annotations

import io
import json

from django import forms
from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import path, reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import push_url

from annotate.access import project_view
from annotate.models import Role
from testsets.models import DocumentPassage, TestItem, TestSet
from testsets.rag_endpoints import REFERENCE
from testsets.services.interchange import (
    CONTENT_TYPES,
    FORMATS,
    SetImportError,
    set_export,
    set_import,
)
from testsets.services.review import (
    QuoteInput,
    ReviewError,
    item_accept,
    item_edit,
    item_reject,
    set_card,
    set_card_markdown,
    set_new_version,
    set_publish,
)
from testsets.views.runs import endpoint_choices

PASSAGE_CHOICES = 200


def testset_get(project, testset_id: int) -> TestSet:
    return get_object_or_404(TestSet, pk=testset_id, project=project)


def item_get(test_set: TestSet, item_id: int) -> TestItem:
    return get_object_or_404(TestItem, pk=item_id, test_set=test_set)


def _is_lead(membership) -> bool:
    return membership.role in (Role.LEAD, Role.OWNER)


@require_GET
@project_view(Role.ANALYST)
def testset_list(request, project, membership):
    sets = list(TestSet.objects.filter(project=project).order_by("name", "-version"))
    for test_set in sets:
        test_set.card = set_card(test_set=test_set)["counts"]
    context = {
        "project": project,
        "membership": membership,
        "test_sets": sets,
        "is_lead": _is_lead(membership),
        "reference": REFERENCE,
    }
    if context["is_lead"]:
        context["endpoints"], context["endpoints_error"] = endpoint_choices()
    return render(request, "testsets/index.html", context)


@require_GET
@project_view(Role.ANALYST)
def testset_detail(request, project, membership, testset_id: int):
    test_set = testset_get(project, testset_id)
    context = {
        "project": project,
        "membership": membership,
        "test_set": test_set,
        "card": set_card(test_set=test_set),
        "is_lead": _is_lead(membership),
        "formats": FORMATS,
        "rejected": test_set.items.filter(status=TestItem.Status.REJECTED)[:200],
    }
    return render(request, "testsets/detail.html", context)


@require_GET
@project_view(Role.ANALYST)
def testset_card_export(request, project, membership, testset_id: int):
    """The card as JSON (default) or Markdown (`?format=md`)."""
    test_set = testset_get(project, testset_id)
    card = set_card(test_set=test_set)
    stem = f"{test_set.name}-v{test_set.version}-card"
    if request.GET.get("format") == "md":
        response = HttpResponse(set_card_markdown(card), content_type="text/markdown")
        response["Content-Disposition"] = f'attachment; filename="{stem}.md"'
        return response
    response = HttpResponse(json.dumps(card, indent=2), content_type="application/json")
    response["Content-Disposition"] = f'attachment; filename="{stem}.json"'
    return response


@require_GET
@project_view(Role.LEAD)
def testset_export_view(request, project, membership, testset_id: int):
    test_set = testset_get(project, testset_id)
    fmt = request.GET.get("format", "jsonl")
    if fmt not in FORMATS:
        return HttpResponse(
            f"Unknown format {fmt[:40]!r}: use {', '.join(FORMATS)}.", status=400,
            content_type="text/plain",
        )  # fmt: skip
    out = io.StringIO()
    set_export(test_set=test_set, format=fmt, out=out)
    extension = "json" if fmt == "deepeval" else "jsonl"
    response = HttpResponse(out.getvalue(), content_type=CONTENT_TYPES[fmt])
    filename = f"{test_set.name}-v{test_set.version}-{fmt}.{extension}"
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


class ImportForm(forms.Form):
    name = forms.SlugField(max_length=80, help_text="The test set's name (letters, digits, -).")
    file = forms.FileField(help_text="A JSONL file exported from a test set (one item a line).")


@require_http_methods(["GET", "POST", "HEAD"])
@project_view(Role.LEAD)
def testset_import_view(request, project, membership):
    form = ImportForm(request.POST or None, request.FILES or None)
    errors, status = [], 200
    if request.method == "POST":
        if form.is_valid():
            upload = form.cleaned_data["file"]
            try:
                test_set = set_import(
                    project=project,
                    name=form.cleaned_data["name"],
                    data=upload.read(),
                    file_name=upload.name,
                )
            except SetImportError as exc:
                errors, status = exc.errors, 422
            else:
                messages.success(request, f"Imported {test_set} as a draft: review it.")
                return redirect("testsets:detail", project.slug, test_set.pk)
        else:
            status = 400
    context = {"project": project, "membership": membership, "form": form, "errors": errors}
    return render(request, "testsets/import.html", context, status=status)


@require_POST
@project_view(Role.LEAD)
def testset_publish_view(request, project, membership, testset_id: int):
    test_set = testset_get(project, testset_id)
    try:
        test_set = set_publish(test_set=test_set, user=request.user)
    except ReviewError as exc:
        messages.error(request, str(exc))
    else:
        left = test_set.items.exclude(status=TestItem.Status.ACCEPTED).count()
        note = f" {left} item(s) not accepted stay out of every run." if left else ""
        messages.success(request, f"Published {test_set}: it is frozen.{note}")
    return redirect("testsets:detail", project.slug, test_set.pk)


@require_POST
@project_view(Role.LEAD)
def testset_new_version_view(request, project, membership, testset_id: int):
    test_set = testset_get(project, testset_id)
    try:
        copy = set_new_version(test_set=test_set)
    except ReviewError as exc:
        messages.error(request, str(exc))
        return redirect("testsets:detail", project.slug, test_set.pk)
    messages.success(request, f"Made {copy}, a draft copy of {test_set}.")
    return redirect("testsets:detail", project.slug, copy.pk)


# The review screen.


def passage_segments(text: str, spans: list[tuple[int, int]]) -> list[tuple[str, bool]]:
    """`text` cut into (segment, quoted) pieces: overlapping spans are merged."""
    pieces, at = [], 0
    for start, end in sorted(spans):
        start = max(start, at)
        if end <= start:
            continue
        if start > at:
            pieces.append((text[at:start], False))
        pieces.append((text[start:end], True))
        at = end
    if at < len(text):
        pieces.append((text[at:], False))
    return pieces


def _pending_after(test_set: TestSet, item: TestItem | None) -> TestItem | None:
    """The next item awaiting review in the set's order, after `item` (wrapping round)."""
    pending = test_set.items.filter(status=TestItem.Status.PENDING).order_by("position", "id")
    if item is not None:
        later = pending.filter(position__gt=item.position) | pending.filter(
            position=item.position, id__gt=item.pk
        )
        found = later.order_by("position", "id").first()
        if found is not None:
            return found
    return pending.first()


def _neighbours(test_set: TestSet, item: TestItem) -> tuple:
    items = test_set.items.order_by("position", "id")
    before = items.filter(position__lt=item.position) | items.filter(
        position=item.position, id__lt=item.pk
    )
    after = items.filter(position__gt=item.position) | items.filter(
        position=item.position, id__gt=item.pk
    )
    return (
        before.order_by("-position", "-id").first(),
        after.order_by("position", "id").first(),
    )


def _edit_values(item: TestItem, data) -> dict:
    if data is not None:
        quotes = [
            {"passage": p, "text": t}
            for p, t in zip(data.getlist("quote_passage"), data.getlist("quote_text"), strict=False)
            if p.strip() or t.strip()  # the form's empty row comes back once, below
        ]
        return {"question": data.get("question", ""), "answer": data.get("answer", ""),
                "quotes": quotes}  # fmt: skip
    quotes = [{"passage": str(q.passage_id), "text": q.text} for q in item.quotes.all()]
    return {"question": item.question, "answer": item.answer, "quotes": quotes}


def _screen_context(test_set: TestSet, item: TestItem | None, data=None) -> dict:
    counts = set_card(test_set=test_set)["counts"]
    context = {"test_set": test_set, "item": item, "counts": counts}
    if item is None:
        return context
    quotes = list(item.quotes.select_related("passage__document"))
    by_passage: dict[int, list] = {}
    for quote in quotes:
        by_passage.setdefault(quote.passage_id, []).append((quote.start, quote.end))
    shown = {q.passage_id: q.passage for q in quotes}
    passages = [
        {"passage": p, "segments": passage_segments(p.text, by_passage[p.pk])}
        for p in shown.values()
    ]
    choices = dict(shown)
    if item.document_id:
        for p in DocumentPassage.objects.filter(document_id=item.document_id)[:PASSAGE_CHOICES]:
            choices.setdefault(p.pk, p)
    values = _edit_values(item, data)
    values["quotes"].append({"passage": "", "text": ""})  # a row to add a quote
    previous, following = _neighbours(test_set, item)
    context.update(
        quotes=quotes,
        passages=passages,
        passage_choices=sorted(choices.values(), key=lambda p: (p.document_id, p.position)),
        values=values,
        previous=previous,
        following=following,
        frozen=test_set.status == TestSet.Status.PUBLISHED,
        editing=data is not None,
    )
    return context


def _screen(request, project, membership, test_set, item, *, data=None, error="", notice="",
            status=200):  # fmt: skip
    context = {
        "project": project,
        "membership": membership,
        **_screen_context(test_set, item, data),
        "error": error,
        "notice": notice,
    }
    template = "testsets/review.html#review" if request.htmx else "testsets/review.html"
    response = render(request, template, context, status=status)
    if request.htmx and item is not None:
        push_url(response, reverse("testsets:review-item", args=[project.slug, test_set.pk,
                                                                 item.pk]))  # fmt: skip
    return response


@require_GET
@project_view(Role.ANALYST)
def review_next(request, project, membership, testset_id: int):
    test_set = testset_get(project, testset_id)
    return _screen(request, project, membership, test_set, _pending_after(test_set, None))


@require_GET
@project_view(Role.ANALYST)
def review_item(request, project, membership, testset_id: int, item_id: int):
    test_set = testset_get(project, testset_id)
    return _screen(request, project, membership, test_set, item_get(test_set, item_id))


def _after_review(request, project, membership, test_set, item, done: str):
    following = _pending_after(test_set, item)
    if not request.htmx:
        messages.success(request, done)
        if following is None:
            return redirect("testsets:review", project.slug, test_set.pk)
        return redirect("testsets:review-item", project.slug, test_set.pk, following.pk)
    return _screen(request, project, membership, test_set, following, notice=done)


def _refused(request, project, membership, test_set, item, error: str, data=None):
    status = 200 if request.htmx else 422
    return _screen(request, project, membership, test_set, item, data=data, error=error,
                   status=status)  # fmt: skip


@require_POST
@project_view(Role.ANALYST)
def review_accept(request, project, membership, testset_id: int, item_id: int):
    test_set = testset_get(project, testset_id)
    item = item_get(test_set, item_id)
    try:
        item_accept(item=item, user=request.user)
    except ReviewError as exc:
        return _refused(request, project, membership, test_set, item, str(exc))
    return _after_review(request, project, membership, test_set, item, f"Accepted {item}.")


@require_POST
@project_view(Role.ANALYST)
def review_reject(request, project, membership, testset_id: int, item_id: int):
    test_set = testset_get(project, testset_id)
    item = item_get(test_set, item_id)
    try:
        item_reject(item=item, user=request.user, reason=request.POST.get("reason", ""))
    except ReviewError as exc:
        return _refused(request, project, membership, test_set, item, str(exc))
    return _after_review(request, project, membership, test_set, item, f"Rejected {item}.")


def _quotes_sent(data) -> list[QuoteInput]:
    quotes = []
    for number, (passage, text) in enumerate(
        zip(data.getlist("quote_passage"), data.getlist("quote_text"), strict=False), start=1
    ):
        passage = passage.strip()
        if not passage and not text.strip():
            continue  # the empty row for a new quote
        if passage and not (passage.isascii() and passage.isdigit() and len(passage) < 19):
            raise ReviewError(f"Quote {number}: the passage must be chosen from the list.")
        quotes.append(QuoteInput(passage_id=int(passage) if passage else None, text=text))
    return quotes


@require_POST
@project_view(Role.ANALYST)
def review_edit(request, project, membership, testset_id: int, item_id: int):
    test_set = testset_get(project, testset_id)
    item = item_get(test_set, item_id)
    try:
        item_edit(
            item=item,
            user=request.user,
            question=request.POST.get("question", ""),
            answer=request.POST.get("answer", ""),
            quotes=_quotes_sent(request.POST),
        )
    except ReviewError as exc:
        return _refused(request, project, membership, test_set, item, str(exc), request.POST)
    return _after_review(
        request, project, membership, test_set, item, f"Saved your edit of {item} and accepted it."
    )


ITEM = "p/<slug:slug>/testsets/<int:testset_id>/review/<int:item_id>/"
urlpatterns = [
    path("p/<slug:slug>/testsets/", testset_list, name="index"),
    path("p/<slug:slug>/testsets/import/", testset_import_view, name="import"),
    path("p/<slug:slug>/testsets/<int:testset_id>/", testset_detail, name="detail"),
    path("p/<slug:slug>/testsets/<int:testset_id>/card/", testset_card_export, name="card"),
    path("p/<slug:slug>/testsets/<int:testset_id>/export/", testset_export_view, name="export"),
    path(
        "p/<slug:slug>/testsets/<int:testset_id>/publish/", testset_publish_view, name="publish"
    ),  # fmt: skip
    path(
        "p/<slug:slug>/testsets/<int:testset_id>/new-version/",
        testset_new_version_view,
        name="new-version",
    ),  # fmt: skip
    path("p/<slug:slug>/testsets/<int:testset_id>/review/", review_next, name="review"),
    path(ITEM, review_item, name="review-item"),
    path(ITEM + "accept/", review_accept, name="item-accept"),
    path(ITEM + "edit/", review_edit, name="item-edit"),
    path(ITEM + "reject/", review_reject, name="item-reject"),
]
