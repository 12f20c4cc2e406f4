"""Human review of a test set, its publication and its card (issue 27, item 3).

A reviewer (analyst or lead) accepts an item, edits it (question, answer, quotes: every quote
re-verified against its passage with annotate/quotes.py, so a quote that is not verbatim is
refused and nothing is written) or rejects it with a reason. A lead publishes a draft: its
version is frozen, and only its accepted items are the questions a run asks
(testsets/services/sut.py `sut_run_start`). Any change to a published set raises
`SetFrozen`; "new version" copies it into a draft of version + 1.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from annotate.models import RiskCategory
from annotate.quotes import QuoteError, quote_locate, quote_verify
from testsets.models import DocumentPassage, GenerationDrop, ItemQuote, TestItem, TestSet

MAX_QUOTES = 10


class ReviewError(ValueError):
    """A review the item cannot take; the message says what to change."""


class SetFrozen(ReviewError):
    """The test set is published: its version is frozen."""


@dataclass(frozen=True)
class QuoteInput:
    """A quote as a reviewer sent it: the passage's id and the quoted text (its place is
    found in the passage), or with `start`/`end` (code points) when the screen knows them."""

    passage_id: int | None
    text: str
    start: int | None = None
    end: int | None = None


def draft_check(test_set: TestSet) -> None:
    if test_set.status == TestSet.Status.PUBLISHED:
        raise SetFrozen(
            f"{test_set} is published, so it is frozen: make a new version to change it."
        )


def _locked(item: TestItem) -> TestItem:
    """The item under its row lock, with its test set re-read (it may have been published
    since the page was drawn)."""
    locked = TestItem.objects.select_for_update().select_related("test_set").get(pk=item.pk)
    draft_check(TestSet.objects.get(pk=locked.test_set_id))
    return locked


def _reviewed(item: TestItem, user, status: str) -> None:
    item.status = status
    item.reviewed_by = user
    item.reviewed_at = timezone.now()


@transaction.atomic
def item_accept(*, item: TestItem, user) -> TestItem:
    item = _locked(item)
    _reviewed(item, user, TestItem.Status.ACCEPTED)
    item.reject_reason = ""
    item.save(update_fields=["status", "reviewed_by", "reviewed_at", "reject_reason"])
    return item


@transaction.atomic
def item_reject(*, item: TestItem, user, reason: str) -> TestItem:
    reason = reason.strip()
    if not reason:
        raise ReviewError("Give the reason for rejecting this item: it is kept on its card.")
    item = _locked(item)
    _reviewed(item, user, TestItem.Status.REJECTED)
    item.reject_reason = reason[:2000]
    item.save(update_fields=["status", "reviewed_by", "reviewed_at", "reject_reason"])
    return item


def quotes_check(
    *, project_id: int, quotes: list[QuoteInput], document_id: int | None = None
) -> list[ItemQuote]:
    """Every quote found verbatim in its passage (a passage of this project's knowledge base),
    as unsaved ItemQuote rows; ReviewError naming the quote and what is wrong otherwise. A
    quote sent without its passage is looked for in the passages of `document_id` (the
    item's document), as an analyst's typed quote is looked for in the pile."""
    quotes = [q for q in quotes if q.text.strip() or q.passage_id is not None]
    if not quotes:
        raise ReviewError("Keep at least one supporting quote: an item needs its evidence.")
    if len(quotes) > MAX_QUOTES:
        raise ReviewError(f"At most {MAX_QUOTES} quotes per item ({len(quotes)} sent).")
    ids = {q.passage_id for q in quotes if q.passage_id is not None}
    passages = DocumentPassage.objects.filter(
        pk__in=ids, document__project_id=project_id
    ).select_related("document")
    by_id = {p.pk: p for p in passages}
    rows = []
    for number, quote in enumerate(quotes, start=1):
        passage = by_id.get(quote.passage_id)
        if passage is None and quote.passage_id is None and document_id and quote.text.strip():
            passage = _passage_holding(document_id, quote.text.strip())
        if passage is None:
            raise ReviewError(
                f"Quote {number}: choose the passage it comes from"
                + (
                    ": no passage of the item's document holds it."
                    if quote.passage_id is None and document_id
                    else "."
                )
            )
        text = quote.text.strip()
        where = f"passage #{passage.position} of {passage.document}"
        if not text:
            raise ReviewError(f"Quote {number}: the quoted text is empty.")
        try:
            if quote.start is not None and quote.end is not None:
                quote_verify(passage_text=passage.text, start=quote.start, end=quote.end,
                             quote=text)  # fmt: skip
                span = (quote.start, quote.end)
            else:
                span = quote_locate(passage_text=passage.text, quote=text)
        except QuoteError as exc:
            raise ReviewError(f"Quote {number} ({where}): {exc}") from None
        if span is None:
            raise ReviewError(
                f"Quote {number} is not found verbatim in {where}: copy the sentence exactly "
                f"as the passage says it ({_shown(text)} is not in it). Nothing was saved."
            )
        rows.append(ItemQuote(passage=passage, start=span[0], end=span[1], text=text))
    return rows


def _passage_holding(document_id: int, text: str) -> DocumentPassage | None:
    candidates = DocumentPassage.objects.filter(document_id=document_id).select_related("document")
    return next(
        (p for p in candidates if quote_locate(passage_text=p.text, quote=text) is not None), None
    )


def _shown(text: str) -> str:
    return repr(text if len(text) <= 80 else text[:77] + "…")


@transaction.atomic
def item_edit(
    *, item: TestItem, user, question: str, answer: str, quotes: list[QuoteInput]
) -> TestItem:
    """Replace the item's question, answer and quotes, then accept it as edited. Every check
    runs before the first write: a refused edit leaves the item as it was."""
    question, answer = question.strip(), answer.strip()
    if not question:
        raise ReviewError("The question is empty: write the question the system will be asked.")
    if not answer:
        raise ReviewError("The ground-truth answer is empty: write what the quotes support.")
    item = _locked(item)
    rows = quotes_check(
        project_id=item.test_set.project_id, quotes=quotes, document_id=item.document_id
    )
    item.quotes.all().delete()
    for row in rows:
        row.item = item
    ItemQuote.objects.bulk_create(rows)
    item.question, item.answer, item.edited = question, answer, True
    _reviewed(item, user, TestItem.Status.ACCEPTED)
    item.reject_reason = ""
    item.save(
        update_fields=[
            "question", "answer", "edited", "status", "reviewed_by", "reviewed_at",
            "reject_reason",
        ]
    )  # fmt: skip
    return item


@transaction.atomic
def set_publish(*, test_set: TestSet, user) -> TestSet:
    """Freeze the draft. Items still pending or rejected stay in it but out of every run."""
    test_set = TestSet.objects.select_for_update().get(pk=test_set.pk)
    draft_check(test_set)
    # Wait for the reviews in flight (each holds its item's lock, `_locked`); a review that
    # starts now waits for this commit and then finds the set published.
    list(test_set.items.select_for_update().values_list("pk", flat=True))
    if not test_set.items.filter(status=TestItem.Status.ACCEPTED).exists():
        raise ReviewError(f"{test_set} has no accepted item yet: accept at least one first.")
    test_set.status = TestSet.Status.PUBLISHED
    test_set.published_at = timezone.now()
    test_set.published_by = user
    test_set.save(update_fields=["status", "published_at", "published_by"])
    return test_set


def next_version(*, project_id: int, name: str) -> int:
    top = TestSet.objects.filter(project_id=project_id, name=name).aggregate(m=Max("version"))
    return (top["m"] or 0) + 1


@transaction.atomic
def set_new_version(*, test_set: TestSet) -> TestSet:
    """A draft copy of a published set as version + 1 (its items, their reviews and quotes,
    and its generation drops, so the new card starts from the same counts)."""
    if test_set.status != TestSet.Status.PUBLISHED:
        raise ReviewError(f"{test_set} is still a draft: edit it, no new version is needed.")
    copy = TestSet.objects.create(
        project_id=test_set.project_id,
        name=test_set.name,
        version=next_version(project_id=test_set.project_id, name=test_set.name),
        generator={**test_set.generator, "from_version": test_set.version},
    )
    for item in test_set.items.prefetch_related("quotes"):
        quotes = list(item.quotes.all())
        item.pk, item.test_set = None, copy
        item.save(force_insert=True)
        ItemQuote.objects.bulk_create(
            ItemQuote(item=item, passage_id=q.passage_id, start=q.start, end=q.end, text=q.text)
            for q in quotes
        )
    GenerationDrop.objects.bulk_create(
        GenerationDrop(
            test_set=copy, reason=d.reason, document_id=d.document_id, detail=d.detail, raw=d.raw
        )  # fmt: skip
        for d in test_set.drops.all()
    )
    return copy


def set_card(*, test_set: TestSet) -> dict:
    """What the set's card says: how many were generated, dropped by each check,
    deduplicated, kept, accepted (of them edited), rejected and pending; the spread over risk
    categories and documents; the generator. Plain data (the JSON export is this dict)."""
    items = list(
        test_set.items.values_list("status", "edited", "risk_category", "document__external_id")
    )
    drops = list(test_set.drops.values_list("reason", "document__external_id"))
    status = Counter(s for s, *_ in items)
    reasons = Counter(r for r, _ in drops)
    dropped = {
        reason.value: reasons.get(reason.value, 0)
        for reason in GenerationDrop.Reason
        if reason != GenerationDrop.Reason.DUPLICATE
    }
    risk = {c.value: Counter() for c in RiskCategory}
    for s, _edited, category, _doc in items:
        risk[category]["items"] += 1
        risk[category][s] += 1
    documents: dict[str, Counter] = {}
    for s, _edited, _category, doc in items:
        documents.setdefault(doc or "", Counter())["items"] += 1
        documents[doc or ""][s] += 1
    for _reason, doc in drops:
        documents.setdefault(doc or "", Counter())["dropped"] += 1
    return {
        "test_set": test_set.name,
        "version": test_set.version,
        "status": test_set.status,
        "published_at": test_set.published_at.isoformat() if test_set.published_at else None,
        "generator": test_set.generator,
        "counts": {
            "generated": len(items) + len(drops),
            "dropped": dropped,
            "deduplicated": reasons.get(GenerationDrop.Reason.DUPLICATE, 0),
            "kept": len(items),
            "accepted": status.get(TestItem.Status.ACCEPTED, 0),
            "edited": sum(1 for s, e, *_ in items if e and s == TestItem.Status.ACCEPTED),
            "rejected": status.get(TestItem.Status.REJECTED, 0),
            "pending": status.get(TestItem.Status.PENDING, 0),
        },
        "risk_categories": {k: _spread(v, SPREAD) for k, v in risk.items() if v["items"]},
        "documents": {k: _spread(v, (*SPREAD, "dropped")) for k, v in sorted(documents.items())},
    }


SPREAD = ("items", "accepted", "rejected", "pending")


def _spread(counter: Counter, keys: tuple) -> dict:
    return {key: counter.get(key, 0) for key in keys}


def set_card_markdown(card: dict) -> str:
    """The card as a Markdown page (what the JSON says, for a release note)."""
    counts = card["counts"]
    generator = card["generator"] or {}
    lines = [
        f"# Test set {card['test_set']} v{card['version']} ({card['status']})",
        "",
        f"Generator: {generator.get('kind') or 'unknown'}"
        + (f", endpoint {generator['endpoint']}" if generator.get("endpoint") else "")
        + (f", prompt {generator['prompt_version']}" if generator.get("prompt_version") else ""),
        "",
        "| step | items |",
        "|---|---:|",
        f"| generated | {counts['generated']} |",
        *(f"| dropped: {reason} | {n} |" for reason, n in counts["dropped"].items()),
        f"| deduplicated | {counts['deduplicated']} |",
        f"| kept for review | {counts['kept']} |",
        f"| accepted | {counts['accepted']} |",
        f"| of them edited | {counts['edited']} |",
        f"| rejected | {counts['rejected']} |",
        f"| pending | {counts['pending']} |",
        "",
        "| risk category | items | accepted |",
        "|---|---:|---:|",
        *(f"| {k} | {v['items']} | {v['accepted']} |" for k, v in card["risk_categories"].items()),
        "",
        "| document | items | accepted | dropped |",
        "|---|---:|---:|---:|",
        *(
            f"| {k or '(none)'} | {v['items']} | {v['accepted']} | {v['dropped']} |"
            for k, v in card["documents"].items()
        ),
    ]
    return "\n".join(lines) + "\n"
