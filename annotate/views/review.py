"""Adjudication, facts and the contradictions page."""

import io

from django import forms
from django.contrib import messages
from django.core.paginator import Paginator
from django.db.models import Prefetch
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import path
from django.utils.http import content_disposition_header
from django.utils.text import slugify
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotate.access import project_view
from annotate.csv_safe import NeutralCsvWriter
from annotate.models import Claim, ClaimComment, EvidenceSpan, Fact, Label, Passage, Role, Verdict
from annotate.quotes import QuoteError, quote_locate, utf16_to_codepoint_offset
from annotate.selectors import answer_get_for_project, claim_get_for_project, pile_page_get
from annotate.services.review import (
    Marked,
    ReviewError,
    adjudication_claims,
    contradiction_rows,
    fact_add,
    fact_delete,
    gold_adjudicate,
    passage_line,
    text_marked,
    text_segments,
)

# ---------------------------------------------------------------------------------------------
# Adjudication


class AdjudicateForm(forms.Form):
    verdict = forms.ChoiceField(choices=Verdict.choices, widget=forms.RadioSelect)
    reason = forms.CharField(
        max_length=5000,
        error_messages={"required": "Give the reason for the gold verdict."},
    )


def _labels_prefetch() -> Prefetch:
    return Prefetch(
        "labels",
        queryset=Label.objects.select_related("annotator", "imported_annotator", "evidence_passage")
        .prefetch_related(
            Prefetch("more_spans", queryset=EvidenceSpan.objects.select_related("passage"))
        )
        .order_by("annotator__username", "imported_annotator__name"),
        to_attr="review_labels",
    )


def _spans_marked(label) -> list[dict]:
    """Each span of the label's quote (the first, then `more_spans`) marked in its passage: its
    number, passage, line and whole passage (both cut `_around` the mark)."""
    spans = [(1, label.evidence_passage, label.evidence_start, label.evidence_end)]
    spans += [(s.number, s.passage, s.start, s.end) for s in label.more_spans.all()]
    return [
        {
            "number": number,
            "passage": passage,
            "line": _around(passage_line(passage.text, start, end)),
            "full": _around(text_marked(passage.text, start, end)),
        }
        for number, passage, start, end in spans
        if passage is not None
    ]


# A card shows this much of an answer or passage on each side of what it marks (20 cards a
# page: a 50,000-character answer would otherwise be read 20 times); the answer page has all.
CARD_CONTEXT_CHARS = 1000


def _around(marked: Marked, chars: int = CARD_CONTEXT_CHARS) -> Marked:
    """`marked` cut to `chars` on each side of its mark (the start, when nothing is marked)."""
    before, mark, after = marked.before, marked.mark, marked.after
    if not mark and not after:
        return Marked(before[: 2 * chars] + ("…" if len(before) > 2 * chars else ""), "", "")
    if len(before) > chars:
        before = "…" + before[-chars:]
    if len(mark) > 4 * chars:
        mark = f"{mark[: 2 * chars]} … {mark[-2 * chars :]}"
    if len(after) > chars:
        after = after[:chars] + "…"
    return Marked(before, mark, after)


def _card(claim, form=None, decided=None) -> dict:
    """Everything a lead needs side by side: the claim, its sentence in the answer, and each
    analyst's verdict, note and quote marked in its passage."""
    labels = []
    # The analysts' verdicts when the claim was revealed to them: what a changed label was.
    revealed = {reveal.user_id: reveal.verdict for reveal in claim.reveals.all()}
    for label in claim.review_labels:
        passage = label.evidence_passage
        labels.append(
            {
                "label": label,
                "revealed_verdict": revealed.get(label.annotator_id)
                if label.changed_after_reveal
                else None,
                "line": _around(
                    passage_line(passage.text, label.evidence_start, label.evidence_end)
                )
                if passage
                else None,
                "passage": passage,
                "full": _around(text_marked(passage.text, label.evidence_start, label.evidence_end))
                if passage
                else None,
                "spans": _spans_marked(label),
            }
        )
    gold = claim.gold if hasattr(claim, "gold") else None
    return {
        "claim": claim,
        "said": _around(text_marked(claim.answer.text, claim.span_start, claim.span_end)),
        "labels": labels,
        "gold": decided or gold,
        "form": form or AdjudicateForm(),
        "decided": decided is not None,
        # the claim's comment thread, all of it (leads), from the prefetch
        "thread": {"comments": list(claim.comments.all()), "waiting": 0},
    }


_COMMENTS = Prefetch("comments", queryset=ClaimComment.objects.select_related("author"))


@require_GET
@project_view(Role.LEAD)
def adjudicate(request, project, membership):
    claims = adjudication_claims(project=project).prefetch_related(
        _labels_prefetch(), "reveals", _COMMENTS
    )
    page = Paginator(claims.select_related("gold"), 20).get_page(request.GET.get("page"))
    context = {
        "project": project,
        "membership": membership,
        "page": page,
        "cards": [_card(claim) for claim in page],
    }
    return render(request, "annotate/adjudicate.html", context)


@require_http_methods(["GET", "POST"])
@project_view(Role.LEAD)
def adjudicate_claim(request, project, membership, claim_id: int):
    claim = claim_get_for_project(project=project, claim_id=claim_id)
    claim = (
        Claim.objects.select_related("answer")
        .prefetch_related(_labels_prefetch(), "reveals", _COMMENTS)
        .get(pk=claim.pk)
    )
    form, decided, status = None, None, 200
    if request.method == "POST":
        form = AdjudicateForm(request.POST)
        try:
            if form.is_valid():
                decided = gold_adjudicate(user=request.user, claim=claim, **form.cleaned_data)
        except ReviewError as error:
            form.add_error(None, str(error))
        if decided is None:
            status = 200 if request.htmx else 422
        elif not request.htmx:
            messages.success(request, f"Gold for claim “{claim.text[:60]}”: {decided.verdict}.")
            following = adjudication_claims(project=project).exclude(pk=claim.pk).first()
            if following:
                return redirect("annotate:adjudicate-claim", project.slug, following.pk)
            return redirect("annotate:adjudicate", project.slug)
    context = {"project": project, "membership": membership, "card": _card(claim, form, decided)}
    if request.htmx and decided is not None:  # the list's "N waiting" follows the decision
        context["waiting_oob"] = adjudication_claims(project=project).count()
    template = "annotate/adjudicate.html#card" if request.htmx else "annotate/adjudicate.html"
    return render(request, template, context, status=status)


# ---------------------------------------------------------------------------------------------
# Facts


class FactForm(forms.Form):
    passage = forms.IntegerField()
    quote = forms.CharField(strip=False, max_length=20000)
    start_utf16 = forms.IntegerField(required=False, min_value=0)
    end_utf16 = forms.IntegerField(required=False, min_value=0)


def _facts_context(project, membership, answer, *, pile=None, passage=None, **extra) -> dict:
    """`pile`: the page of the pile asked for; `passage`: the one just marked (its page)."""
    facts = list(answer.facts.select_related("created_by").order_by("passage__rank", "start"))
    pile_context = pile_page_get(answer=answer, page=pile, chosen_passage_id=passage)
    passages = []
    for passage in pile_context["passages"]:
        mine = [(f.start, f.end, f) for f in facts if f.passage_id == passage.pk]
        passages.append({"passage": passage, "segments": text_segments(passage.text, mine)})
    return {
        "project": project,
        "membership": membership,
        "answer": answer,
        "facts": facts,
        "passages": passages,
        "pile_page": pile_context["pile_page"],
        "is_lead": membership.has_role(Role.LEAD),
        **extra,
    }


def _facts_respond(request, project, membership, answer, *, error="", notice=""):
    if request.htmx:
        context = _facts_context(
            project,
            membership,
            answer,
            pile=request.GET.get("pile"),
            passage=request.POST.get("passage"),
            error=error,
            notice=notice,
        )
        return render(request, "annotate/facts.html#facts", context)
    if error:
        messages.error(request, error)
    elif notice:
        messages.success(request, notice)
    return redirect("annotate:facts", project.slug, answer.pk)


@require_GET
@project_view(Role.ANALYST)
def facts(request, project, membership, answer_id: int):
    answer = answer_get_for_project(project=project, answer_id=answer_id)
    context = _facts_context(project, membership, answer, pile=request.GET.get("pile"))
    return render(request, "annotate/facts.html", context)


def _fact_span(passage: Passage, data: dict) -> tuple[int, int]:
    """Code-point span of the fact: from the browser's UTF-16 selection, else by the quote."""
    if data["start_utf16"] is not None and data["end_utf16"] is not None:
        try:
            return (
                utf16_to_codepoint_offset(passage.text, data["start_utf16"]),
                utf16_to_codepoint_offset(passage.text, data["end_utf16"]),
            )
        except QuoteError as error:
            raise ReviewError(str(error)) from error
    span = quote_locate(passage_text=passage.text, quote=data["quote"])
    if span is None:
        raise ReviewError(f"Passage #{passage.rank} does not contain {data['quote']!r}.")
    return span


@require_POST
@project_view(Role.ANALYST)
def fact_add_view(request, project, membership, answer_id: int):
    answer = answer_get_for_project(project=project, answer_id=answer_id)
    form = FactForm(request.POST)
    if not form.is_valid():
        return _facts_respond(
            request, project, membership, answer, error="Select the fact's text in a passage."
        )
    passage = answer.passages.filter(pk=form.cleaned_data["passage"]).first()
    try:
        if passage is None:
            raise ReviewError("That passage is not in this answer's pile.")
        start, end = _fact_span(passage, form.cleaned_data)
        fact = fact_add(
            passage=passage,
            start=start,
            end=end,
            quote=form.cleaned_data["quote"],
            user=request.user,
        )
    except ReviewError as error:
        return _facts_respond(request, project, membership, answer, error=str(error))
    notice = f"Fact marked in passage #{passage.rank}: “{fact.text[:80]}”."
    return _facts_respond(request, project, membership, answer, notice=notice)


@require_POST
@project_view(Role.ANALYST)
def fact_delete_view(request, project, membership, fact_id: int):
    fact = Fact.objects.select_related("answer").filter(answer__project=project, pk=fact_id).first()
    if fact is None:
        raise Http404("No such fact.")
    answer = fact.answer
    try:
        fact_delete(fact=fact, user=request.user)
    except ReviewError as error:
        return _facts_respond(request, project, membership, answer, error=str(error))
    return _facts_respond(request, project, membership, answer, notice="Fact deleted.")


# ---------------------------------------------------------------------------------------------
# Contradictions


CONTRADICTION_FIELDS = [
    "answer_id",
    "question",
    "claim",
    "answer_says",
    "passage_rank",
    "passage_source",
    "passage_says",
    "quote",
    "gold",
    "analyst",
]


def _contradictions_table(rows) -> list[dict]:
    table = []
    for row in rows:
        claim = row.claim
        lines = row.quotes or [(None, None, None, "")]
        for label, line, passage, quote in lines:
            table.append(
                {
                    "answer_id": claim.answer.external_id,
                    "question": claim.answer.question,
                    "claim": claim.text,
                    "answer_says": row.said,
                    "passage_rank": passage.rank if passage else "",
                    "passage_source": (passage.source_id or passage.title) if passage else "",
                    "passage_says": f"{line.before}{line.mark}{line.after}".strip() if line else "",
                    "quote": quote,
                    "gold": row.gold or "(no gold yet)",
                    "analyst": label.annotator_name if label else "",
                }
            )
    return table


def _markdown(project, table) -> str:
    parts = [f"# Contradictions in {project.name}\n"]
    for item in table:
        where = f"passage #{item['passage_rank']}"
        if item["passage_source"]:
            where += f" ({item['passage_source']})"
        parts.append(
            f"## Answer {item['answer_id']}: {item['question']}\n\n"
            f"- **The answer says:** “{item['answer_says']}”\n"
            f"- **The {where} says:** “{item['passage_says'] or '(no quote)'}”\n"
            f"- Gold: {item['gold']}; marked by {item['analyst'] or '—'}\n"
        )
    return "\n".join(parts)


@require_GET
@project_view(Role.LEAD)
def contradictions(request, project, membership):
    rows = contradiction_rows(project=project)
    wanted = request.GET.get("format")
    if wanted in ("csv", "md"):
        table = _contradictions_table(rows)
        if wanted == "md":
            response = HttpResponse(_markdown(project, table), content_type="text/markdown")
        else:
            buffer = io.StringIO()
            writer = NeutralCsvWriter(buffer)
            writer.writerow(CONTRADICTION_FIELDS)
            writer.writerows([item[field] for field in CONTRADICTION_FIELDS] for item in table)
            response = HttpResponse(buffer.getvalue(), content_type="text/csv")
        filename = f"{slugify(project.slug)}-contradictions.{wanted}"
        response["Content-Disposition"] = content_disposition_header(True, filename)
        return response
    context = {"project": project, "membership": membership, "rows": rows}
    return render(request, "annotate/contradictions.html", context)


urlpatterns = [
    path("p/<slug:slug>/adjudicate/", adjudicate, name="adjudicate"),
    path("p/<slug:slug>/adjudicate/<int:claim_id>/", adjudicate_claim, name="adjudicate-claim"),
    path("p/<slug:slug>/answers/<int:answer_id>/facts/", facts, name="facts"),
    path("p/<slug:slug>/answers/<int:answer_id>/facts/add/", fact_add_view, name="fact-add"),
    path("p/<slug:slug>/facts/<int:fact_id>/delete/", fact_delete_view, name="fact-delete"),
    path("p/<slug:slug>/contradictions/", contradictions, name="contradictions"),
]
